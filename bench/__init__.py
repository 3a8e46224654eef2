"""Performance benchmarks: run as `python -m bench.NAME` from the repository root (not part of the test run)."""
