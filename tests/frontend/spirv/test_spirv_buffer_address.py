"""Buffer device addresses (PhysicalStorageBufferAddresses; GLSL's buffer_reference) through
tests/shaders/spirv/buffer_address.comp: buffers reached by addresses in push constants and in
another buffer (a linked list), pointer arithmetic, a reference passed to a function, Aligned loads
and stores, an atomic through a reference. Checked against the values numpy computes here, and
the errors of bad addresses; tests/hw/test_vulkan_breadth_lavapipe.py runs the same scenario on
lavapipe (its own addresses) and compares."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import emu
from emu.errors import EmuError
from emu.frontend.spirv.module import PUSH_CONSTANTS
from emu.memory.addresses import ALIGN, BASE, GUARD

FILE = "tests/shaders/spirv/buffer_address.comp"
SRC = (Path(__file__).resolve().parents[3] / FILE).read_text()
SIZES = {"src": 64 * 16, "dst": 64 * 16, "nodes": 8 * 16, "counter": 8}
X = np.random.default_rng(5).normal(0, 1, (64, 4)).astype(np.float32)


def scenario(addr: dict) -> tuple[bytes, dict]:
    """(push constants, initial contents) for the buffers' addresses: six list nodes, the last
    one's next address 0."""
    nodes = b"".join(struct.pack("<IIQ", 10 + k, 0, addr["nodes"] + 16 * (k + 1) if k < 5 else 0) for k in range(8))
    push = struct.pack("<4Q", addr["src"], addr["dst"], addr["nodes"], addr["counter"])
    return push, {"src": X.tobytes(), "nodes": nodes}


def run_emu(profile: str = "reference"):
    """The scenario on emu: (the bound output, {name: final bytes of each addressed buffer})."""
    dev = emu.Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, FILE))
    bufs = {n: dev.create_buffer(size=s) for n, s in SIZES.items()}
    push, contents = scenario({n: dev.buffer_device_address(b) for n, b in bufs.items()})
    for n, data in contents.items():
        bufs[n].write(data)
    out = dev.create_buffer(size=64 * 16)
    dev.dispatch(pipe, {(0, 0): out, PUSH_CONSTANTS: dev.create_buffer(push)}, (1, 1, 1))
    final = {n: bytes(b.data[: b.size]) for n, b in bufs.items()}
    return out.read(np.uint32).reshape(64, 4), final, dev.buffer_device_address(bufs["nodes"])


def test_buffers_reached_by_address():
    got, final, head = run_emu()
    lane = np.arange(64)
    y = X[lane ^ 1, 0] + X[lane, 1]
    steps = np.minimum(lane & 7, 6)
    values = 10 + np.arange(6)
    sums = np.array([int((values[:s] * np.arange(1, s + 1)).sum()) for s in steps])
    # the last node's address minus the head's: 16 a step, or 0 - head (mod 2^32) where the list ended
    ends = np.where(steps < 6, 16 * steps, (-head) % (1 << 32))
    assert np.array_equal(got[:, 0], y.astype(np.float32).view(np.uint32))
    assert got[:, 1].tolist() == sums.tolist() and got[:, 2].tolist() == steps.tolist()
    assert got[:, 3].tolist() == ends.tolist()
    assert np.array_equal(np.frombuffer(final["dst"], np.float32).reshape(64, 4), X * 2 + 1)
    assert struct.unpack("<2I", final["counter"]) == (64, 0)


def test_addresses_are_stable_aligned_apart_and_never_reused():
    dev = emu.Device("reference")
    a, b = dev.create_buffer(size=100), dev.create_buffer(size=1 << 20)
    first = dev.buffer_device_address(a)
    assert first == BASE and dev.buffer_device_address(a) == first
    second = dev.buffer_device_address(b)
    assert second % ALIGN == 0 and second >= first + 100 + GUARD
    del a
    c = dev.create_buffer(size=16)
    assert dev.buffer_device_address(c) >= second + (1 << 20) + GUARD     # a freed buffer's range stays unmapped
    with pytest.raises(EmuError) as e:
        dev.buffer_device_address(np.zeros(4))
    assert "buffer_device_address: expected a buffer from create_buffer" in e.value.message


def _bad(offset: int, node_bytes=None):
    """The scenario with the source address moved by `offset` (or the list's bytes replaced)."""
    dev = emu.Device("reference")
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, FILE))
    bufs = {n: dev.create_buffer(size=s) for n, s in SIZES.items()}
    addr = {n: dev.buffer_device_address(b) for n, b in bufs.items()}
    push, contents = scenario(addr)
    push = struct.pack("<Q", addr["src"] + offset) + push[8:]
    for n, data in contents.items():
        bufs[n].write(node_bytes if n == "nodes" and node_bytes is not None else data)
    with pytest.raises(EmuError) as e:
        dev.dispatch(pipe, {(0, 0): dev.create_buffer(size=1024), PUSH_CONSTANTS: dev.create_buffer(push)}, (1, 1, 1))
    return e.value, addr


def test_an_access_past_a_buffers_end_is_one_error():
    err, addr = _bad(16)          # src + 16: invocation 63 reads 16 bytes past the end
    assert f"16 bytes at device address {addr['src'] + 16 + 63 * 16:#x} run past the end of the buffer at " \
           f"{addr['src']:#x} (1024 bytes" in err.message
    assert err.loc is not None and err.loc.line == 20 and "local_invocation_index 63" in (err.where or "")


def test_an_address_no_buffer_holds_is_one_error():
    nodes = b"".join(struct.pack("<IIQ", 1, 0, 0xDEAD0000) for _ in range(8))
    err, _ = _bad(0, nodes)
    assert "at device address 0xdead0000: no buffer holds that address" in err.message
    assert "vkGetBufferDeviceAddress" in (err.hint or "")


def test_a_misaligned_address_breaks_the_aligned_promise():
    err, addr = _bad(4)           # vec4 loads promise Aligned 16
    assert f"device address {addr['src'] + 4:#x} is not a multiple of 16" in err.message


def test_the_ir_converts_addresses_only_at_accesses():
    from emu.isa.printer import print_module
    module, _ = emu.api.compile_wgsl(SRC, FILE)
    text = print_module(module)
    assert text.count("address_ptr") >= 6 and "{align = 16}" in text
    from emu.hw.emit import emit
    with pytest.raises(EmuError) as e:
        emit(module, "dawn")
    assert "WGSL has no pointers from device addresses" in e.value.message


def test_a_cooperative_matrix_through_an_address_is_one_message():
    src = """#version 450
#extension GL_KHR_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
#extension GL_EXT_buffer_reference : enable
layout(local_size_x = 32) in;
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Halves { float16_t h[]; };
layout(push_constant) uniform PC { Halves src; } pc;
layout(binding = 0) buffer Out { float16_t o[]; };
void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> m;
    coopMatLoad(m, pc.src.h, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
"""
    with pytest.raises(EmuError) as e:
        emu.api.compile_wgsl(src, "coop_address.comp")
    assert "OpCooperativeMatrixLoadKHR through a PhysicalStorageBuffer pointer is not supported" in e.value.message
    assert e.value.loc is not None and e.value.loc.line == 12
