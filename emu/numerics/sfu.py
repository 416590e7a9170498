"""NVIDIA's special function unit (MUFU) as measured on an H200, and the instruction sequences the
driver emits around it for WGSL builtins.

    ex2(x), lg2(x), rcp(x), rsq(x), sqrt(x), sin(x), cos(x)    f32 in, f32 out (flush-to-zero forms)

Each unit is a rule plus one measured table over its reduced argument:
* EX2: the input is turned into fixed point with 23 fraction bits, truncating |x| (a negative
  input with a fraction takes the one's complement of the fraction bits, so 2^-0.5 reads the entry
  just below 0.5); the result is 2^int * T[frac] with T the measured mantissa of 2^(k / 2^23);
  subnormal inputs count as 0, results below 2^-126 flush to +0, at or above 2^128 give +inf.
* RCP: 1/x = 2^-e * R[mantissa] (R measured over [1, 2)); subnormal inputs are zeros (+-inf),
  subnormal results flush to +-0.
* RSQ: 1/sqrt(x) = 2^-(e div 2) * Q[e mod 2, mantissa] (Q measured over [1, 4)); negative inputs
  give NaN, -0 and negative subnormals -inf.
* SQRT: like RSQ, sqrt(x) = 2^(e div 2) * Q'[e mod 2, mantissa]; sqrt(-0) = -0.
* LG2: the unit adds the exponent to a fixed-point log2 of the mantissa and truncates toward zero;
  a negative sum is read through its one's complement, so it lands on the largest float strictly
  below |e| - P. P is the measured result over [1, 2) (log2(1) = 0 exactly); for e = -1 where
  the result is smaller than 1/2, the measured [0.5, 1) values stand (more bits than P holds).
* SIN/COS (after the driver's FMUL.RZ by 1/(2 pi)): the revolution's fraction is cut to 25 bits
  (|r|, the sign reapplied for sin); one measured table F over the 2^25 cells gives
  sin(q) = F[q], cos(q) = F[q + 2^23].
NaN inputs give the canonical NaN 0x7FFFFFFF. The tables are stored as the difference (in units in
the last place) from the correctly rounded value, in ``data/nvidia_sfu.npz``, checked by CRC when
loaded: an int8 step per cell, and for the cells beyond +-126 steps an exception list (indices as
gaps, values as their difference from the reference), each array LZMA-compressed (2.5 MB; with
the npz's own deflate and raw exception values they took 5.6 MB). The builtins WGSL needs are sequences of these (emu.numerics.gpu_builtins).
"""
from __future__ import annotations

import io
import lzma
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
        if name in ("rsq", "sqrt"):      # over [1, 4)
            x = np.arange(0x3F800000, 0x3F800000 + (1 << 24), dtype=np.uint32).view(np.float32).astype(np.float64)
            return (1.0 / np.sqrt(x) if name == "rsq" else np.sqrt(x)).astype(np.float32).view(np.uint32)
        if name in ("lg2", "lg2_neg1"):     # log2(m), m in [1, 2); lg2_neg1: log2(m / 2)
            m = (np.arange(1 << 23, dtype=np.uint32) | np.uint32(0x3F800000)).view(np.float32).astype(np.float64)
            return np.log2(m if name == "lg2" else m / 2).astype(np.float32).view(np.uint32)
        if name == "sin":      # sin(2 pi q / 2^25), q < 2^25: one revolution in MUFU.SIN's cells
            q = np.arange(1 << 25, dtype=np.float64)
            return np.sin(q * (2 * np.pi / (1 << 25))).astype(np.float32).view(np.uint32)
    raise KeyError(name)


UNKNOWN = np.uint32(0xFFFFFFFF)     # a cell no f32 input reaches


def encode_table(name: str, bits: np.ndarray) -> dict:
    """int8 steps from the reference (-128: the exact bits are in the exception list, -127: unknown)."""
    bits = bits.astype(np.uint32)
    d = bits.astype(np.int64) - table_reference(name).astype(np.int64)
    unknown = bits == UNKNOWN
    big = (np.abs(d) > 126) & ~unknown
    d8 = np.where(unknown, -127, np.where(big, -128, d)).astype(np.int8)
    return {f"{name}/d": d8, f"{name}/xi": np.flatnonzero(big).astype(np.uint32), f"{name}/xv": bits[big],
            f"{name}/crc": np.uint32(zlib.crc32(bits.tobytes()))}


