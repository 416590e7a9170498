"""Every WGSL construct through the whole spine (parse -> lower -> IR -> executor -> buffers).

Each shader under tests/shaders/ runs on emu.Device; expected outputs are computed independently
here in numpy / plain Python (never by re-running emu), bit-exact where WGSL defines the result.
"""
from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np
import pytest

import emu

ROOT = Path(__file__).resolve().parents[2]
SHADERS = ROOT / "tests" / "shaders"


def module(name: str, dev=None, strict: bool = False):
    dev = dev or emu.Device()
    src = (SHADERS / f"{name}.wgsl").read_text()
    return dev, dev.create_shader_module(src, f"tests/shaders/{name}.wgsl", strict=strict)


def run(name, bindings, groups, *, sg=None, constants=None, entry=None, dev=None):
    """Run shader `name`; `bindings` maps (group, binding) to a numpy array (its bytes) or an int
    (a zeroed buffer of that many bytes). Returns {(group, binding): Buffer}."""
    dev = dev or emu.Device(subgroup_size=sg)
    dev, m = module(name, dev)
    p = dev.create_compute_pipeline(m, entry_point=entry, constants=constants)
    bufs = {k: dev.create_buffer(size=v) if isinstance(v, int) else dev.create_buffer(v)
            for k, v in bindings.items()}
    dev.dispatch(p, bufs, groups)
    return bufs


def f32_bits(x) -> np.ndarray:
    return np.asarray(x, np.float32).view(np.uint32)


# -- vecadd --------------------------------------------------------------------------------------

def test_vecadd():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(100).astype(np.float32)
    b = rng.standard_normal(100).astype(np.float32)
    out = run("vecadd", {(0, 0): a, (0, 1): b, (0, 2): 400}, (2, 1, 1))
    np.testing.assert_array_equal(out[(0, 2)].read(np.float32).view(np.uint32), f32_bits(a + b))


# -- control flow --------------------------------------------------------------------------------

def _trunc_rem(a, b):
    return int(math.fmod(a, b))


def _control_flow_ref(x: int) -> list[int]:
    r = []
    r.append(-1 if x < 0 else 0 if x == 0 else 1 if x < 10 else 2)
    n = abs(x) % 20
    r.append(sum(j for j in range(n) if j % 2 == 1))
    c, steps = abs(x) % 37 + 1, 0
    while c != 1 and steps < 200:
        c = c // 2 if c % 2 == 0 else 3 * c + 1
        steps += 1
    r.append(steps)
    k = acc = 0
    while True:
        if k == 3:
            k += 1
        else:
            acc += k * k
        k += 1
        if k >= abs(x) % 7 + 2:
            break
    r.append(acc)
    pairs, m = 0, abs(x) % 9
    for a in range(m):
        if a == 4:
            continue
        for b in range(a + 1, m):
            if b >= 6:
                break
            if (a + b) % 2 == 0:
                continue
            pairs += 1
        if pairs > 6:
            break
    r.append(pairs)
    sel = x & 7
    r.append(10 if sel in (0, 1) else 20 if sel == 2 else (30 if x > 16 else 35) if sel in (3, 4, 5) else 99)
    nn = abs(x) % 50 + 2
    r.append(next((d for d in range(2, nn) if nn % d == 0), nn))
    u = abs(x) % 4
    r.append(1 if u == 0 else 201 if u == 2 else -5)
    return r


def test_control_flow():
    x = np.arange(-20, 44, dtype=np.int32)
    out = run("control_flow", {(0, 0): x, (0, 1): x.size * 32}, (2, 1, 1))
    got = out[(0, 1)].read(np.int32).reshape(-1, 8)
    want = np.array([_control_flow_ref(int(v)) for v in x], np.int32)
    np.testing.assert_array_equal(got, want)


# -- functions -----------------------------------------------------------------------------------

def _functions_ref(x: int) -> list[int]:
    counter = 100
    c1 = counter + x
    c2 = c1 + 1
    first7 = x
    while first7 % 7:
        first7 += 1
    lo, hi = (x, 10 - x) if x <= 10 - x else (10 - x, x)
    return [x * x + (x + 1) ** 2, (-2 * x) * 1000 + x, c1 + c2, 3 * x, (x + 5) * 100 + (x - 5),
            lo * 1000 + hi, first7, x + (x + 1) * 10 + (x + 3) * 100]


def test_functions():
    x = np.arange(-8, 24, dtype=np.int32)
    out = run("functions", {(0, 0): x, (0, 1): x.size * 32}, (2, 1, 1))
    want = np.array([_functions_ref(int(v)) for v in x], np.int32)
    np.testing.assert_array_equal(out[(0, 1)].read(np.int32).reshape(-1, 8), want)
    np.testing.assert_array_equal(out[(0, 0)].read(np.int32), 3 * x)


# -- structs and arrays ----------------------------------------------------------------------------

PARTICLE = np.dtype({"names": ["pos", "mass", "vel", "id", "tag", "flags"],
                     "formats": [("<f4", 3), "<f4", ("<f4", 3), "<u4", "<u4", ("<u4", 2)],
                     "offsets": [0, 12, 16, 32, 36, 48], "itemsize": 64})
STATS = np.dtype({"names": ["total_mass", "centroid", "m", "picks", "grid"],
                  "formats": ["<f4", ("<f4", 3), ("<f4", (3, 4)), ("<f4", 4), ("<u4", (2, 3))],
                  "offsets": [0, 16, 32, 80, 96], "itemsize": 128})


