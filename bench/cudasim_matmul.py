"""A tiled shared-memory matmul for numba's CUDA target, run on its simulator
(NUMBA_ENABLE_CUDASIM=1, set by the caller before numba is imported): C = A x B for f32 square
matrices, 16 x 16 tiles in shared memory, one thread per element of C; the kernel of numba's own
documentation ("fast_matmul"), with the same structure as bench/shaders/matmul_tiled.wgsl."""
import numpy as np
from numba import cuda, float32

TPB = 16


@cuda.jit
def fast_matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = float32(0.)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


def run(n: int, rng=None):
    """One C = A x B of n x n f32 matrices on the simulator; returns (C, A, B)."""
    rng = rng or np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c = np.zeros((n, n), np.float32)
    blocks = (n + TPB - 1) // TPB
    fast_matmul[(blocks, blocks), (TPB, TPB)](a, b, c)
    return c, a, b
