"""Releases: A/B groups and their A/A floor, `python -m report compare`, history, the next release."""