def test_structs_arrays_layout():
    _, m = module("structs_arrays")
    scene = m.ir.global_("scene").type
    assert scene.offsets == (0, 4, 16, 32)
    part = scene.runtime_array.elem
    assert part.offsets == tuple(PARTICLE.fields[n][1] for n in PARTICLE.names)
    assert part.size == PARTICLE.itemsize == scene.runtime_array.stride
    stats = m.ir.global_("stats").type.elem
    assert stats.offsets == tuple(STATS.fields[n][1] for n in STATS.names)
    assert stats.size == STATS.itemsize


def test_structs_arrays():
    n = 4
    rng = np.random.default_rng(7)
    head = np.zeros(8, np.float32)
    head.view(np.uint32)[0] = n
    head[1] = 0.5                     # scale
    head[4:7] = [10.0, 20.0, 30.0]    # origin
    parts = np.zeros(n, PARTICLE)
    parts["pos"] = rng.integers(-8, 8, (n, 3))
    parts["mass"] = [1.0, 2.0, 0.5, 4.0]
    parts["vel"] = rng.integers(-4, 4, (n, 3))
    parts["id"] = [11, 22, 33, 44]
    parts["tag"] = 0xDEAD
    raw = head.tobytes() + parts.tobytes()
    # guard bytes in the @size padding of `tag` must survive (a 12-byte member written as 4)
    pad = np.frombuffer(raw, np.uint8).copy()
    for k in range(n):
        pad[32 + 64 * k + 40: 32 + 64 * k + 48] = 0xAB
    out = run("structs_arrays", {(0, 0): pad, (0, 1): n * STATS.itemsize}, (1, 1, 1))

    got_scene = np.frombuffer(out[(0, 0)].read(np.uint8)[32:], PARTICLE)
    want = parts.copy()
    want["pos"] = (parts["pos"] + parts["vel"] * np.float32(0.5)).astype(np.float32)
    want["tag"] = parts["id"] * 2 + np.arange(n)
    want["flags"][:, 0] = 7
    want["flags"][:, 1] = n
    for f in PARTICLE.names:
        np.testing.assert_array_equal(got_scene[f], want[f], err_msg=f)
    assert (out[(0, 0)].read(np.uint8)[32:].reshape(n, 64)[:, 40:48] == 0xAB).all()

    st = np.frombuffer(out[(0, 1)].read(np.uint8), STATS)
    # sums in loop order, f32 at every step
    tm = np.float32(0)
    cen = np.zeros(3, np.float32)
    for k in range(n):
        tm = np.float32(tm + parts["mass"][k])
        cen = (cen + parts["pos"][k] * parts["mass"][k]).astype(np.float32)
    table = [1.5, -2.0, 4.25, 8.0]
    lut_y = [2, 4, 6]
    for i in range(n):
        assert st["total_mass"][i] == tm
        np.testing.assert_array_equal(st["centroid"][i], (cen / tm).astype(np.float32))
        np.testing.assert_array_equal(st["picks"][i], [table[(i + j) % 4] + lut_y[(i + j) % 3] for j in range(4)])
        mm = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], np.float32)
        mm[1][2] = i
        mm[2] = [mm[0][0], mm[1][1], 30.0]
        col = mm[i % 3].copy()
        mm[0][0] = col[2]
        np.testing.assert_array_equal(st["m"][i][:, :3], mm)
        v = [i, 100, 3 * i, i + 3 * i]
        grid = [[[v[0], v[1], v[2]][c] for c in range(3)],
                [[v[3], v[2], v[1]][c] + 1000 for c in range(3)]]
        np.testing.assert_array_equal(st["grid"][i], grid)


# -- integers ----------------------------------------------------------------------------------------

M32 = 0xFFFFFFFF


def _s(v):  # wrap to i32
    v &= M32
    return v - (1 << 32) if v >> 31 else v


def _u(v):
    return v & M32


def _tdiv(x, y):
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _sdiv(x, y):
    return x if y == 0 or (x == -(1 << 31) and y == -1) else _s(_tdiv(x, y))


def _srem(x, y):
    return 0 if y == 0 or (x == -(1 << 31) and y == -1) else x - _tdiv(x, y) * y


def _clz(u):
    return 32 - u.bit_length()


def _ctz(u):
    return 32 if u == 0 else (u & -u).bit_length() - 1


def _flb_s(x):
    u = _u(x if x >= 0 else ~x)
    return -1 if u == 0 else u.bit_length() - 1


def _flb_u(u):
    return M32 if u == 0 else u.bit_length() - 1


def _rev(u):
    return int(f"{u:032b}"[::-1], 2)


def _extract(e, offset, count, signed):
    o = min(offset, 32)
    c = min(count, 32 - o)
    if c == 0:
        return 0
    v = (_u(e) >> o) & ((1 << c) - 1)
    if signed and v >> (c - 1):
        v -= 1 << c
    return v


def _insert(e, n, offset, count):
    o = min(offset, 32)
    c = min(count, 32 - o)
    mask = ((1 << c) - 1) << o
    return (_u(e) & ~mask | (_u(n) << o) & mask) & M32


