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


def test_copy_texture_to_texture_regions_levels_and_the_rules(device):
    a = device.create_texture(size=(4, 4, 2), format="rgba8unorm", mip_level_count=2,
                              usage=TU.COPY_SRC | TU.COPY_DST)
    img = np.arange(4 * 4 * 2 * 4, dtype=np.uint8).reshape(2, 4, 4, 4)
    device.queue.write_texture({"texture": a}, img, {"bytes_per_row": 16, "rows_per_image": 4}, (4, 4, 2))
    b = device.create_texture(size=(8, 8, 1), format="rgba8unorm-srgb", mip_level_count=2,
                              usage=TU.COPY_DST | TU.COPY_SRC)
    enc = device.create_command_encoder()
    # layer 1's 2x3 block at (1, 0) -> b's level 1 (4x4) at (2, 1); a's level 1 (2x2) -> b's level 0 at (6, 6)
    enc.copy_texture_to_texture({"texture": a, "origin": (1, 0, 1)}, {"texture": b, "mip_level": 1, "origin": (2, 1, 0)},
                                (2, 3, 1))
    device.queue.write_texture({"texture": a, "mip_level": 1}, np.full((2, 2, 2, 4), 7, np.uint8),
                               {"bytes_per_row": 8, "rows_per_image": 2}, (2, 2, 2))
    enc.copy_texture_to_texture({"texture": a, "mip_level": 1}, {"texture": b, "origin": (6, 6, 0)}, (2, 2, 1))
    device.queue.submit([enc.finish()])
    lv1 = np.frombuffer(device.queue.read_texture({"texture": b, "mip_level": 1}, {"bytes_per_row": 16}, (4, 4, 1)),
                        np.uint8).reshape(4, 4, 4)
    want = np.zeros((4, 4, 4), np.uint8)
    want[1:4, 2:4] = img[1, 0:3, 1:3]
    assert np.array_equal(lv1, want)
    lv0 = np.frombuffer(device.queue.read_texture({"texture": b}, {"bytes_per_row": 32}, (8, 8, 1)),
                        np.uint8).reshape(8, 8, 4)
    assert (lv0[6:, 6:] == 7).all() and (lv0[:6] == 0).all() and (lv0[:, :6] == 0).all()
    for src, dst, size, why in (
            ({"texture": a}, {"texture": device.create_texture(size=(4, 4, 1), format="rgba8snorm", usage=TU.COPY_DST)},
             (4, 4, 1), "rgba8unorm and rgba8snorm are not copy-compatible"),
            ({"texture": a}, {"texture": a, "origin": (0, 0, 0)}, (2, 2, 1), "same subresources"),
            ({"texture": a}, {"texture": b, "origin": (7, 0, 0)}, (2, 2, 1), r"destination region \(7, 0, 0\) \+ \(2, 2, 1\)"),
            ({"texture": device.create_texture(size=(4, 4, 1), format="rgba8unorm", usage=TU.COPY_DST)}, {"texture": b},
             (1, 1, 1), "the source .* needs usage COPY_SRC")):
        enc = device.create_command_encoder()
        enc.copy_texture_to_texture(src, dst, size)
        with pytest.raises(wgpu.GPUValidationError, match=why):
            enc.finish()
    enc = device.create_command_encoder()
    enc.copy_texture_to_texture({"texture": a, "origin": (0, 0, 0)}, {"texture": a, "origin": (0, 0, 1)}, (4, 4, 1))
    device.queue.submit([enc.finish()])         # layer 0 -> layer 1 of the same texture: allowed
    got = np.frombuffer(device.queue.read_texture({"texture": a, "origin": (0, 0, 1)}, {"bytes_per_row": 16},
                                                  (4, 4, 1)), np.uint8).reshape(4, 4, 4)
    assert np.array_equal(got, img[0])


MS = """
@group(0) @binding(0) var t: texture_multisampled_2d<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f, 2>;
@compute @workgroup_size(1) fn main() {
  out[0] = textureLoad(t, vec2i(1, 1), 2);
  out[1] = vec4f(f32(textureNumSamples(t)), vec2f(textureDimensions(t)), 0.0);
}
"""


def test_multisampled_textures_bind_and_copy_whole(device):
    ms = device.create_texture(size=(4, 4, 1), format="rgba16float", sample_count=4,
                               usage=TU.TEXTURE_BINDING | TU.COPY_SRC | TU.COPY_DST | TU.RENDER_ATTACHMENT)
    ms._emu.write(np.arange(4 * 16 * 4, dtype=np.float16).reshape(4, 4, 4, 4))    # as a render pass would fill it
    copy = device.create_texture(size=(4, 4, 1), format="rgba16float", sample_count=4,
                                 usage=TU.TEXTURE_BINDING | TU.COPY_DST | TU.RENDER_ATTACHMENT)
    enc = device.create_command_encoder()
    enc.copy_texture_to_texture({"texture": ms}, {"texture": copy}, (4, 4, 1))     # every sample
    device.queue.submit([enc.finish()])
    module = device.create_shader_module(code=MS, label="ms.wgsl")
    pipe = device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
    out = device.create_buffer(size=32, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    bg = device.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": copy.create_view()}, {"binding": 1, "resource": {"buffer": out}}])
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipe)
    cp.set_bind_group(0, bg)
    cp.dispatch_workgroups(1)
    cp.end()
    device.queue.submit([enc.finish()])
    got = np.frombuffer(device.queue.read_buffer(out), np.float32).reshape(2, 4)
    texel = 2 * 64 + (1 * 4 + 1) * 4                # sample 2, texel (1, 1)
    assert got.tolist() == [list(range(texel, texel + 4)), [4, 4, 4, 0]]
    single = device.create_texture(size=(4, 4, 1), format="rgba16float", usage=TU.TEXTURE_BINDING)
    with pytest.raises(wgpu.GPUValidationError, match="sample_count 1 where the layout's multisampled is True"):
        device.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": single.create_view()}, {"binding": 1, "resource": {"buffer": out}}])
    with pytest.raises(wgpu.GPUValidationError, match="is multisampled .* copies those only to another texture"):
        device.queue.write_texture({"texture": ms}, bytes(512), {"bytes_per_row": 32}, (4, 4, 1))
    enc = device.create_command_encoder()
    enc.copy_texture_to_texture({"texture": ms}, {"texture": copy}, (2, 2, 1))
    with pytest.raises(wgpu.GPUValidationError, match="a multisampled texture is copied whole"):
        enc.finish()
    with pytest.raises(wgpu.GPUValidationError, match="multisampled texture entry has view_dimension '2d' and a "
                                                       "sample_type other than 'float'"):
        device.create_bind_group_layout(entries=[{"binding": 0, "visibility": wgpu.ShaderStage.COMPUTE,
                                                  "texture": {"sample_type": "float", "multisampled": True}}])
