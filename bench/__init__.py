"""Benchmarks of emu against the CPU and other emulators: `python -m bench` (see bench/run.py)."""