def _integer_ref(x, y):
    ux, uy = _u(x), _u(y)
    sh = uy & 31
    sign = (y > 0) - (y < 0)
    si = [_s(x + y), _s(x - y), _s(x * y), _sdiv(x, y), _srem(x, y), _s(x << sh), x >> sh, _s(-x),
          _s(abs(x)), _clz(ux) + bin(uy).count("1") * 100, _flb_s(x),
          -1 if uy == 0 else _ctz(uy), _extract(x, uy & 31, 5, True), _s(_insert(x, y, 4, 9)),
          _s(_rev(ux) ^ ~y & M32),
          _s(max(-1000, min(1000, x)) + sign + _srem(min(x, y), 7) + _srem(max(x, y), 5))]
    z = _u(_u(_u(ux + 1) - 3) * 5) >> 1
    ui = [_u(ux + uy), _u(ux - uy), _u(ux * uy), ux if uy == 0 else ux // uy, 0 if uy == 0 else ux % uy,
          _u(ux << sh), ux >> sh, _ctz(ux), _flb_u(ux), _extract(ux, 3, uy, False),
          _insert(ux, uy, uy % 40, 12), _rev(ux), (ux & uy) | (ux ^ 0xF0F0F0F0), min(ux, uy) + max(ux, uy) & M32,
          (x < y) | (ux < uy) << 1 | (x == y) << 2 | (ux >= uy) << 3, z]
    return si, ui


def test_integer():
    MIN, MAX = -(1 << 31), (1 << 31) - 1
    pairs = [(7, 2), (-7, 2), (7, -2), (-7, -2), (MIN, -1), (MIN, 0), (5, 0), (0, 0), (MAX, 1),
             (MAX, MAX), (MIN, MIN), (1, 31), (1, 32), (-1, 33), (123456789, 37), (-8, 65),
             (0x12345678, 0x0FEDCBA9), (-1, -1), (MIN, 1), (0, 64), (3, 4), (-100, 7), (1 << 30, 2), (9, 9)]
    x = np.array([p[0] for p in pairs], np.int32)
    y = np.array([p[1] for p in pairs], np.int32)
    n = len(pairs)
    out = run("integer", {(0, 0): x, (0, 1): y, (0, 2): n * 64, (0, 3): n * 64}, (3, 1, 1))
    si = out[(0, 2)].read(np.int32).reshape(n, 16)
    ui = out[(0, 3)].read(np.uint32).reshape(n, 16)
    for k, (a, b) in enumerate(pairs):
        ws, wu = _integer_ref(a, b)
        assert si[k].tolist() == ws, (a, b, [(j, g, w) for j, (g, w) in enumerate(zip(si[k].tolist(), ws)) if g != w])
        assert ui[k].tolist() == wu, (a, b, [(j, g, w) for j, (g, w) in enumerate(zip(ui[k].tolist(), wu)) if g != w])


# -- floats ------------------------------------------------------------------------------------------

from fractions import Fraction as Fr  # noqa: E402


def rne(v: Fr, dtype) -> np.generic:
    """The exact rational `v` rounded once to nearest even in `dtype` (float32 / float16)."""
    dtype = np.dtype(dtype)
    x = np.array(float(v)).astype(dtype)[()]
    cands = [x, np.nextafter(x, dtype.type(-np.inf)), np.nextafter(x, dtype.type(np.inf))]
    cands = [c for c in cands if np.isfinite(c)] or [x]
    ui = np.uint32 if dtype.itemsize == 4 else np.uint16
    return min(cands, key=lambda c: (abs(Fr(float(c)) - v), int(np.array(c).view(ui)) & 1))


def bits32(v) -> int:
    return int(np.array(v, np.float32).view(np.uint32))


def bits16(v) -> int:
    return int(np.array(v, np.float16).view(np.uint16))


def _f2i(v, lo, hi):
    """float -> int: truncate, clamp (hi: the largest float of the source type in range)."""
    t = math.trunc(float(v))
    return max(lo, min(hi, t))


def _norm(v, k, lo):
    c = min(Fr(1), max(Fr(lo), Fr(float(v))))
    return math.floor(Fr(1, 2) + k * c)


def _byte(u, j, signed):
    v = (u >> (8 * j)) & 0xFF
    return v - 256 if signed and v >= 128 else v


