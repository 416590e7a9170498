"""The packed parameter vector of the MMA kernels (its layout and codes) and which kernel covers
a rule, without numba: the code that packs a rule (emu.numerics.mma) and chooses a kernel runs
before, or without, any compiled kernel (emu/jit/native.py loads those without numba)."""
from __future__ import annotations

import numpy as np

ZERO, FINITE, INF, NAN = 0, 1, 2, 3
K_EXACT, K_IEEE, K_LAVAPIPE, K_FUSED = 0, 1, 2, 3
R_RNE, R_RZ, R_RD, R_RU = 0, 1, 2, 3

# parameter vector layout (packed by mma._pack)
P_KIND = 0
P_IN_EB, P_IN_FB, P_IN_KEEP = 1, 2, 3        # input format; fraction bits kept (tf32: 10)
P_C_EB, P_C_FB = 4, 5                        # C's format
P_ACC_EB, P_ACC_FB = 6, 7                    # result format
P_L, P_F, P_TERM = 8, 9, 10                  # fused: block, fraction bits, term cut (R_RZ/R_RD)
P_C_OUT, P_F2, P_FC = 11, 12, 13             # fused: C outside, its F2 / FC
P_CARRY, P_FINAL, P_OVF_INF = 14, 15, 16     # fused: carry between blocks, final rounding, overflow
P_FLUSH_IN, P_FLUSH_OUT, P_NAN = 17, 18, 19
P_RECUT = 20                                 # fused, C outside: how sum and C are re-cut
P_ZERO_POS = 21                              # zero results are +0 (applied after the kernels)
P_IN_FN = 22                                 # input format has no infinities (OCP e4m3)
P_EZERO_ON, P_EZERO = 23, 24                 # fused, C inside: zeros align with this exponent
P_RES_FB = 25                                # fused: fraction bits the result keeps (<= P_ACC_FB)
P_PROD_OVF = 26                              # fused: a product beyond the result's range is infinite
P_INB_EB, P_INB_FB, P_INB_FN = 27, 28, 29    # B's format (= A's but for e4m3 x e5m2)
NPRM = 30

_V = 16                 # Hopper's block and tile size (mma_tile, mma_fast's 32-bit row path)


def plain(prm) -> bool:
    """Whether the rule uses none of what only mma_kernels implements: 8-bit operands, a result
    narrower than its type, products that overflow alone. (Zeros aligning at P_EZERO the fast
    paths hand back to it: an element whose nonzero addends all lie below P_EZERO.)"""
    return (int(prm[P_IN_EB] + prm[P_IN_FB]) > 7 and int(prm[P_RES_FB]) == int(prm[P_ACC_FB])
            and not int(prm[P_PROD_OVF]))


def covers(prm, M: int, N: int, K: int) -> bool:
    """Whether tile16 can answer a multiply of these sizes under the packed rule `prm`: the fused
    model with 16-term blocks over a K of 16, 16-bit operands, f32 or f16 C and result (both the
    same), products that fit the 32-bit lanes (use32)."""
    return (M == N == K == _V and int(prm[P_KIND]) == K_FUSED and int(prm[P_L]) == _V and plain(prm)
            and use32(prm) and int(prm[P_C_OUT]) == 0 and int(prm[P_CARRY]) == 0
            and int(prm[P_TERM]) == R_RZ and int(prm[P_FINAL]) in (R_RZ, R_RNE)
            and int(prm[P_IN_EB] + prm[P_IN_FB]) == 15 and int(prm[P_FLUSH_OUT]) == 0
            and (int(prm[P_C_EB]), int(prm[P_C_FB]), int(prm[P_ACC_EB]), int(prm[P_ACC_FB])) in _C_FORMATS)


# C's and the result's formats (exponent bits, fraction bits, twice): f32 or f16 (tile16 takes C
# and D as raw bits of that width, uint32 or uint16)
_C_FORMATS = frozenset({(8, 23, 8, 23), (5, 10, 5, 10)})


def use32(prm) -> bool:
    """Whether the fused block sums fit 32-bit lanes: products of (ifb + 1)-bit significands
    pre-shifted by F - 2 ifb, L of them (the C term is added in int64 afterwards)."""
    if int(prm[P_KIND]) != K_FUSED:
        return False
    ifb, F, L = int(prm[P_IN_FB]), int(prm[P_F]), max(1, int(prm[P_L]))
    pre = F - 2 * ifb
    if pre < 0 or 2 * (ifb + 1) + pre > 31:
        return False
    return L * (((1 << (ifb + 1)) - 1) ** 2 << pre) < (1 << 31)


def applies(prm: np.ndarray) -> bool:
    """Whether mma_fast's kernel covers this packed rule (else use mma_kernels)."""
    kind = int(prm[P_KIND])
    if not plain(prm):
        return False
    if kind == K_EXACT:
        return True
    return (kind == K_FUSED and int(prm[P_C_OUT]) == 0 and int(prm[P_CARRY]) == 0
            and int(prm[P_TERM]) == R_RZ)


def only32(prm, M: int, N: int, Kd: int) -> bool:
    """Whether the 32-bit row path is all a multiply of these sizes needs (then `wide` None)."""
    return use32(prm) and N == _V and max(1, min(int(prm[P_L]), Kd)) == _V
