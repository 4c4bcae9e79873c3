"""Benchmarks: each module prints numbers (``python -m benchmarks.<name>``)."""
