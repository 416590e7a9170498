"""WGSL's atomic_vec2u_min_max extension (Dawn's feature 'atomic-vec2u-min-max'): an atomic<vec2<u32>>
is one 64-bit unsigned value, .x the low word and .y the high word, and atomicStoreMax/atomicStoreMin
are its only operations (no result). Values checked against a 64-bit reference; the refusals
(no enable, workgroup memory, other atomics on it, a device without 64-bit atomics) each have one
message at the source location. Our own shaders."""
import numpy as np
import pytest

import emu
from emu.cli import main
from emu.errors import EmuError

# Each invocation stores a value whose high word (.y) and low word (.x) disagree in order, so a
# per-component or low-word-first comparison gives other results than the 64-bit one.
SRC = """enable atomic_vec2u_min_max;
struct Slot { tag: u32, v: atomic<vec2u> }
@group(0) @binding(0) var<storage, read_write> slots: array<Slot, 2>;
@group(0) @binding(1) var<storage, read> words: array<vec2u>;

fn store_max(p: ptr<storage, atomic<vec2u>, read_write>, x: vec2u) {
    atomicStoreMax(p, x);
}

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let w = words[gid.x];
    store_max(&slots[0].v, w);
    atomicStoreMin(&slots[1].v, w);
}
"""


def _u64(pairs):
    pairs = np.asarray(pairs, np.uint64).reshape(-1, 2)
    return pairs[:, 0] | (pairs[:, 1] << np.uint64(32))