def _float_ref(a, b):
    f32, f16 = np.float32, np.float16
    a, b = f32(a), f32(b)
    ua, ub = bits32(a), bits32(b)
    ex = [a + b, a - b, a * b, rne(Fr(float(a)) * Fr(float(b)) + 1, f32), np.sqrt(abs(a)),
          np.floor(a) + np.ceil(b), np.round(a), np.trunc(a) - (b - np.floor(b)),
          min(a, b) * f32(2) - max(a, b)]
    ex = [bits32(v) for v in ex]
    sign = f32(int(a > 0) - int(a < 0)) if a != 0 else a
    ex.append(bits32(((min(max(a, f32(-1)), f32(1)) + min(max(b, f32(0)), f32(1))) + sign) + f32(b >= 0)))
    ha, hb = f16(a), f16(b)
    # exact value rounded once; an exact zero takes IEEE's sign (numpy's f16 zero is exact)
    hp = rne(Fr(float(ha)) * Fr(float(hb)), f16) or ha * hb
    hs = rne(Fr(float(hp)) + Fr(float(ha)), f16) or hp + ha
    ex.append(bits16(hs) | bits16(rne(Fr(float(ha)) - Fr(float(hb)), f16) or ha - hb) << 16)
    ex.append(bits32(f32(hs) + f32(hb)))
    ex.append(bits16(ha) | bits16(hb) << 16)
    comps = [a, b, a * f32(0.5), -b]
    ex.append(sum((_norm(c, 127, -1) & 0xFF) << (8 * j) for j, c in enumerate(comps)))
    ex.append(sum((_norm(c, 255, 0) & 0xFF) << (8 * j) for j, c in enumerate([a, b, 0.25, 1.5])))
    ex.append((_norm(a, 32767, -1) & 0xFFFF) | (_norm(b, 32767, -1) & 0xFFFF) << 16)
    ex.append((_norm(a, 65535, 0) & 0xFFFF) | (_norm(b, 65535, 0) & 0xFFFF) << 16)
    ex.append(bits32(max(f32(_byte(ua, 2, True)) / f32(127), f32(-1))))
    ex.append(bits32(f32(_byte(ub, 3, False)) / f32(255)))
    hi = (ua >> 16) - 65536 if ua >> 31 else ua >> 16
    ex.append(bits32(max(f32(hi) / f32(32767), f32(-1))))
    ex.append(bits32(f32(ub & 0xFFFF) / f32(65535)))
    ex.append(bits32(np.array((ua & 0x7BFF7BFF) >> 16, np.uint16).view(np.float16).astype(f32)))
    ex.append(bits32(f32(ha)))
    i1 = _f2i(b * f32(1000), -(1 << 31), 2147483520)
    u1 = _f2i(abs(a) * f32(3.0e5), 0, 4294967040)
    ex.append(bits32(rne(Fr(i1), f32) + rne(Fr(u1), f32)))

    ap = [math.sin(a), math.cos(b), math.exp(float(a * f32(0.1))), math.log(float(abs(b) + f32(1))),
          abs(float(a)) ** 1.5, math.atan2(a, b), math.tanh(a), 1 / math.sqrt(float(abs(b) + f32(1)))]

    I32 = (-(1 << 31), 2147483520)
    ia, ib = _f2i(a, *I32), _f2i(b, *I32)
    bytes_a = [_byte(ua, j, True) for j in range(4)]
    bytes_b = [_byte(ub, j, True) for j in range(4)]
    ints = [ia, _f2i(a * f32(1.0e12), *I32), _s(_f2i(b * f32(1.0e12), 0, 4294967040)),
            _s(_f2i(ha, *I32) + _s(_f2i(hb, 0, (1 << 32) - 1))),
            _s(sum((max(-128, min(127, v)) & 0xFF) << (8 * j) for j, v in enumerate([ia, ib, -300, 200]))),
            sum(p * q for p, q in zip(bytes_a, bytes_b)),
            _s(sum(_byte(ua, j, False) * _byte(ub, j, False) for j in range(4))),
            _s(sum((v & 0xFF) << (8 * j) for j, v in enumerate([ua, ub, 511, 7]))),
            _byte(ua, 3, True) + _byte(ub, 0, False) * 1000,
            _s(sum((v & 0xFF) << (8 * j) for j, v in enumerate([-1, ia, 127, -128]))),
            _s(sum(min(v, 255) << (8 * j) for j, v in enumerate([ua, 255, 256, 0]))),
            _f2i(rne(Fr(_f2i(b * f32(100), *I32)), f16), *I32),
            int(bool(a > b)) + int(bool(a == b)) * 2 + int(not a < b) * 4,
            _s(bits16(rne(Fr(float(ha)) + Fr(3, 2), f16)) | bits16(-hb) << 16),
            1, 0]
    return ex, ap, ints


FLOAT_PAIRS = [(2.5, -2.5), (-2.5, 3.5), (3.5, 0.5), (0.5, -0.0), (-0.0, 1.25), (1.0, -1.0),
               (0.1, 1 / 3), (100.75, -150.3), (1e-3, 7.25e-5), (123.456, -0.75), (65.5, 2.0),
               (-199.9, 190.1), (0.999, -0.999), (1.5e-6, 3.0e-3), (-7.0, 7.0), (42.0, 42.0)]


def test_float():
    a = np.array([p[0] for p in FLOAT_PAIRS], np.float32)
    b = np.array([p[1] for p in FLOAT_PAIRS], np.float32)
    n = a.size
    out = run("float", {(0, 0): a, (0, 1): b, (0, 2): n * 96, (0, 3): n * 32, (0, 4): n * 64}, (2, 1, 1))
    ex = out[(0, 2)].read(np.uint32).reshape(n, 24)
    ap = out[(0, 3)].read(np.float32).reshape(n, 8)
    it = out[(0, 4)].read(np.int32).reshape(n, 16)
    for k in range(n):
        we, wa, wi = _float_ref(a[k], b[k])
        bad = [(j, hex(g), hex(w)) for j, (g, w) in enumerate(zip(ex[k].tolist(), we)) if g != w]
        assert not bad, (a[k], b[k], bad)
        np.testing.assert_allclose(ap[k], np.array(wa, np.float32), rtol=2e-6, atol=1e-7)
        bad = [(j, g, w) for j, (g, w) in enumerate(zip(it[k].tolist(), wi)) if g != w]
        assert not bad, (a[k], b[k], bad)


# -- consts and overrides ------------------------------------------------------------------------------

