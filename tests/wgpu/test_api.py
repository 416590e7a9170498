"""emu.wgpu's API, in process (no install): coverage of the compute subset, WebGPU's rules and
emu's messages."""
import asyncio

import numpy as np
import pytest

import emu.wgpu as wgpu

BU, MM, SS = wgpu.BufferUsage, wgpu.MapMode, wgpu.ShaderStage


@pytest.fixture(scope="module")
def device():
    adapter = wgpu.GPU(profile="reference").request_adapter_sync()
    return adapter.request_device_sync(required_features=["shader-f16"])


def run(device, pipeline, groups, grid=(1, 1, 1)):
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipeline)
    for i, bg in enumerate(groups):
        cp.set_bind_group(i, bg)
    cp.dispatch_workgroups(*grid)
    cp.end()
    device.queue.submit([enc.finish()])


def pipe(device, code, label="t.wgsl", **constants):
    compute = {"module": device.create_shader_module(code=code, label=label), "entry_point": "main"}
    if constants:
        compute["constants"] = constants
    return device.create_compute_pipeline(layout="auto", compute=compute)


def bind(device, p, *resources, group=0):
    return device.create_bind_group(layout=p.get_bind_group_layout(group), entries=[
        {"binding": i, "resource": r if isinstance(r, dict) else {"buffer": r}} for i, r in enumerate(resources)])


# ------------------------------------------------------------------------- adapter and device
def test_adapter_says_it_is_emu_and_which_profile():
    a = wgpu.GPU(profile="nvidia-h200", flavor="dawn").request_adapter_sync()
    assert a.info["vendor"] == "emu" and a.info["emu_profile"] == "nvidia-h200"
    assert "nvidia-h200" in a.summary and a.info.subgroup_min_size == a.info.subgroup_max_size == 32
    assert {"shader-f16", "subgroups", "chromium-experimental-subgroup-matrix"} <= a.features
    w = wgpu.GPU(profile="nvidia-h200", flavor="wgpu").request_adapter_sync()
    assert {"shader-f16", "subgroup", "cooperative-matrix"} <= w.features
    assert a.limits["max-compute-invocations-per-workgroup"] == 1024
    with pytest.raises(RuntimeError, match="not supported"):
        wgpu.GPU(profile="lavapipe", flavor="dawn").request_adapter_sync().request_device_sync(
            required_features=["timestamp-query"])
    props = wgpu.adapter_properties(a)["subgroup_matrix_configs"]
    assert {"component_type": "f16", "result_component_type": "f32", "m": 16, "n": 16, "k": 16,
            "min_subgroup_size": 32, "max_subgroup_size": 32} in props


def test_required_limits_and_feature_spellings():
    a = wgpu.gpu.request_adapter_sync()
    d = a.request_device_sync(required_features=["shader_f16", "subgroup"],
                              required_limits={"maxStorageBufferBindingSize": 1 << 20})
    assert {"shader-f16", "subgroup", "subgroups"} <= d.features
    assert d.limits["max-storage-buffer-binding-size"] == 1 << 20
    with pytest.raises(RuntimeError, match="beyond"):
        a.request_device_sync(required_limits={"max-bind-groups": 99})


def test_async_api():
    async def main():
        a = await wgpu.gpu.request_adapter_async()
        d = await a.request_device_async()
        b = d.create_buffer_with_data(data=np.arange(4, dtype=np.uint32), usage=BU.MAP_READ | BU.COPY_DST)
        await b.map_async(MM.READ)
        got = np.frombuffer(b.read_mapped(), np.uint32).tolist()
        b.unmap()
        await d.queue.on_submitted_work_done_async()
        return got
    assert asyncio.run(main()) == [0, 1, 2, 3]
    p = wgpu.gpu.request_adapter_async().then(lambda a: a.info["vendor"])
    assert p.sync_wait() == "emu"