def write_tables(arrays: dict, path: str):
    """Store encode_table's arrays (and "tanh_f16/d16"): each one's .npy bytes LZMA-compressed,
    an exception list's indices as gaps and its values as their difference from the reference."""
    out = {}
    for key, a in arrays.items():
        name, part = key.rsplit("/", 1)
        a = np.asarray(a)
        if part == "xi":
            a = np.diff(a.astype(np.int64), prepend=0)
        elif part == "xv":
            a = a.astype(np.int64) - table_reference(name).astype(np.int64)[np.asarray(arrays[f"{name}/xi"], np.int64)]
        buf = io.BytesIO()
        np.save(buf, a)
        out[key] = np.frombuffer(lzma.compress(buf.getvalue(), preset=9 | lzma.PRESET_EXTREME), np.uint8)
    np.savez(path, **out)


def _stored(z, key: str) -> np.ndarray:
    return np.load(io.BytesIO(lzma.decompress(z[key].tobytes())))


def _cache_file(name: str, crc: int) -> str | None:
    """Where the rebuilt table is kept between processes (EMU_SFU_CACHE, else ~/.cache/emu/sfu; a
    private folder, as the JIT's): rebuilding the sine table alone takes seconds of float64 sin over
    2^25 cells, which every process that ran a kernel calling sin() paid again."""
    d = os.environ.get("EMU_SFU_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "emu", "sfu")
    try:
        os.makedirs(d, mode=0o700, exist_ok=True)
        st = os.stat(d)
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            return None
    except OSError:
        return None
    return os.path.join(d, f"{name}-{crc:08x}.npy")


def _cached(path: str, crc: int):
    """The kept table if it is there and its CRC is the measured one's, else None. The file is
    mapped, not read: a process touches only the cells its inputs reach (the sine table alone is
    128 MB, which reading and checking took ~0.1 s and as much memory in every process that called
    sin()). Its CRC is checked once per version of the file: a checked file's (inode, size, ctime)
    are noted beside it, and a file written since (damaged, replaced or planted) is checked again."""
    try:
        bits = np.load(path, mmap_mode="r", allow_pickle=False)
        if bits.dtype != np.uint32 or bits.ndim != 1:
            return None
        mark = f"{path}.checked"
        if _signature(path) != _read_mark(mark):
            if zlib.crc32(memoryview(np.ascontiguousarray(bits))) != crc:
                return None
            _write_mark(mark, _signature(path))
    except (OSError, ValueError, TypeError):
        return None
    return np.asarray(bits)        # read-only: the map is opened for reading


def _signature(path: str) -> str:
    st = os.stat(path)
    return f"{st.st_ino} {st.st_size} {st.st_ctime_ns}"


def _read_mark(mark: str) -> str | None:
    try:
        with open(mark) as f:
            return f.read()
    except OSError:
        return None


def _write_mark(mark: str, signature: str) -> None:
    try:
        tmp = f"{mark}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(signature)
        os.replace(tmp, mark)
    except OSError:         # a read-only cache: checked again next time
        pass


@lru_cache(maxsize=None)
def table(name: str) -> np.ndarray:
    """A measured table (uint32 bits; UNKNOWN where no input reaches), rebuilt and CRC-checked
    (then kept on disk: _cache_file)."""
    if not os.path.exists(_DATA):
        raise FileNotFoundError(f"{_DATA}: the measured special-function tables are missing (reinstall emu)")
    with np.load(_DATA) as z:
        crc = int(_stored(z, f"{name}/crc"))
        path = _cache_file(name, crc)
        kept = _cached(path, crc) if path else None
        if kept is not None:
            return kept
        d, gaps, dv = (_stored(z, f"{name}/{k}") for k in ("d", "xi", "xv"))
    ref = table_reference(name).astype(np.int64)
    bits = (ref + d).astype(np.uint32)
    bits[d == -127] = UNKNOWN
    xi = np.cumsum(gaps)
    bits[xi] = (ref[xi] + dv).astype(np.uint32)
    if zlib.crc32(bits.tobytes()) != int(crc):
        raise RuntimeError(f"{_DATA}: table {name} does not rebuild to the measured values (CRC); "
                           f"this numpy's float64 {name} differs from the one it was stored against")
    if path:
        try:
            tmp = f"{path}.{os.getpid()}.tmp.npy"
            np.save(tmp, bits, allow_pickle=False)
            os.replace(tmp, path)
            _write_mark(f"{path}.checked", _signature(path))      # its CRC was checked above
        except OSError:         # a read-only home: rebuilt again next time
            pass
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


def _rz32(v):
    r = v.astype(np.float32)
    over = np.abs(r.astype(np.float64)) > np.abs(v)
    return np.where(over, np.nextafter(r, np.float32(0)), r).astype(np.float32)


def lg2(x) -> np.ndarray:
    """MUFU.LG2 (lg2.approx.ftz.f32); returns f32."""
    s, E, m = _parts(x)
    e = (E - 127).astype(np.float64)
    p = table("lg2")[m].view(np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        pos = _rz32(e + p)
        a = -e - p
        r = _rz32(a)
    r = np.where(r.astype(np.float64) == a, np.nextafter(r, np.float32(0)), r)
    out = np.where(e >= 0, pos, -r).astype(np.float32).view(np.uint32)
    neg1 = table("lg2_neg1")[m]
    out = np.where((e == -1) & (neg1 != UNKNOWN), neg1, out)
    out = np.where(E == 0, 0xFF800000, out)
    out = np.where(E == 255, np.where(m == 0, 0x7F800000, 0x7FFFFFFF), out)
    out = np.where((s == 1) & (E != 0), 0x7FFFFFFF, out)
    return out.astype(np.uint32).view(np.float32)


def sqrt(x) -> np.ndarray:
    """MUFU.SQRT (sqrt.approx.ftz.f32); returns f32."""
    s, E, m = _parts(x)
    ue = E - 127
    odd = ue & 1
    t = table("sqrt")[m + (odd << 23)].astype(np.int64)
    e = ((t >> 23) & 0xFF) + ((ue - odd) >> 1)
    out = np.where(e >= 255, 0x7F800000, (np.clip(e, 0, 254) << 23) | (t & 0x7FFFFF))
    out = np.where(E == 0, s << 31, out)
    out = np.where(E == 255, np.where(m == 0, 0x7F800000, 0x7FFFFFFF), out)
    out = np.where((s == 1) & (E != 0), 0x7FFFFFFF, out)
    return out.astype(np.uint32).view(np.float32)


SIN_SCALE = np.float32(0.15915493667125701904)     # the driver's FMUL.RZ before MUFU.SIN/COS


def revolutions(x) -> np.ndarray:
    """RZ(|x| * 0.15915494f) in f32 (subnormal x as 0): MUFU.SIN/COS's argument."""
    _, E, _ = _parts(x)
    ax = np.where(E == 0, np.float32(0), np.abs(np.asarray(x, np.float32))).astype(np.float32)
    with np.errstate(all="ignore"):
        return _rz32(ax.astype(np.float64) * np.float64(SIN_SCALE))


def _sincos(x, quarter, r=None):
    s, E, _ = _parts(x)
    r = (revolutions(x) if r is None else np.abs(np.asarray(r, np.float32))).astype(np.float64)
    fin = np.isfinite(r)
    q = (np.floor(np.mod(np.where(fin, r, 0.0), 1.0) * (1 << 25)).astype(np.int64) + quarter) % (1 << 25)
    out = table("sin")[q].astype(np.int64)
    if not quarter:
        out = out ^ (s << 31)
    return np.where(fin, out, 0x7FFFFFFF).astype(np.uint32).view(np.float32)


def sin_rev(r) -> np.ndarray:
    """MUFU.SIN of an argument already in revolutions (f32)."""
    return _sincos(r, 0, r)


def cos_rev(r) -> np.ndarray:
    return _sincos(r, 1 << 23, r)


def sin(x) -> np.ndarray:
    """sin.approx.ftz.f32: MUFU.SIN(RZ(x / 2pi))."""
    return _sincos(x, 0)


def cos(x) -> np.ndarray:
    """cos.approx.ftz.f32: MUFU.COS(RZ(x / 2pi))."""
    return _sincos(x, 1 << 23)


@lru_cache(maxsize=None)
def table_f16(name: str) -> np.ndarray:
    """A measured f16 unit (uint16 bits over all 65,536 inputs), stored against the f16 rounding
    of the float64 function; tanh_f16: MUFU.TANH.F16."""
    with np.load(_DATA) as z:
        d = _stored(z, f"{name}/d16").astype(np.int64)
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float64)
    with np.errstate(all="ignore"):
        ref = np.tanh(x).astype(np.float16).view(np.uint16).astype(np.int64)
    bits = (ref + d).astype(np.uint16)
    bits.setflags(write=False)
    return bits
