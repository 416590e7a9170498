"""Example kernels that `emu demo` runs (package data)."""