def _consts_ref(li, scale, offset, count, flag):
    f32 = np.float32
    third = bits32(f32(1 / 3))
    return [0, third, bits32(f32(3.5) * f32(scale)), _u(-1 + offset), 4, 20 + li % 4 + 1,
            6 + [2, 4, 6][li % 3], M32 - li, count, 2 * count, int(flag),
            bits32(f32(0.1) * f32(scale)), bits32(f32(1e-3) * f32(scale)), 1 << 30, 0, 0]


@pytest.mark.parametrize("constants,expect", [
    ({"COUNT": 4}, (2.0, -3, 4, False)),                                     # defaults
    ({"SCALE": 1.5, "7": 5, "COUNT": 8, "9": True}, (1.5, 5, 8, True)),      # by name and by @id
    ({"SCALE": "0.25", "OFFSET": "-100", "COUNT": "2", "FLAG": "true"}, (0.25, -100, 2, True)),
])
def test_consts_overrides(constants, expect):
    count = expect[2]
    out = run("consts_overrides", {(0, 0): count * 64}, (1, 1, 1), constants=constants)
    got = out[(0, 0)].read(np.uint32).reshape(count, 16)
    for li in range(count):
        assert got[li].tolist() == _consts_ref(li, *expect), li


# -- workgroup memory ------------------------------------------------------------------------------

def test_workgroup():
    nwg = 3
    x = np.random.default_rng(3).integers(-50, 50, nwg * 64).astype(np.float32) * np.float32(0.25)
    x[64 + 5] = -1.0      # workgroup 1's invocation 5 sees a negative value
    out = run("workgroup", {(0, 0): x, (0, 1): nwg * 4, (0, 2): x.nbytes, (0, 3): x.nbytes,
                            (0, 4): x.nbytes}, (nwg, 1, 1))
    sums = out[(0, 1)].read(np.float32)
    for w in range(nwg):
        t = x[w * 64:(w + 1) * 64].copy()
        s = 32
        while s:
            t[:s] = t[:s] + t[s:2 * s]
            s //= 2
        assert bits32(sums[w]) == bits32(t[0])
    np.testing.assert_array_equal(out[(0, 2)].read(np.float32), x.reshape(nwg, 64)[:, ::-1].ravel())
    lid = np.arange(64)
    lx, ly = lid % 8, lid // 8
    want_t = np.concatenate([lx * 10 + ly + w * 100 for w in range(nwg)])
    np.testing.assert_array_equal(out[(0, 3)].read(np.uint32), want_t)
    want_f = np.repeat([(int(x[w * 64 + 5] > 0) + 40 + nwg) * 1000 + 32 for w in range(nwg)], 64)
    np.testing.assert_array_equal(out[(0, 4)].read(np.uint32), want_f)


# -- atomics -------------------------------------------------------------------------------------

def test_atomics():
    n = 64
    rng = np.random.default_rng(5)
    v = rng.integers(0, 200, n).astype(np.uint32)
    init = np.array([1000, 0, -(1 << 31), M32, M32, 0, 0x5A5A5A5A, -1], np.int64).astype(np.uint32)
    out = run("atomics", {(0, 0): v, (0, 1): init, (0, 2): 64, (0, 3): n * 16,
                          (0, 4): (8 + n) * 4, (0, 5): 2 * 17 * 4}, (2, 1, 1))
    c = out[(0, 1)].read(np.uint32)
    vi = v.astype(np.int64)
    assert c[0] == (1000 + vi.sum()) & M32
    assert _s(int(c[1])) == -vi.sum()
    assert _s(int(c[2])) == vi.max() - 50
    assert c[3] == v.min() + 7
    bits = 0
    for x in v:
        bits |= 1 << int(x % 32)
    assert c[4] == M32 & ~bits and c[5] == bits
    hashes = [(int(x) * 2654435761) & M32 for x in v]
    xor = 0x5A5A5A5A
    for h in hashes:
        xor ^= h
    assert c[6] == xor
    olds = out[(0, 3)].read(np.uint32).reshape(n, 4)
    # old values of atomicAdd: some serial order of the additions
    order = np.argsort(olds[:, 0], kind="stable")
    np.testing.assert_array_equal(olds[order, 0], (1000 + np.concatenate([[0], np.cumsum(vi[order])[:-1]])) & M32)
    # atomicXor olds: xor of initial with hashes before it in that lane's order
    seen = {int(x) for x in olds[:, 1]}
    assert len(seen) <= n and 0x5A5A5A5A in seen
    # atomicExchange: a chain -1 -> i_a -> i_b ... -> final
    chain = sorted(_s(int(x)) for x in olds[:, 2]) + [_s(int(c[7]))]
    assert sorted(chain) == sorted([-1] + list(range(n)))
    hist = out[(0, 2)].read(np.uint32)
    np.testing.assert_array_equal(hist, np.bincount(v % 16, minlength=16))
    wg = out[(0, 5)].read(np.uint32).reshape(2, 17)
    for w in range(2):
        part = v[w * 32:(w + 1) * 32]
        np.testing.assert_array_equal(wg[w, :16], np.bincount(part % 16, minlength=16))
        assert wg[w, 16] == part.sum()
    slots = out[(0, 4)].read(np.uint32)
    claimed = olds[:, 3]
    for s in range(8):
        takers = np.flatnonzero(v % 8 == s)
        if takers.size == 0:
            assert slots[s] == 0
            continue
        assert claimed[takers].sum() == 1
        winner = takers[claimed[takers] == 1][0]
        assert slots[s] == winner + 1
        np.testing.assert_array_equal(slots[8 + takers], winner + 1)


