"""Fuzzing harness: mutation of shaders, IR text, .npy files and traces (see run.py)."""
