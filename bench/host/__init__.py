"""The host: its probe, the host model fitted on it, `python -m bench host`, and the slowed-host test."""
