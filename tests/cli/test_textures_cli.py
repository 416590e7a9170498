"""emu run with --texture and --sampler: textures from .npy arrays (format from the shader or the
array), empty ones, samplers from words; --output of a texture; each mistake one message."""
import numpy as np

from emu.cli import main as cli

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


def test_textures_and_samplers_from_the_command_line(tmp_path, capsys):
    (tmp_path / "k.wgsl").write_text(BLUR)
    img = np.random.default_rng(0).integers(0, 256, (8, 8, 4), dtype=np.uint8)
    np.save(tmp_path / "img.npy", img)
    args = [str(tmp_path / "k.wgsl"), "--dispatch", "1", "--texture", f"0:0={tmp_path / 'img.npy'}",
            "--texture", "0:2=zeros:8x8", "--output", f"0:2={tmp_path / 'out.npy'}"]
    assert cli(["run"] + args + ["--sampler", "0:1=nearest,clamp"]) == 0
    out = np.load(tmp_path / "out.npy")
    # nearest at u = (x + 1) / 8: texel x + 1 (the last column clamps), v at the centre of row y
    want = np.concatenate([img[:, 1:], img[:, -1:]], axis=1)
    assert out.shape == (8, 8, 4) and out.dtype == np.uint8 and np.array_equal(out, want)
    assert cli(["run"] + args + ["--sampler", "0:1=linear,repeat"]) == 0
    out = np.load(tmp_path / "out.npy")
    # linear half way between texels x + 1/2 and x + 3/2 ... wraps to column 0 at the right edge
    nxt = np.concatenate([img[:, 1:], img[:, :1]], axis=1).astype(np.float64)
    mid = np.rint((img.astype(np.float64) / 255 + nxt / 255) / 2 * 255)
    assert np.abs(out.astype(int) - mid).max() <= 1 and not np.array_equal(out, want)


def test_mistakes_are_one_message(tmp_path, capsys):
    (tmp_path / "k.wgsl").write_text(BLUR)
    np.save(tmp_path / "bad.npy", np.zeros((8, 8, 3), np.uint8))
    base = ["run", str(tmp_path / "k.wgsl"), "--dispatch", "1", "--texture", "0:2=zeros:8x8"]
    assert cli(base + ["--texture", f"0:0={tmp_path / 'bad.npy'}", "--sampler", "0:1=linear"]) == 1
    assert "a uint8 array of shape (8, 8, 3) does not hold r8unorm texels" in capsys.readouterr().err
    assert cli(base + ["--texture", f"0:0={tmp_path / 'bad.npy'}:rgba8unorm", "--sampler", "0:1=linear"]) == 1
    assert "does not hold rgba8unorm texels" in capsys.readouterr().err
    assert cli(base + ["--sampler", "0:1=bilinear"]) == 2
    assert "'bilinear' is not nearest, linear" in capsys.readouterr().err
    np.save(tmp_path / "img.npy", np.zeros((8, 8, 4), np.uint8))
    assert cli(base + ["--texture", f"0:0={tmp_path / 'img.npy'}"]) == 1
    err = capsys.readouterr().err
    assert "k.wgsl:3:1" in err and "no sampler is bound there" in err and "--sampler 0:1=linear,clamp" in err
    assert cli(base + ["--texture", f"0:1={tmp_path / 'img.npy'}"]) == 1
    assert "declares no texture at @group(0) @binding(1) ('smp' is sampler)" in capsys.readouterr().err


def test_a_multisampled_texture_from_the_command_line(tmp_path):
    (tmp_path / "ms.wgsl").write_text("""
@group(0) @binding(0) var t: texture_multisampled_2d<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f, 4>;
@compute @workgroup_size(4) fn main(@builtin(local_invocation_index) i: u32) {
  out[i] = textureLoad(t, vec2i(1, 0), i);
}""")
    samples = np.arange(4 * 2 * 3 * 4, dtype=np.float32).reshape(4, 2, 3, 4)        # (sample, y, x, rgba)
    np.save(tmp_path / "ms.npy", samples)
    np.save(tmp_path / "out.npy", np.zeros((4, 4), np.float32))
    args = ["run", str(tmp_path / "ms.wgsl"), "--dispatch", "1", "--texture", f"0:0={tmp_path / 'ms.npy'}",
            "--buffer", f"0:1={tmp_path / 'out.npy'}", "--output", f"0:1={tmp_path / 'got.npy'}"]
    assert cli(args) == 0
    assert np.array_equal(np.load(tmp_path / "got.npy").reshape(4, 4), samples[:, 0, 1])
    np.save(tmp_path / "ms.npy", samples[:2])
    assert cli(args) == 1
