"""naga's 64-bit integers (wgpu's SHADER_INT64 and SHADER_INT64_ATOMIC_* features): i64 and u64
scalars and vectors, the li/lu literals, WGSL's integer rules at 64 bits (wrapping + - * <<,
x / 0 == x, MIN / -1 == MIN, truncating / and %), conversions, bitcasts, the numeric builtins,
8-byte layout in buffers, 64-bit atomics; --strict says Tint has none. Expected values are
Python's integers, wrapped."""
from __future__ import annotations

import numpy as np
import pytest

import emu

I64_SHADER = """struct S { a: u32, b: u64, c: vec2<i64>, d: i64 }
@group(0) @binding(0) var<storage, read_write> s: S;
@group(0) @binding(1) var<storage, read_write> o: array<i64, 24>;
@compute @workgroup_size(1)
fn main() {
  let big = 1002003004005006li;
  let m = -9223372036854775807li - 1li;
  o[0] = big * 1000li;
  o[1] = m / -1li;
  o[2] = big / 0li;
  o[3] = -7li % 3li;
  o[4] = -7li / 2li;
  o[5] = big << 20u;
  o[6] = m >> 3u;
  o[7] = i64(s.a) + i64(-5i);
  o[8] = i64(3.9e12f);
  o[9] = bitcast<i64>(s.b);
  o[10] = abs(m + 1li);
  o[11] = clamp(big, -5li, 5li);
  o[12] = min(big, m) + max(-1li, 7li);
  o[13] = sign(-big);
  o[14] = dot(vec2<i64>(big, 2li), vec2<i64>(3li, big));
  o[15] = s.c.y - s.d;
  o[16] = select(0li, 1li, big > 1000000li && u64(big) < 18446744073709551615lu);
  o[17] = i64(u64(big) * 3000000lu);
  o[18] = i64(s.b / 7lu);
  o[19] = i64(1e30f);
  o[20] = i64(i32(big));
  o[21] = i64(u64(-1.0f)) + i64(m % -1li);
  s.b = s.b + 17lu;
  s.d = ~s.d;
}
"""


def _wrap(v: int) -> int:
    return (v + 2 ** 63) % 2 ** 64 - 2 ** 63


def test_i64_and_u64_arithmetic():
    dev = emu.Device()
    pipe = dev.create_compute_pipeline(dev.create_shader_module(I64_SHADER, "i64.wgsl"))
    sb = np.zeros(48, np.uint8)                     # S: a at 0, b at 8, c at 16 (align 16), d at 32
    sb[0:4] = np.array([123], np.uint32).view(np.uint8)
    sb[8:16] = np.array([2 ** 64 - 16], np.uint64).view(np.uint8)
    sb[16:32] = np.array([11, -22], np.int64).view(np.uint8)
    sb[32:40] = np.array([5], np.int64).view(np.uint8)
    s, o = dev.create_buffer(sb), dev.create_buffer(size=24 * 8)
    dev.dispatch(pipe, {(0, 0): s, (0, 1): o}, (1, 1, 1))
    big, m = 1002003004005006, -2 ** 63
    want = [big * 1000, m, big, -1, -3, _wrap(big << 20), m >> 3, 118, int(np.float32(3.9e12)), -16,
            2 ** 63 - 1, 5, m + 7, -1, 5 * big, -27, 1, _wrap(big * 3000000), (2 ** 64 - 16) // 7,
            int(np.float32(2 ** 63)) - 2 ** 39,         # the largest f32 below 2^63
            _wrap(big % 2 ** 32 - (2 ** 32 if big % 2 ** 32 >= 2 ** 31 else 0)), 0, 0, 0]
    assert o.read(np.int64).tolist() == want
    got = s.read(np.uint8)
    assert got[8:16].view(np.uint64).tolist() == [2 ** 64 - 16 + 17 - 2 ** 64]      # wrapped
    assert got[32:40].view(np.int64).tolist() == [~5]


