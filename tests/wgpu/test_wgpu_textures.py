"""emu.wgpu's textures: an unchanged wgpu-py compute program with a sampled texture, a sampler and
a storage texture (create_texture, create_view, create_sampler, queue.write_texture,
copy_texture_to_buffer and back, queue.read_texture), on auto and explicit layouts; WebGPU's
rules as one message each."""
import numpy as np
import pytest

import emu.wgpu as wgpu

BLUR = """
@group(0) @binding(0) var src: texture_2d<f32>;
@group(0) @binding(1) var smp: sampler;
@group(0) @binding(2) var dst: texture_storage_2d<rgba8unorm, write>;
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3u) {
  let uv = (vec2f(id.xy) + vec2f(1.0, 0.5)) / vec2f(textureDimensions(src));
  textureStore(dst, id.xy, textureSampleLevel(src, smp, uv, 0.0));
}
"""
TU = wgpu.TextureUsage


@pytest.fixture(scope="module")
def device():
    return wgpu.GPU(profile="reference").request_adapter_sync().request_device_sync()


def _program(device, layout="auto"):
    """What a wgpu-py program does: upload, dispatch, copy the result into a buffer, read it."""
    img = np.random.default_rng(0).integers(0, 256, (8, 8, 4), dtype=np.uint8)
    src = device.create_texture(size=(8, 8, 1), format=wgpu.TextureFormat.rgba8unorm,
                                usage=TU.TEXTURE_BINDING | TU.COPY_DST)
    device.queue.write_texture({"texture": src, "mip_level": 0, "origin": (0, 0, 0)}, img,
                               {"offset": 0, "bytes_per_row": 32, "rows_per_image": 8}, (8, 8, 1))
    dst = device.create_texture(size=(8, 8, 1), format="rgba8unorm", usage=TU.STORAGE_BINDING | TU.COPY_SRC)
    smp = device.create_sampler(mag_filter="nearest", min_filter="nearest")
    module = device.create_shader_module(code=BLUR, label="blur.wgsl")
    if layout == "auto":
        pipe = device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
        bgl = pipe.get_bind_group_layout(0)
    else:
        bgl = device.create_bind_group_layout(entries=[
            {"binding": 0, "visibility": wgpu.ShaderStage.COMPUTE, "texture": {"sample_type": "float", "view_dimension": "2d"}},
            {"binding": 1, "visibility": wgpu.ShaderStage.COMPUTE, "sampler": {"type": "filtering"}},
            {"binding": 2, "visibility": wgpu.ShaderStage.COMPUTE,
             "storage_texture": {"access": "write-only", "format": "rgba8unorm", "view_dimension": "2d"}}])
        pipe = device.create_compute_pipeline(layout=device.create_pipeline_layout(bind_group_layouts=[bgl]),
                                              compute={"module": module, "entry_point": "main"})
    bg = device.create_bind_group(layout=bgl, entries=[
        {"binding": 0, "resource": src.create_view()}, {"binding": 1, "resource": smp},
        {"binding": 2, "resource": dst.create_view()}])
    out = device.create_buffer(size=256 * 8, usage=wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.MAP_READ)
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipe)
    cp.set_bind_group(0, bg)
    cp.dispatch_workgroups(1, 1)
    cp.end()
    enc.copy_texture_to_buffer({"texture": dst}, {"buffer": out, "bytes_per_row": 256, "rows_per_image": 8},
                               (8, 8, 1))
    device.queue.submit([enc.finish()])
    out.map_sync(wgpu.MapMode.READ)
    rows = np.frombuffer(out.read_mapped(), np.uint8).reshape(8, 256)[:, :32].reshape(8, 8, 4).copy()
    out.unmap()
    return img, rows, dst


@pytest.mark.parametrize("layout", ["auto", "explicit"])
def test_an_unchanged_wgpu_program_with_textures(device, layout):
    img, rows, dst = _program(device, layout)
    want = np.concatenate([img[:, 1:], img[:, -1:]], axis=1)       # nearest at u = (x + 1) / 8
    assert np.array_equal(rows, want)
    back = device.queue.read_texture({"texture": dst, "origin": (2, 3, 0)}, {"bytes_per_row": 8}, (2, 2, 1))
    assert np.array_equal(np.frombuffer(back, np.uint8).reshape(2, 2, 4), want[3:5, 2:4])


def test_copy_buffer_to_texture_and_the_rules(device):
    tex = device.create_texture(size=(4, 2, 1), format="r32float", usage=TU.COPY_DST | TU.COPY_SRC)
    buf = device.create_buffer_with_data(data=np.arange(128, dtype=np.float32), usage=wgpu.BufferUsage.COPY_SRC)
    enc = device.create_command_encoder()
    enc.copy_buffer_to_texture({"buffer": buf, "offset": 0, "bytes_per_row": 256}, {"texture": tex}, (4, 2, 1))
    device.queue.submit([enc.finish()])
    got = np.frombuffer(device.queue.read_texture({"texture": tex}, {"bytes_per_row": 16}, (4, 2, 1)), np.float32)
    assert got.tolist() == [0, 1, 2, 3, 64, 65, 66, 67]
    enc = device.create_command_encoder()
    enc.copy_buffer_to_texture({"buffer": buf, "bytes_per_row": 16}, {"texture": tex}, (4, 2, 1))
    with pytest.raises(wgpu.GPUValidationError, match="bytes_per_row 16 is not a multiple of 256"):
        device.queue.submit([enc.finish()])
    with pytest.raises(wgpu.GPUValidationError, match="'bogus8' is not a texture format"):
        device.create_texture(size=(4, 4, 1), format="bogus8", usage=TU.COPY_DST)
    with pytest.raises(wgpu.GPUValidationError, match="address_mode_u='wrap'"):
        device.create_sampler(address_mode_u="wrap")
    module = device.create_shader_module(code=BLUR, label="blur.wgsl")
    pipe = device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
    with pytest.raises(wgpu.GPUValidationError, match="r32float texture of .* as a texture, which needs usage TEXTURE_BINDING"):
        device.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": tex.create_view()}, {"binding": 1, "resource": device.create_sampler()},
            {"binding": 2, "resource": tex.create_view()}])
    sampled = device.create_texture(size=(4, 4, 1), format="rgba8unorm", usage=TU.TEXTURE_BINDING)
    with pytest.raises(wgpu.GPUValidationError, match="binding 1.* is a sampler in the layout, not a GPUTextureView"):
        device.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": sampled.create_view()}, {"binding": 1, "resource": sampled.create_view()},
            {"binding": 2, "resource": sampled.create_view()}])