# -- subgroups ------------------------------------------------------------------------------------

def _subgroup_ref(v: np.ndarray, sg: int) -> np.ndarray:
    """Expected outputs per invocation; -1 (as u32) marks values WGSL leaves indeterminate."""
    n = v.size
    out = np.zeros((n, 32), np.int64)
    for base in range(0, n, sg):
        g = [int(x) for x in v[base:base + sg]]
        u = [x & M32 for x in g]
        m3 = [x % 3 + 2 if x >= 0 else -((-x) % 3) + 2 for x in g]   # WGSL % truncates
        prod = 1
        for x in m3:
            prod = _s(prod * x)
        and_ = M32
        or_ = xor = 0
        for x in u:
            and_ &= x | 0xF0
            or_ |= 1 << (x % 32)
            xor ^= (x * 40503) & M32
        ballot = sum(1 << k for k, x in enumerate(g) if x > 0)
        active = [k for k in range(sg) if k % 3 != 0]
        for k in range(sg):
            r = out[base + k]
            r[0] = _s(sum(g))
            r[1] = prod
            r[2], r[3] = min(g), max(g)
            r[4], r[5], r[6] = and_, or_, xor
            r[7] = _s(sum(g[:k + 1]))
            r[8] = _s(sum(g[:k]))
            pm = 1
            for x in u[:k]:
                pm = pm * (x % 5 + 1) & M32
            r[10] = pm
            r[9] = pm * (u[k] % 5 + 1) & M32
            r[11] = g[1]
            r[12] = _s(g[0] * 3)
            r[13] = g[(k + 3) % sg]
            r[14] = g[k ^ 1]
            r[15] = g[k - 1] if k >= 1 else -1
            r[16] = g[k + 2] if k + 2 < sg else -1
            for w in range(4):
                r[17 + w] = (ballot >> (32 * w)) & M32
            r[21] = int(k == 0)
            r[22] = int(all(x > -1000 for x in g)) + 2 * int(any(x == 7 for x in g))
            r[23], r[24], r[25] = k, sg, (base % 128) // sg
            r[26] = bits32(np.float32(sum(g) * 0.25))
            r[27] = bits32(np.float32(g[k ^ 2]) + np.float32(-(k ^ 2)))
            if k % 3:
                r[28] = _s(sum(g[a] for a in active))
                r[29] = int(k == active[0]) + 2 * sum(1 << a for a in active if a < 32)
                r[30] = g[active[0]]
            else:
                r[28] = r[29] = r[30] = -1
            r[31] = max(-x if j % 2 == 0 else x for j, x in enumerate(g))
    return out & M32


@pytest.mark.parametrize("sg", [4, 8, 16, 32, 64, 128])
def test_subgroups(sg):
    v = np.random.default_rng(sg).integers(-60, 60, 256).astype(np.int32)
    v[::17] = 7
    out = run("subgroups", {(0, 0): v, (0, 1): v.size * 128}, (2, 1, 1), sg=sg)
    got = out[(0, 1)].read(np.uint32).reshape(-1, 32).astype(np.int64)
    want = _subgroup_ref(v, sg)
    undefined = np.zeros_like(want, bool)
    lane = np.arange(v.size) % sg
    undefined[lane < 1, 15] = True           # shuffleUp from below lane 0
    undefined[lane + 2 >= sg, 16] = True     # shuffleDown past the last lane
    for j in range(32):
        ok = (got[:, j] == want[:, j]) | undefined[:, j]
        assert ok.all(), (j, np.flatnonzero(~ok)[:5], got[~ok, j][:5], want[~ok, j][:5])


def test_subgroups_without_enable_warns_only_when_strict():
    src = (SHADERS / "subgroups.wgsl").read_text().replace("enable subgroups;", "")
    dev = emu.Device(subgroup_size=8)
    # the shader's divergent part is what Tint's uniformity analysis rejects (the one warning
    # without --strict; Tint reports the last call its graph reaches first)
    divergent = [(55, 37, "'subgroupBroadcastFirst' must only be called from subgroup uniform control flow: "
                          "Tint (Dawn, Chrome) rejects this shader")]
    plain = dev.create_shader_module(src, "s.wgsl").warnings
    assert [(w.loc.line, w.loc.col, w.message) for w in plain] == divergent
    warned = dev.create_shader_module(src, "s.wgsl", strict=True).warnings
    assert warned and "enable subgroups" in warned[0].message
    assert (warned[0].loc.line, warned[0].loc.col) == (9, 9)   # the first @builtin(subgroup_...)
    assert [(w.loc.line, w.loc.col, w.message) for w in warned[-1:]] == divergent