def _run(profile, words, start):
    dev = emu.Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(SRC, "minmax64.wgsl"))
    # Slot: tag at 0, v at 8 (vec2<u32>'s alignment), 16 bytes a slot
    slots = dev.create_buffer(np.array(start, np.uint32))
    dev.dispatch(pipe, {(0, 0): slots, (0, 1): dev.create_buffer(words)}, (words.shape[0] // 32, 1, 1))
    return slots.read(np.uint32)


@pytest.mark.parametrize("profile", ["nvidia-h200", "reference"])
def test_store_max_min_are_64_bit_unsigned(profile):
    rng = np.random.default_rng(7)
    n = 96
    words = rng.integers(0, 1 << 32, (n, 2), dtype=np.uint64).astype(np.uint32)
    words[:8, 1] = 0xFFFFFFFF                    # the largest high word, with small and large low words
    words[:8, 0] = np.arange(8, dtype=np.uint32) * 3
    words[8:12] = [[0xFFFFFFFF, 5], [0, 6], [1, 5], [7, 5]]        # equal high words: the low word decides
    words[12, :] = [0xFFFFFFFF, 0]                # the smallest high word
    words[13, :] = [2, 0]
    start = [0xAAAA, 0, 0, 0, 0xBBBB, 0, 0xFFFFFFFF, 0xFFFFFFFF]
    out = _run(profile, words, start)
    vals = _u64(words)
    assert out[0] == 0xAAAA and out[4] == 0xBBBB                   # the neighbours are untouched
    assert _u64(out[2:4])[0] == vals.max() == (0xFFFFFFFF << 32) | 21
    assert _u64(out[6:8])[0] == vals.min() == 2
    assert list(out[6:8]) == [2, 0]                               # .x the low word, .y the high word
    # the start value takes part: a max below it and a min above it leave it alone
    out = _run(profile, words, [0, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0, 1, 0])
    assert list(out[2:4]) == [0xFFFFFFFF, 0xFFFFFFFF] and list(out[6:8]) == [1, 0]


def test_ir_text_round_trip():
    from emu.isa.printer import print_module
    from emu.isa.textparser import parse_ir
    m, _ = emu.compile_wgsl(SRC, "minmax64.wgsl")
    text = print_module(m)
    assert "atomic<vec2<u32>>" in text and '{fn = "store_max"}' in text and '{fn = "store_min"}' in text
    assert print_module(parse_ir(text)) == text


def _refusal(src, profile="nvidia-h200"):
    with pytest.raises(EmuError) as e:
        emu.Device(profile).create_shader_module(src, "max64.wgsl")
    return e.value


NO_ENABLE = """@group(0) @binding(0) var<storage, read_write> hi_lo: atomic<vec2<u32>>;
@compute @workgroup_size(1)
fn main() {
    atomicStoreMax(&hi_lo, vec2u(1u, 2u));
}
"""


def test_without_the_enable_names_the_extension():
    err = _refusal(NO_ENABLE)
    assert (err.loc.line, err.loc.col) == (1, 55)
    assert err.message == "atomic<vec2<u32>> needs the 'atomic_vec2u_min_max' extension"
    assert err.hint == "add 'enable atomic_vec2u_min_max;' at the top of the shader"


def test_without_the_enable_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "max64.wgsl"
    path.write_text(NO_ENABLE)
    assert main(["ir", str(path)]) == 1
    out = capsys.readouterr().err
    assert f"{path}:1:55: error: atomic<vec2<u32>> needs the 'atomic_vec2u_min_max' extension" in out
    assert "Traceback" not in out


def _with(body, decl="@group(0) @binding(0) var<storage, read_write> a: atomic<vec2u>;"):
    return f"enable atomic_vec2u_min_max;\n{decl}\n@compute @workgroup_size(1)\nfn main() {{\n    {body}\n}}\n"


def test_only_in_storage():
    err = _refusal(_with("atomicStoreMax(&a[0], vec2u(1u, 2u));", "var<workgroup> a: array<atomic<vec2u>, 4>;"))
    assert (err.loc.line, err.loc.col) == (2, 19)
    assert err.message == "atomic<vec2<u32>> can only be in the storage address space, not workgroup"


def test_other_atomics_do_not_take_it():
    err = _refusal(_with("let old = atomicMax(&a, vec2u(1u, 2u));"))
    assert (err.loc.line, err.loc.col) == (5, 15)
    assert err.message == ("atomicMax does not take atomic<vec2<u32>>: the 'atomic_vec2u_min_max' extension has "
                           "only atomicStoreMax and atomicStoreMin (no result)")
    assert err.hint == "write atomicStoreMax(&x, value)"
    err = _refusal(_with("let v = atomicLoad(&a);"))
    assert err.message.startswith("atomicLoad does not take atomic<vec2<u32>>")
    err = _refusal(_with("atomicStoreMin(&a, 3u);", "@group(0) @binding(0) var<storage, read_write> a: atomic<u32>;"))
    assert (err.loc.line, err.loc.col) == (5, 5)
    assert err.message == "atomicStoreMin takes a pointer to atomic<vec2<u32>>, not ptr<storage, atomic<u32>, read_write>"
    assert err.hint == "use atomicMin on atomic<u32> or atomic<i32>"
    err = _refusal(_with("atomicStoreMin(&a, 3u);"))       # the value is a vec2<u32>
    assert (err.loc.line, err.loc.col) == (5, 24)


def test_a_device_without_64_bit_atomics(tmp_path, capsys):
    src = _with("atomicStoreMax(&a, vec2u(1u, 2u));")
    err = _refusal(src, "apple-m1")
    assert (err.loc.line, err.loc.col) == (5, 5)
    assert err.message == ("profile 'apple-m1' has no 64-bit buffer atomics, which atomic<vec2<u32>> "
                           "('atomic_vec2u_min_max', Dawn's feature 'atomic-vec2u-min-max') needs")
    path = tmp_path / "max64.wgsl"
    path.write_text(src)
    assert main(["run", str(path), "--profile", "apple-m1", "--dispatch", "1"]) == 1
    out = capsys.readouterr().err
    assert f"{path}:5:5: error: profile 'apple-m1' has no 64-bit buffer atomics" in out
    assert "Traceback" not in out


def test_wgpu_adapter_feature():
    import emu.wgpu as ew
    src = _with("atomicStoreMax(&a, vec2u(1u, 2u));")
    h200 = ew.GPU(profile="nvidia-h200", flavor="dawn").request_adapter_sync()
    assert "atomic-vec2u-min-max" in h200.features
    assert "atomic-vec2u-min-max" not in ew.GPU(profile="apple-m1", flavor="dawn").request_adapter_sync().features
    h200.request_device_sync(required_features=["atomic-vec2u-min-max"]).create_shader_module(code=src)
    with pytest.raises(Exception) as e:
        h200.request_device_sync().create_shader_module(code=src)
    assert "needs the device feature 'atomic-vec2u-min-max'" in str(e.value)


def test_emu_diff_compares_its_two_words():
    from emu.hw.diff import leaves
    m, _ = emu.compile_wgsl(SRC, "minmax64.wgsl")
    slots = next(g for g in m.globals if g.name == "slots")
    assert [(lf.offset, lf.stride, lf.count, lf.scalar.name, lf.label) for lf in leaves(slots.type, 32, "slots")] == [
        (0, 16, 2, "u32", "slots[{i}].tag"), (8, 16, 2, "u32", "slots[{i}].v.x"), (12, 16, 2, "u32", "slots[{i}].v.y")]
