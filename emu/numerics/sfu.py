"""NVIDIA's special function unit (MUFU) as measured on an H200, and the instruction sequences the
driver emits around it for WGSL builtins.

    ex2(x), rcp(x), rsq(x)            MUFU.EX2 / MUFU.RCP / MUFU.RSQ (flush-to-zero forms), f32 bits

Each unit is a rule plus one measured table over its reduced argument:
* EX2: the input is turned into fixed point with 23 fraction bits, truncating |x| (a negative
  input with a fraction takes the one's complement of the fraction bits, so 2^-0.5 reads the entry
  just below 0.5); the result is 2^int * T[frac] with T the measured mantissa of 2^(k / 2^23);
  subnormal inputs count as 0, results below 2^-126 flush to +0, at or above 2^128 give +inf.
* RCP: 1/x = 2^-e * R[mantissa] (R measured over [1, 2)); subnormal inputs are zeros (+-inf),
  subnormal results flush to +-0.
* RSQ: 1/sqrt(x) = 2^-(e div 2) * Q[e mod 2, mantissa] (Q measured over [1, 4)); negative inputs
  give NaN, -0 and negative subnormals -inf.
NaN inputs give the canonical NaN 0x7FFFFFFF. The tables are stored as the difference (in units in
the last place) from the correctly rounded value, in ``data/nvidia_sfu.npz``, checked by CRC when
loaded. The builtins WGSL needs are sequences of these (emu.numerics.gpu_builtins).
"""
from __future__ import annotations

import os
import zlib
from functools import lru_cache

import numpy as np

_DATA = os.path.join(os.path.dirname(__file__), "data", "nvidia_sfu.npz")
QNAN = np.uint32(0x7FFFFFFF)


def table_reference(name: str) -> np.ndarray:
    """The correctly rounded values the measured tables are stored against (uint32 bits)."""
    with np.errstate(all="ignore"):
        if name == "ex2":      # 2^(k / 2^23), k < 2^23: a mantissa (bits 0..22)
            k = np.arange(1 << 23, dtype=np.float64)
            return (np.exp2(k / (1 << 23)).astype(np.float32).view(np.uint32) & 0x7FFFFF).astype(np.uint32)
        if name == "rcp":      # 1/m, m in [1, 2)
            m = (np.arange(1 << 23, dtype=np.uint32) | np.uint32(0x3F800000)).view(np.float32)
            return (np.float32(1) / m).view(np.uint32)
        if name == "rsq":      # 1/sqrt(x), x in [1, 4)
            x = np.arange(0x3F800000, 0x3F800000 + (1 << 24), dtype=np.uint32).view(np.float32)
            return (1.0 / np.sqrt(x.astype(np.float64))).astype(np.float32).view(np.uint32)
    raise KeyError(name)


def encode_table(name: str, bits: np.ndarray) -> dict:
    d = bits.astype(np.int64) - table_reference(name).astype(np.int64)
    assert np.abs(d).max() < 128, name
    return {f"{name}/d": d.astype(np.int8), f"{name}/crc": np.uint32(zlib.crc32(bits.astype(np.uint32).tobytes()))}


@lru_cache(maxsize=None)
def table(name: str) -> np.ndarray:
    if not os.path.exists(_DATA):
        raise FileNotFoundError(f"{_DATA}: the measured special-function tables are missing (reinstall emu)")
    with np.load(_DATA) as z:
        d, crc = z[f"{name}/d"], int(z[f"{name}/crc"])
    bits = (table_reference(name).astype(np.int64) + d).astype(np.uint32)
    if zlib.crc32(bits.tobytes()) != crc:
        raise RuntimeError(f"{_DATA}: table {name} does not rebuild to the measured values (CRC); "
                           f"this numpy's float64 {name} differs from the one it was stored against")
    bits.setflags(write=False)
    return bits


def _parts(x):
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.int64)
    return u >> 31, (u >> 23) & 0xFF, u & 0x7FFFFF


def ex2(x) -> np.ndarray:
    """MUFU.EX2 (ex2.approx.ftz.f32) of f32 values; returns f32."""
    x = np.asarray(x, np.float32)
    s, E, m = _parts(x)
    T = table("ex2")
    # fixed point |x| * 2^23, truncated (exponents >= 8 overflow or underflow anyway)
    sh = E - 127 - 23 + 23         # |x| * 2^23 = (m | 2^23) * 2^(E - 127)
    mant = np.where(E == 0, 0, m | (1 << 23))
    shift = E - 127
    a = np.where(shift >= 0, mant << np.clip(shift, 0, 20), mant >> np.clip(-shift, 0, 63))
    a = np.where(E == 0, 0, a)
    big = (E != 255) & (shift > 8)
    ip, fr = a >> 23, a & 0x7FFFFF
    neg = s == 1
    e = np.where(neg, np.where(fr == 0, -ip, -ip - 1), ip)
    k = np.where(neg & (fr != 0), 0x7FFFFF - fr, fr)
    eb = e + 127
    out = np.where(eb >= 255, 0x7F800000, np.where(eb <= 0, 0, (np.clip(eb, 0, 254) << 23) | T[k]))
    out = np.where(big, np.where(neg, 0, 0x7F800000), out)
    out = np.where(E == 255, np.where(m != 0, 0x7FFFFFFF, np.where(neg, 0, 0x7F800000)), out)
    del sh
    return out.astype(np.uint32).view(np.float32)


def rcp(x) -> np.ndarray:
    """MUFU.RCP (rcp.approx.ftz.f32); returns f32."""
    s, E, m = _parts(x)
    t = table("rcp")[m].astype(np.int64)
    e = ((t >> 23) & 0xFF) - (E - 127)
    out = np.where(e <= 0, 0, np.where(e >= 255, 0x7F800000, (np.clip(e, 0, 254) << 23) | (t & 0x7FFFFF)))
    out = np.where(E == 0, 0x7F800000, out)
    out = np.where(E == 255, np.where(m == 0, 0, 0x7FFFFFFF), out)
    out = out | np.where(out == 0x7FFFFFFF, 0, s << 31)
    return out.astype(np.uint32).view(np.float32)


def rsq(x) -> np.ndarray:
    """MUFU.RSQ (rsqrt.approx.ftz.f32); returns f32."""
    s, E, m = _parts(x)
    ue = E - 127
    odd = ue & 1
    t = table("rsq")[m + (odd << 23)].astype(np.int64)
    e = ((t >> 23) & 0xFF) - ((ue - odd) >> 1)
    out = np.where(e <= 0, 0, (np.clip(e, 0, 254) << 23) | (t & 0x7FFFFF))
    out = np.where(E == 0, 0x7F800000, out)
    out = np.where(E == 255, np.where(m == 0, 0, 0x7FFFFFFF), out)
    out = np.where((s == 1) & (E != 0) & (out != 0x7FFFFFFF), 0x7FFFFFFF, out)
    out = np.where((s == 1) & (E == 0), 0xFF800000, out)
    return out.astype(np.uint32).view(np.float32)