# ------------------------------------------------------------------------- buffers and mapping
def test_mapping_rules(device):
    b = device.create_buffer(size=64, usage=BU.MAP_WRITE | BU.COPY_SRC, mapped_at_creation=True)
    assert b.map_state == "mapped"
    b.write_mapped(np.arange(16, dtype=np.uint32))
    with pytest.raises(RuntimeError, match="read mode"):
        b.read_mapped()
    b.unmap()
    with pytest.raises(RuntimeError, match="currently mapped"):
        b.unmap()
    r = device.create_buffer(size=64, usage=BU.MAP_READ | BU.COPY_DST)
    enc = device.create_command_encoder()
    enc.copy_buffer_to_buffer(b, 0, r, 0, 64)
    device.queue.submit([enc.finish()])
    r.map_sync(MM.READ, 16, 32)
    assert np.frombuffer(r.read_mapped(), np.uint32).tolist() == list(range(4, 12))
    view = r.read_mapped(24, 8, copy=False)
    assert view.readonly and np.frombuffer(view, np.uint32).tolist() == [6, 7]
    with pytest.raises(ValueError, match="not contained"):
        r.read_mapped(0, 16)
    with pytest.raises(RuntimeError, match="currently unmapped"):
        r.map_sync(MM.READ)
    r.unmap()
    with pytest.raises(wgpu.GPUValidationError, match="MAP_READ"):
        device.create_buffer(size=16, usage=BU.MAP_READ | BU.STORAGE)
    s = device.create_buffer(size=16, usage=BU.STORAGE)
    with pytest.raises(wgpu.GPUValidationError, match="does not include MAP_READ"):
        s.map_sync(MM.READ)
    with pytest.raises(ValueError, match="multiple of 8"):
        r.map_sync(MM.READ, 4)


def test_queue_write_and_read(device):
    b = device.create_buffer(size=32, usage=BU.STORAGE | BU.COPY_DST | BU.COPY_SRC)
    data = np.arange(16, dtype=np.uint32)
    device.queue.write_buffer(b, 8, data, 16, 12)        # bytes 16..28 of data (words 4, 5, 6)
    assert np.frombuffer(device.queue.read_buffer(b), np.uint32).tolist() == [0, 0, 4, 5, 6, 0, 0, 0]
    assert np.frombuffer(device.queue.read_buffer(b, 8, 8), np.uint32).tolist() == [4, 5]
    with pytest.raises(wgpu.GPUValidationError, match="multiples of 4"):
        device.queue.write_buffer(b, 2, data[:1])
    with pytest.raises(ValueError, match="not contiguous"):
        device.queue.write_buffer(b, 0, data[::2])
    ro = device.create_buffer(size=16, usage=BU.STORAGE)
    with pytest.raises(wgpu.GPUValidationError, match="COPY_SRC"):
        device.queue.read_buffer(ro)


def test_copy_and_clear(device):
    a = device.create_buffer_with_data(data=np.arange(8, dtype=np.uint32), usage=BU.COPY_SRC | BU.COPY_DST)
    b = device.create_buffer(size=32, usage=BU.COPY_DST | BU.COPY_SRC)
    enc = device.create_command_encoder()
    enc.copy_buffer_to_buffer(a, 4, b, 8, 12)
    enc.clear_buffer(a, 8, 8)
    device.queue.submit([enc.finish()])
    assert np.frombuffer(device.queue.read_buffer(b), np.uint32).tolist() == [0, 0, 1, 2, 3, 0, 0, 0]
    assert np.frombuffer(device.queue.read_buffer(a), np.uint32).tolist() == [0, 1, 0, 0, 4, 5, 6, 7]
    enc = device.create_command_encoder()
    with pytest.raises(ValueError, match="multiple of 4"):
        enc.copy_buffer_to_buffer(a, 2, b, 0, 4)
    enc.copy_buffer_to_buffer(a, 0, a, 16, 8)
    with pytest.raises(wgpu.GPUValidationError, match="same buffer"):
        enc.finish()
    enc = device.create_command_encoder()
    enc.copy_buffer_to_buffer(a, 0, b, 16, 32)
    with pytest.raises(wgpu.GPUValidationError, match="does not fit in the destination"):
        enc.finish()


# ------------------------------------------------------------------------- bindings
SUBRANGE = """
@group(0) @binding(0) var<storage, read_write> part: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let n = arrayLength(&part);
    if (g.x < n) { part[g.x] = 1000u + g.x * 10u + n; }
}
"""


def test_sub_range_binding_writes_land_in_the_parent(device):
    parent = device.create_buffer_with_data(data=np.full(256, 7, np.uint32), usage=BU.STORAGE | BU.COPY_SRC)
    p = pipe(device, SUBRANGE)
    run(device, p, [bind(device, p, {"buffer": parent, "offset": 256, "size": 40})])
    got = np.frombuffer(device.queue.read_buffer(parent), np.uint32)
    want = np.full(256, 7, np.uint32)
    want[64:74] = 1000 + np.arange(10) * 10 + 10
    assert np.array_equal(got, want)


