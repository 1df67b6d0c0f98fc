"""Examples that run from the repository root."""
