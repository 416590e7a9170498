"""Through the wgpu adapter too, a bug of emu's (an exception that is not an EmuError) is one
GPUInternalError message with the shader location, not a Python traceback of emu's insides."""
import pytest

import emu.wgpu as wgpu

SRC = """@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(4) fn main(@builtin(local_invocation_index) i: u32) { o[i] = i * 3u; }
"""


def test_internal_error_through_wgpu(monkeypatch):
    from emu.scheduler import handlers
    device = wgpu.GPU(profile="reference").request_adapter_sync().request_device_sync()

    def broken(batch, inst, mask, frame):
        raise ZeroDivisionError("a planted bug")
    monkeypatch.setitem(handlers.HANDLERS, "binary", broken)
    monkeypatch.setenv("EMU_JIT", "0")
    p = device.create_compute_pipeline(layout="auto", compute={
        "module": device.create_shader_module(code=SRC, label="k.wgsl"), "entry_point": "main"})
    buf = device.create_buffer(size=16, usage=wgpu.BufferUsage.STORAGE)
    bg = device.create_bind_group(layout=p.get_bind_group_layout(0), entries=[{"binding": 0, "resource": {"buffer": buf}}])
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(p)
    cp.set_bind_group(0, bg)
    cp.dispatch_workgroups(1)
    cp.end()
    with pytest.raises(wgpu.GPUInternalError) as e:
        device.queue.submit([enc.finish()])
    text = str(e.value)
    assert text.startswith("k.wgsl:2:89: error: internal error: ZeroDivisionError: a planted bug")
    assert "please report" in text and "lane 0" in text