def test_unaligned_view_is_written_back():
    d = wgpu.gpu.request_adapter_sync().request_device_sync()
    b = d.create_buffer(size=40, usage=BU.STORAGE)
    row, write_back = b._view(4, 36, writable=True)       # not 16-aligned: a copy, written back
    assert write_back is not None
    row[0, :36] = 9
    write_back()
    assert b.emu_bytes[:4].tolist() == [0] * 4 and set(b.emu_bytes[4:40].tolist()) == {9}
    row, write_back = b._view(16, 24, writable=True)      # aligned: a view, nothing to write back
    assert write_back is None and np.shares_memory(row, b.emu_bytes)


TWO = """
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { dst[g.x] = src[g.x] + 1u; }
"""


def test_writable_and_read_only_use_of_one_buffer_is_refused(device):
    b = device.create_buffer(size=64, usage=BU.STORAGE)
    p = pipe(device, TWO)
    bg = bind(device, p, {"buffer": b, "offset": 0, "size": 16}, {"buffer": b, "offset": 0, "size": 16})
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(p)
    cp.set_bind_group(0, bg)
    cp.dispatch_workgroups(1)
    cp.end()
    with pytest.raises(wgpu.GPUValidationError, match="writable storage buffer .* and as 'read-only-storage'"):
        enc.finish()


def test_auto_layouts_belong_to_their_pipeline(device):
    p1, p2 = pipe(device, TWO), pipe(device, TWO)
    a = device.create_buffer(size=16, usage=BU.STORAGE)
    c = device.create_buffer(size=16, usage=BU.STORAGE)
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(p2)
    cp.set_bind_group(0, bind(device, p1, a, c))
    cp.dispatch_workgroups(1)
    cp.end()
    with pytest.raises(wgpu.GPUValidationError, match="another pipeline's layout='auto' layout"):
        enc.finish()


def test_explicit_layout_mismatch_names_the_wgsl_line(device):
    bgl = device.create_bind_group_layout(entries=[
        {"binding": 0, "visibility": SS.COMPUTE, "buffer": {"type": "read-only-storage"}},
        {"binding": 1, "visibility": SS.COMPUTE, "buffer": {"type": "read-only-storage"}}])
    layout = device.create_pipeline_layout(bind_group_layouts=[bgl])
    module = device.create_shader_module(code=TWO, label="two.wgsl")
    with pytest.raises(wgpu.GPUValidationError) as e:
        device.create_compute_pipeline(layout=layout, compute={"module": module, "entry_point": "main"})
    msg = str(e.value)
    assert msg.startswith("two.wgsl:3:1: error:") and "'dst'" in msg and "'type': 'storage'" in msg
    assert e.value.emu_error is not None and e.value.emu_error.loc.line == 3


def test_dynamic_offsets(device):
    src = """
    @group(0) @binding(0) var<uniform> k: vec4<u32>;
    @group(0) @binding(1) var<storage, read_write> out: array<u32, 4>;
    @compute @workgroup_size(1) fn main() { out[k.x] = k.y; }
    """
    bgl = device.create_bind_group_layout(entries=[
        {"binding": 0, "visibility": SS.COMPUTE, "buffer": {"type": "uniform", "has_dynamic_offset": True}},
        {"binding": 1, "visibility": SS.COMPUTE, "buffer": {"type": "storage"}}])
    p = device.create_compute_pipeline(
        layout=device.create_pipeline_layout(bind_group_layouts=[bgl]),
        compute={"module": device.create_shader_module(code=src), "entry_point": "main"})
    u = np.zeros(128, np.uint32)
    u[0:2], u[64:66] = (1, 11), (3, 33)
    ubuf = device.create_buffer_with_data(data=u, usage=BU.UNIFORM)
    out = device.create_buffer(size=16, usage=BU.STORAGE | BU.COPY_SRC)
    bg = device.create_bind_group(layout=bgl, entries=[
        {"binding": 0, "resource": {"buffer": ubuf, "offset": 0, "size": 16}},
        {"binding": 1, "resource": {"buffer": out}}])
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(p)
    for off in (0, 256):
        cp.set_bind_group(0, bg, [off])
        cp.dispatch_workgroups(1)
    cp.end()
    device.queue.submit([enc.finish()])
    assert np.frombuffer(device.queue.read_buffer(out), np.uint32).tolist() == [0, 11, 0, 33]
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_bind_group(0, bg, [100])
    cp.end()
    with pytest.raises(wgpu.GPUValidationError, match="not a multiple of 256"):
        enc.finish()


