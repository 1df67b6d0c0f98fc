"""Turn benchmark records (results/**/*.jsonl) into the MkDocs site under docs/.

Never imports torch or bench: the results files are the only boundary.
"""