def test_strict_warns_of_subgroup_ids_in_a_multi_dimensional_workgroup():
    # ONNX Runtime's generated prelude takes @builtin(subgroup_invocation_id) in every program,
    # its tiled MatMul with @workgroup_size(8, 8, 1): Dawn runs it, wgpu refuses it
    src = """enable subgroups;
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(8, WY, 1)
fn main(@builtin(local_invocation_index) i: u32, @builtin(subgroup_invocation_id) l: u32) {
  o[i] = l;
}
"""
    dev = emu.Device(subgroup_size=8)
    warned = dev.create_shader_module(src.replace("WY", "8"), "s.wgsl", strict=True).warnings
    assert [(w.message, w.loc.line, w.loc.col) for w in warned] == [
        ("@builtin(subgroup_invocation_id) with a multi-dimensional @workgroup_size: Tint (Dawn, Chrome) "
         "accepts this, naga (wgpu, Firefox) rejects it", 3, 1)]
    assert dev.create_shader_module(src.replace("WY", "1"), "s.wgsl", strict=True).warnings == []
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src.replace("WY", "8"), "s.wgsl"))
    out = dev.create_buffer(size=4 * 64)
    dev.dispatch(pipe, {(0, 0): out}, (1, 1, 1))              # it runs, as on Dawn
    assert out.read(np.uint32).tolist() == [i % 8 for i in range(64)]


def test_naga_ballot_without_a_predicate():
    # naga's subgroupBallot(): the active invocations' mask, as subgroupBallot(true)
    src = """@group(0) @binding(0) var<storage, read_write> o: array<vec4<u32>>;
@compute @workgroup_size(8)
fn main(@builtin(local_invocation_index) i: u32) {
  if (i % 3u != 1u) {
    o[i] = subgroupBallot();
  }
}
"""
    dev = emu.Device(subgroup_size=8)
    warned = dev.create_shader_module(src, "b.wgsl", strict=True).warnings
    assert [w.message for w in warned if "predicate" in w.message] == [
        "subgroupBallot() without a predicate: naga accepts this, Tint (Dawn, Chrome) rejects it"]
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "b.wgsl"))
    out = dev.create_buffer(size=16 * 8)
    dev.dispatch(pipe, {(0, 0): out}, (1, 1, 1))
    mask = sum(1 << i for i in range(8) if i % 3 != 1)
    assert out.read(np.uint32).reshape(8, 4).tolist() == [[mask, 0, 0, 0] if i % 3 != 1 else [0] * 4
                                                          for i in range(8)]


def test_huge_zero_valued_arrays_are_evaluated_lazily():
    # Tint's corpus: array<i32, 636109182>()[0] (2.5 GB as a value) is a constant index into a
    # zero value; emu holds it without its elements, and refuses only a dynamic index into it
    src = """@group(0) @binding(0) var<storage, read_write> o: array<i32>;
struct S { big: array<array<u32, 100000>, 100000>, x: f32 }
@compute @workgroup_size(1)
fn main() {
  let a = array<i32, 636109182>()[0];
  const b = array<array<u32, 100000>, 100000>()[3][7];
  o[0] = a + 1;
  o[1] = i32(b) + 2;
  o[2] = i32(S().big[99999][5] + 3u) + i32(S().x);
  INDEX
}
"""
    import resource
    dev = emu.Device()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src.replace("INDEX", ""), "z.wgsl"))
    out = dev.create_buffer(np.full(4, 9, np.int32))
    dev.dispatch(pipe, {(0, 0): out}, (1, 1, 1))
    assert out.read(np.int32).tolist() == [1, 2, 3, 9]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000      # KiB: no gigabytes
    with pytest.raises(emu.EmuError) as e:
        dev.create_shader_module(src.replace("INDEX", "o[3] = array<i32, 636109182>()[u32(o[0])];"), "z.wgsl")
    assert (e.value.loc.line, e.value.loc.col) == (10, 10)
    assert e.value.message == ("array<i32, 636109182> is a value of 2544436728 bytes; emu allows values up to "
                               "1048576 bytes (a huge zero-valued array is evaluated only where a constant "
                               "index picks an element)")


# -- matmul, private, uniforms --------------------------------------------------------------------

def test_matmul_naive():
    M, N, K = 19, 13, 21
    rng = np.random.default_rng(11)
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    dims = np.array([M, N, K, 0], np.uint32)
    out = run("matmul_naive", {(0, 0): dims, (0, 1): A, (0, 2): B, (0, 3): M * N * 4}, (2, 3, 1))
    want = np.zeros((M, N), np.float32)
    for k in range(K):                       # the shader's order: acc = acc + a*b, f32 each step
        want = want + A[:, k:k + 1] * B[k:k + 1, :]
    np.testing.assert_array_equal(out[(0, 3)].read(np.float32).reshape(M, N).view(np.uint32),
                                  want.view(np.uint32))