# ------------------------------------------------------------------------- shaders and pipelines
def test_shader_errors_are_validation_errors_with_file_line_col(device):
    with pytest.raises(wgpu.GPUValidationError) as e:
        device.create_shader_module(code="fn main( {", label="bad.wgsl")
    assert str(e.value).startswith("bad.wgsl:1:10: error:")
    plain = wgpu.gpu.request_adapter_sync().request_device_sync()
    with pytest.raises(wgpu.GPUValidationError, match="needs the device feature 'shader-f16'"):
        plain.create_shader_module(code="enable f16;\n" + TWO)
    device.create_shader_module(code="enable f16;\n" + TWO)


def test_overrides(device):
    src = """
    override SCALE: u32;
    override ON: bool = false;
    @group(0) @binding(0) var<storage, read_write> out: array<u32, 2>;
    @compute @workgroup_size(1) fn main() { out[0] = SCALE * 3u; out[1] = select(5u, 6u, ON); }
    """
    out = device.create_buffer(size=8, usage=BU.STORAGE | BU.COPY_SRC)
    p = pipe(device, src, SCALE=7, ON=1)
    run(device, p, [bind(device, p, out)])
    assert np.frombuffer(device.queue.read_buffer(out), np.uint32).tolist() == [21, 6]
    with pytest.raises(wgpu.GPUValidationError, match="not a whole number"):
        pipe(device, src, SCALE=1.5)
    with pytest.raises(wgpu.GPUValidationError, match=r"override 'SCALE' has no default(.|\n)*'constants': \{'SCALE'"):
        pipe(device, src)
    with pytest.raises(wgpu.GPUValidationError, match="no override named 'NOPE'"):
        pipe(device, src, SCALE=1, NOPE=2)


def test_dispatch_needs_bind_groups_and_limits(device):
    p = pipe(device, TWO, label="two.wgsl")
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(p)
    cp.dispatch_workgroups(1)
    cp.end()
    with pytest.raises(wgpu.GPUValidationError, match=r"^two.wgsl:2:1: error: .*no bind group is set at index 0"):
        enc.finish()
    with pytest.raises(wgpu.GPUValidationError, match=r"^t.wgsl:4:1: .*exceeds the device limit max-compute-workgroup-size-z"):
        pipe(device, TWO.replace("@workgroup_size(4)", "@workgroup_size(1, 1, 128)"))
    with pytest.raises(wgpu.GPUValidationError, match="has 2048 invocations"):
        pipe(device, TWO.replace("@workgroup_size(4)", "@workgroup_size(64, 32)"))


def test_runtime_error_says_where(monkeypatch):
    monkeypatch.setenv("EMU_BOUNDS", "strict")       # by default the access is clamped and reported
    device = wgpu.GPU(profile="reference").request_adapter_sync().request_device_sync()
    src = """
    @group(0) @binding(0) var<storage, read_write> x: array<u32>;
    @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
        x[g.x + 2u] = g.x;
    }
    """
    b = device.create_buffer(size=16, usage=BU.STORAGE)
    p = pipe(device, src, label="oob.wgsl")
    with pytest.raises(wgpu.GPUError) as e:
        run(device, p, [bind(device, p, b)])
    assert isinstance(e.value, wgpu.GPUInternalError)
    assert str(e.value).startswith("oob.wgsl:4:9: error: index 4 is out of bounds")
    assert "workgroup (0, 0, 0), subgroup 0, lane 2" in str(e.value) and "EMU_BOUNDS=strict" in str(e.value)


def test_indirect_dispatch(device):
    src = """
    @group(0) @binding(0) var<storage, read_write> hits: atomic<u32>;
    @compute @workgroup_size(2) fn main() { atomicAdd(&hits, 1u); }
    """
    hits = device.create_buffer(size=4, usage=BU.STORAGE | BU.COPY_SRC | BU.COPY_DST)
    args = device.create_buffer_with_data(data=np.array([0, 3, 2, 1, 70000, 1, 1], np.uint32),
                                          usage=BU.INDIRECT)
    p = pipe(device, src)
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(p)
    cp.set_bind_group(0, bind(device, p, hits))
    cp.dispatch_workgroups_indirect(args, 4)       # (3, 2, 1) workgroups of 2
    cp.dispatch_workgroups_indirect(args, 16)      # (70000, 1, 1): beyond the limit, does nothing
    cp.end()
    device.queue.submit([enc.finish()])
    assert np.frombuffer(device.queue.read_buffer(hits), np.uint32).tolist() == [12]
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(p)
    cp.set_bind_group(0, bind(device, p, hits))
    cp.dispatch_workgroups_indirect(hits, 0)
    cp.end()
    with pytest.raises(wgpu.GPUValidationError, match="does not include INDIRECT"):
        enc.finish()


