"""Bring your own model: `python -m bench --workload examples.byom.tiny_models:factory`."""
