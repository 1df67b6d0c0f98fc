"""Varying shapes as a service sees them: shape streams (`streams`), the strategies that
meet them (`strategies`), and one fresh process's pass over a stream (`measure`, which
alone imports torch). `streams` and `strategies` are the standard library alone, so the
mode table, the records and the report can read them without torch."""