def test_submit_rules(device):
    b = device.create_buffer(size=16, usage=BU.MAP_WRITE | BU.COPY_SRC)
    c = device.create_buffer(size=16, usage=BU.COPY_DST)
    enc = device.create_command_encoder()
    enc.copy_buffer_to_buffer(b, 0, c, 0, 16)
    cb = enc.finish()
    b.map_sync(MM.WRITE)
    with pytest.raises(wgpu.GPUValidationError, match="while it is mapped"):
        device.queue.submit([cb])
    b.unmap()
    device.queue.submit([cb])
    with pytest.raises(wgpu.GPUValidationError, match="submitted once"):
        device.queue.submit([cb])
    enc = device.create_command_encoder()
    enc.begin_compute_pass()
    with pytest.raises(wgpu.GPUValidationError, match="pass is still recording"):
        enc.finish()


def test_what_is_not_emulated_says_so(device):
    enc = device.create_command_encoder()
    for call, what in ((lambda: device.import_external_texture(source=None), "external textures"),
                       (lambda: device.create_render_pipeline(layout="auto", vertex={}), "render pipelines"),
                       (lambda: enc.begin_render_pass(color_attachments=[]), "render passes"),
                       (lambda: device.create_query_set(type="timestamp", count=2), "query sets"),
                       (lambda: device.create_shader_module(code=b"\x03\x02#\x07"), "SPIR-V")):
        with pytest.raises(wgpu.NotSupportedError, match=f"compute work only: .*{what}"):
            call()
    assert issubclass(wgpu.NotSupportedError, NotImplementedError)