def test_64_bit_atomics():
    src = """@group(0) @binding(0) var<storage, read_write> c: array<atomic<u64>, 2>;
@group(0) @binding(1) var<storage, read_write> m: atomic<i64>;
@group(0) @binding(2) var<storage, read_write> old: array<i64, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) {
  atomicAdd(&c[0], 18446744073709551615lu);          // -1 each: wraps below zero
  atomicMax(&c[1], u64(i) << 40u);
  old[i] = atomicMin(&m, -i64(i) * 4294967296li);
  let r = atomicCompareExchangeWeak(&c[1], 63lu << 40u, 7lu);
  if (r.exchanged) { old[63] = 1li; }
}
"""
    dev = emu.Device()
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "a64.wgsl"))
    c, m, old = dev.create_buffer(np.array([5, 0], np.uint64)), dev.create_buffer(np.zeros(1, np.int64)), \
        dev.create_buffer(size=64 * 8)
    dev.dispatch(pipe, {(0, 0): c, (0, 1): m, (0, 2): old}, (1, 1, 1))
    assert c.read(np.uint64).tolist() == [(5 - 64) % 2 ** 64, 7]
    assert m.read(np.int64).tolist() == [-63 * 2 ** 32]
    o = old.read(np.int64).tolist()
    assert o[:63] == [-k * 2 ** 32 + (2 ** 32 if k else 0) for k in range(63)] and o[63] == 1


@pytest.mark.parametrize("space,body", [("buffer", "atomicAdd(&s, 1lu);"), ("workgroup", "atomicMax(&w, 2li);")])
def test_64_bit_atomics_need_the_profiles_int64_atomics(space, body):
    # apple-m1 says buffer_int64_atomics: false (Metal on M1 has no 64-bit atomics); naga's
    # atomic<u64>/<i64> are refused there like Dawn's atomic<vec2<u32>>, at the use
    src = f"""@group(0) @binding(0) var<storage, read_write> s: atomic<u64>;
var<workgroup> w: atomic<i64>;
@compute @workgroup_size(1)
fn main() {{
  {body}
}}
"""
    dev = emu.Device("apple-m1")
    with pytest.raises(emu.EmuError) as e:
        dev.create_compute_pipeline(dev.create_shader_module(src, "a64.wgsl"))
    t = "atomic<u64>" if space == "buffer" else "atomic<i64>"
    assert e.value.message == (f"profile 'apple-m1' has no 64-bit {space} atomics, which {t} (naga's 64-bit "
                               f"atomics, wgpu's SHADER_INT64_ATOMIC_* features) needs")
    assert (e.value.loc.line, e.value.loc.col) == (5, 3)
    dev = emu.Device("nvidia-h200")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(src, "a64.wgsl"))
    buf = dev.create_buffer(np.array([41], np.uint64))
    dev.dispatch(pipe, {(0, 0): buf}, (1, 1, 1))
    assert buf.read(np.uint64).tolist() == [42 if space == "buffer" else 41]


def test_strict_says_tint_has_no_64_bit_integers():
    dev = emu.Device()
    warned = dev.create_shader_module(I64_SHADER, "i64.wgsl", strict=True).warnings
    assert [(w.message, w.loc.line) for w in warned] == [
        ("the type u64: 64-bit integers are naga's (wgpu's SHADER_INT64 feature); Tint (Dawn, Chrome) has none", 1)]
    assert dev.create_shader_module(I64_SHADER, "i64.wgsl").warnings == []


def test_64_bit_literal_range():
    with pytest.raises(emu.EmuError) as e:
        emu.compile_wgsl("@compute @workgroup_size(1) fn main() { let x = 9223372036854775808li; }", "l.wgsl")
    assert e.value.message == "9223372036854775808 does not fit in i64 (-9223372036854775808..9223372036854775807)"
    assert (e.value.loc.line, e.value.loc.col) == (1, 49)


@pytest.mark.parametrize("amount,name", [("60lu", "u64"), ("6i", "i32")])
def test_a_shift_amount_that_is_not_u32_is_refused_where_it_is(amount, name):
    # (was: "cannot use a value of type u64 as u32" with no source location)
    src = ("@group(0) @binding(0) var<storage, read_write> o: array<u64, 4>;\n@compute @workgroup_size(1)\n"
           f"fn main() {{\n    let v = o[0];\n    o[1] = v >> {amount};\n}}\n")
    with pytest.raises(emu.EmuError) as e:
        emu.Device("reference").create_shader_module(src, "shift.wgsl")
    assert (e.value.loc.line, e.value.loc.col) == (5, 12)
    assert e.value.message == f"the shift amount must be u32, not {name}"
    assert e.value.hint == "convert it: u32(...)"
