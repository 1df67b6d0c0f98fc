"""Benchmark engine: measures workloads x modes x backends into JSON Lines records.

Imports torch and the standard library only, so it runs on bare GPU boxes.
"""