def test_wgpu_dialect_cooperative_matrix_needs_its_feature():
    from pathlib import Path
    code = (Path(__file__).resolve().parents[2] / "emu" / "examples" / "gemm_wgpu.wgsl").read_text()
    adapter = wgpu.GPU(profile="nvidia-h200", flavor="wgpu").request_adapter_sync()
    plain = adapter.request_device_sync(required_features=["shader-f16"])
    with pytest.raises(wgpu.GPUValidationError, match="needs the device feature 'cooperative-matrix'"):
        plain.create_shader_module(code=code, label="gemm_wgpu.wgsl")
    device = adapter.request_device_sync(required_features=["shader-f16", "cooperative-matrix"])
    n = 32
    rng = np.random.default_rng(1)
    A = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    B = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    bufs = [device.create_buffer_with_data(data=A, usage=BU.STORAGE),
            device.create_buffer_with_data(data=B, usage=BU.STORAGE),
            device.create_buffer(size=n * n * 4, usage=BU.STORAGE | BU.COPY_SRC)]
    p = pipe(device, code, label="gemm_wgpu.wgsl", M=n, N=n, K=n)
    run(device, p, [bind(device, p, *bufs)], grid=(n // 16, n // 16))
    C = np.frombuffer(device.queue.read_buffer(bufs[2]), np.float32).reshape(n, n)
    assert np.allclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_internal_error_is_one_gpu_internal_error(device, monkeypatch):
    """A bug of emu's (an exception that is not an EmuError) is one GPUInternalError message with
    the shader location, not a traceback of emu's insides."""
    from emu.scheduler import handlers

    def broken(batch, inst, mask, frame):
        raise ZeroDivisionError("a planted bug")
    monkeypatch.setitem(handlers.HANDLERS, "binary", broken)
    monkeypatch.setenv("EMU_JIT", "0")
    p = pipe(device, "@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n"
                     "@compute @workgroup_size(4) fn main(@builtin(local_invocation_index) i: u32) "
                     "{ o[i] = i * 3u; }\n", label="k.wgsl")
    buf = device.create_buffer(size=16, usage=BU.STORAGE)
    with pytest.raises(wgpu.GPUInternalError) as e:
        run(device, p, [bind(device, p, buf)])
    text = str(e.value)
    assert text.startswith("k.wgsl:2:89: error: internal error: ZeroDivisionError: a planted bug")
    assert "please report" in text and "lane 0" in text


IMMEDIATE = """
struct Push { row: u32, scale: f32 }
var<immediate> push: Push;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(4) fn main(@builtin(local_invocation_id) l: vec3u) {
  out[push.row * 4u + l.x] = f32(l.x) * push.scale;
}"""


def immediate_pass(dev, layout, pushes):
    mod = dev.create_shader_module(code=IMMEDIATE, label="imm.wgsl")
    p = dev.create_compute_pipeline(layout=layout, compute={"module": mod, "entry_point": "main"})
    buf = dev.create_buffer(size=32, usage=BU.STORAGE | BU.COPY_SRC)
    enc = dev.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(p)
    cp.set_bind_group(0, dev.create_bind_group(layout=p.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": buf}}]))
    for args in pushes:
        if args:
            cp.set_immediates(*args)
        cp.dispatch_workgroups(1)
    cp.end()
    dev.queue.submit([enc.finish()])
    return np.frombuffer(dev.queue.read_buffer(buf), np.float32)


def push_bytes(row, scale):
    return np.array([row], np.uint32).tobytes() + np.array([scale], np.float32).tobytes()


def test_immediates_feed_each_dispatch_what_the_pass_had_set(device):
    # layout='auto' derives immediate_size from the var (WebGPU's default layout); a partial update
    # (bytes 4..7 only) keeps the row set before it
    got = immediate_pass(device, "auto", [(0, push_bytes(1, 0.5)), (4, push_bytes(9, 2.0), 4, 4)])
    assert got.tolist() == [0, 0, 0, 0, 0, 2, 4, 6]


def test_immediates_errors_name_the_var_and_the_fix(device):
    with pytest.raises(wgpu.GPUValidationError, match=r"imm.wgsl:3:1: .*bytes from 0 were not set in this pass"):
        immediate_pass(device, "auto", [None])
    small = device.create_pipeline_layout(bind_group_layouts=[device.create_bind_group_layout(entries=[
        {"binding": 0, "visibility": SS.COMPUTE, "buffer": {"type": "storage"}}])], immediate_size=4)
    with pytest.raises(wgpu.GPUValidationError, match=r"imm.wgsl:3:1: .*needs 8 bytes of immediate data; the "
                                                      r"pipeline layout's immediate_size is 4"):
        immediate_pass(device, small, [])
    with pytest.raises(wgpu.GPUValidationError, match=r"multiples of 4 and offset \+ size at most the device "
                                                      r"limit max-immediate-size \(256\)"):
        immediate_pass(device, "auto", [(2, push_bytes(0, 1.0))])
    with pytest.raises(wgpu.GPUValidationError, match=r"immediate_size=6\): it must be a multiple of 4"):
        device.create_pipeline_layout(bind_group_layouts=[], immediate_size=6)


def test_immediates_under_wgpu_pys_names_follow_wgpu_native():
    adapter = wgpu.GPU(profile="reference", flavor="wgpu").request_adapter_sync()
    assert "immediates" in adapter.features and adapter.limits["max-immediate-size"] == 256
    plain = adapter.request_device_sync()
    with pytest.raises(wgpu.GPUValidationError, match="created without the 'immediates' feature"):
        plain.create_pipeline_layout(bind_group_layouts=[], immediate_size=8)
    with pytest.raises(wgpu.GPUValidationError, match=r"imm.wgsl:3:1: .*without the 'immediates' feature"):
        immediate_pass(plain, "auto", [])
    dev = adapter.request_device_sync(required_features=["immediates"], required_limits={"max-immediate-size": 8})
    with pytest.raises(wgpu.GPUValidationError, match=r"(?s)imm.wgsl:3:1: .*layout='auto' gives a pipeline no "
                                                      r"immediate data.*immediate_size=8"):
        immediate_pass(dev, "auto", [])
    layout = dev.create_pipeline_layout(bind_group_layouts=[dev.create_bind_group_layout(entries=[
        {"binding": 0, "visibility": SS.COMPUTE, "buffer": {"type": "storage"}}])], immediate_size=8)
    assert immediate_pass(dev, layout, [(0, push_bytes(0, 3.0), 0, 8)]).tolist()[:4] == [0, 3, 6, 9]
