"""Benchmark engine: measures workloads x modes x backends into JSON Lines records.

Imports torch and the standard library only, so it runs on bare GPU boxes.
"""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent  # the checkout: git metadata, caches, cwd of children
