"""Suite-wide: the cold-start line ("compiling kernels ... (first run only)...") is printed once per
process by whichever test first compiles for more than a second, so with an empty numba cache it
would land in the stderr of an arbitrary CLI test that asserts exact output. Silence it for the
suite; tests/perf/test_cold_start.py checks the line on notice objects of its own."""
from emu.jit import notice

notice.quiet()
