"""Turn benchmark records (results/**/*.jsonl) into the MkDocs site under docs/.

Never imports torch. It reads records through bench's own definitions of them (bench.records,
bench.coldstart.records, bench.modes, bench.host.model: standard library only), so a record has
one definition; the results files are the data boundary.
"""