def test_private():
    n = 32
    out = run("private", {(0, 0): n * 32}, (2, 1, 1))
    got = out[(0, 0)].read(np.uint32).reshape(n, 8)
    for i in range(n):
        seed, hits = 12345 + i, [0, 0, 0, 0]
        for _ in range(i % 5 + 1):
            x = seed
            x ^= (x << 13) & M32
            x ^= x >> 17
            x ^= (x << 5) & M32
            seed = x
            hits[x % 4] += 1
        hist = [[1, -1], [2, -2], [3, -3]]
        hist[i % 3][1] += i
        want = [seed, hits[0] + hits[1] * 10 + hits[2] * 100 + hits[3] * 1000,
                bits32(np.float32(0.5) * np.float32(i)),
                _u(hist[0][1] * 10000 + hist[1][1] * 100 + hist[2][1]), _u(-7), 0, 0, 0]
        assert got[i].tolist() == want, i


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_uniforms(mode):
    f32 = np.float32
    params = np.zeros(20, np.float32)
    params[0:3] = [0.5, -1.0, 2.0]
    params.view(np.uint32)[3] = 6                    # count
    params[4:12] = [1, 2, 3, 4, 0.5, 0.25, -1, 8]    # weights
    params[12:16] = [2, 0, 1, 3]                     # transform: columns (2, 0), (1, 3)
    params.view(np.int32)[16] = mode
    pts = np.arange(16, dtype=np.float32).reshape(8, 2) * f32(0.75)
    out = run("uniforms", {(0, 0): params, (0, 1): pts, (0, 2): 8 * 16}, (2, 1, 1))
    got = out[(0, 2)].read(np.float32).reshape(8, 4)
    w = params[4:12].reshape(2, 4)
    c0, c1 = params[12:14], params[14:16]
    for i in range(8):
        if i >= 6:
            assert (got[i] == 0).all()
            continue
        p = c0 * pts[i][0] + c1 * pts[i][1]
        r = np.array([*(p + params[0:2]), params[2], 0], f32) * w[i % 2]
        r[3] = [f32(-1), ((w[i % 2][0] + w[i % 2][1]) + w[i % 2][2]) + w[i % 2][3], w[i % 2][i % 4]][mode]
        np.testing.assert_array_equal(got[i], r)


# -- matrices (and an entry point taking a struct of builtins) -------------------------------------

def test_matrices():
    n = 8
    # eighths: every product and sum below is exact in f32, so WGSL's free summation order
    # cannot change a bit
    a = (np.random.default_rng(2).integers(-32, 32, (n, 3, 2)) / 8).astype(np.float32)
    out = run("matrices", {(0, 0): a, (0, 1): n * 128}, (2, 1, 1))
    got = out[(0, 1)].read(np.float32).reshape(n, 32)
    for i in range(n):
        A = a[i].astype(np.float64)             # A[c][r]: column c, row r
        li = i % 4
        B = np.array([[1, 2, 3], [-1, 0.5, li]], np.float64)
        ab = np.array([[sum(A[k][r] * B[j][k] for k in range(3)) for r in range(2)] for j in range(2)])
        ba = np.array([[sum(B[k][r] * A[j][k] for k in range(2)) for r in range(3)] for j in range(3)])
        v = [sum(A[k][r] * [1, -2, 0.5][k] for k in range(3)) for r in range(2)]
        w = [3 * A[c][0] - A[c][1] for c in range(3)]
        want = [ab[0][0], ab[0][1], ab[1][0], ab[1][1], *ba.ravel(), *v, *w, -A[0][0], -A[2][1],
                A[2][1], A[1][0], ab[0][0] * ab[1][1] - ab[0][1] * ab[1][0], 2 * ab[1][0],
                4 + A[0][0], li] + [0] * 6
        np.testing.assert_array_equal(got[i], np.array(want, np.float32), err_msg=str(i))


def test_matrix_builtins_fold_constants():
    src = """
    const M = mat3x3<f32>(2.0, 0.0, 1.0, 1.0, 3.0, 0.0, 0.0, 1.0, 4.0);
    const_assert determinant(M) == 25.0;
    const_assert transpose(M)[0][2] == 0.0 && transpose(M)[2][0] == 1.0;
    @group(0) @binding(0) var<storage, read_write> out: array<f32>;
    @compute @workgroup_size(1) fn main() {
        out[0] = determinant(mat2x2<f32>(vec2(1.0, 2.0), vec2(3.0, 4.0)));
        out[1] = reflect(vec2<f32>(1.0, -1.0), vec2<f32>(0.0, 1.0)).y;
        out[2] = faceForward(vec3<f32>(1.0, 2.0, 3.0), vec3<f32>(0.0, 0.0, 1.0), vec3<f32>(0.0, 0.0, 1.0)).z;
        out[3] = refract(vec2<f32>(0.0, -1.0), vec2<f32>(0.0, 1.0), 1.0).y;
    }"""
    dev = emu.Device()
    p = dev.create_compute_pipeline(dev.create_shader_module(src, "m.wgsl"))
    out = dev.create_buffer(size=16)
    dev.dispatch(p, {(0, 0): out}, (1, 1, 1))
    assert out.read(np.float32).tolist() == [-2.0, 1.0, -3.0, -1.0]


@pytest.mark.parametrize("constants,wg,half", [({}, 64, 32), ({"WG": 32}, 32, 16), ({"WG": 16, "HALF": 4}, 16, 4)])
def test_overrides_size_types_per_pipeline(constants, wg, half):
    src = (SHADERS / "override_sized.wgsl").read_text()
    dev = emu.Device()
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "override_sized.wgsl"), constants=constants)
    out = dev.create_buffer(size=4 * 128)
    dev.dispatch(pipe, {(0, 0): out}, (2, 1, 1))
    i = np.arange(half, dtype=np.float32)
    for w in range(2):
        row = out.read(np.float32)[w * wg: w * wg + half]
        np.testing.assert_array_equal(row, i + (i + half))
    assert pipe.workgroup_size == (wg, 1, 1)


def test_minus_minus_in_expressions():
    """'--' inside an expression is two minus signs, as WGSL's tokenizer rule and Tint read it
    (Tint's test bug/chromium/380168990 is this construct); the statement 'x--;' still decrements."""
    bufs = run("minus_minus", {(0, 0): 32}, (1, 1, 1))
    assert bufs[(0, 0)].read(np.int32).tolist() == [3, 1, 3, 5, 10, 4, 0, 0]
