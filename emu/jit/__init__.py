"""Compiled fast paths of the executor (numba): fused MMA over fragments, and the fusion JIT that
turns an entry point's plain scalar IR into one lane loop. Every path here must give the same bits
as the interpreter in emu.scheduler and the kernels in emu.numerics; tests/perf checks that."""
