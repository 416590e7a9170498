"""emu/numerics/mma_fast.py against the reference numba kernel (emu/numerics/mma_kernels.py): bit for
bit on random operands, on operands full of zeros, signed zeros, subnormals, infinities and NaNs,
on accumulators that overflow, for every model and format the fast kernel accepts; and through
fragments (frag_mma) against to_matrix -> mma -> to_fragments."""
import ml_dtypes
import numpy as np
import pytest

from emu.numerics import mma_fast as F
from emu.numerics import mma as M
from emu.numerics import mma_kernels as K

DT = {"f16": np.float16, "f32": np.float32, "bf16": ml_dtypes.bfloat16}


@np.errstate(all="ignore")
def operands(rng, S, fin, ct, special, scale):
    a = (rng.uniform(-1, 1, (S, 16, 16)) * scale).astype(DT[fin])
    b = (rng.uniform(-1, 1, (S, 16, 16)) * scale).astype(DT[fin])
    c = (rng.uniform(-1, 1, (S, 16, 16)) * scale).astype(DT[ct])
    if special:
        for x in (a, b):
            ub = np.uint16 if x.dtype.itemsize == 2 else np.uint32
            bits = rng.integers(0, np.iinfo(ub).max, x.shape, dtype=ub).view(x.dtype)
            sel = rng.random(x.shape) < 0.05
            x[sel] = bits[sel]
        a[rng.random(a.shape) < 0.1] = 0
        b[rng.random(b.shape) < 0.1] = -0.0
        c[rng.random(c.shape) < 0.2] = 0
        c[rng.random(c.shape) < 0.05] = -0.0
        c[rng.random(c.shape) < 0.01] = np.inf
        c[rng.random(c.shape) < 0.01] = DT[ct](6e4 if ct == "f16" else 3e38)
        a[:5] = 0
        b[:3] = -0.0
        a[5:8] *= DT[fin](1e-3)
        b[6:9] *= DT[fin](1e-4)
    return a, b, c


CASES = [(m, "f16", ct, rt) for m in ("nvidia-hopper", "exact", "nvidia-ampere", "nvidia-volta")
         for ct, rt in (("f32", "f32"), ("f16", "f16"), ("f16", "f32"))]
CASES += [("exact", "bf16", "f32", "f32"), ("nvidia-hopper", "bf16", "f32", "f32"),
          ("nvidia-hopper", "f32", "f32", "f32"), ("exact", "f32", "f32", "f32")]


@pytest.mark.parametrize("model,fin,ct,rt", CASES)
@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("scale", [1.0, 1e-3, 3e3])
def test_fast_kernel_bit_exact(model, fin, ct, rt, special, scale):
    rng = np.random.default_rng(hash((model, fin, ct, rt, special, scale)) % 2**32)
    a, b, c = operands(rng, 96, fin, ct, special, scale)
    rule = M.get_model(model).rule(M.FORMATS[fin], M.FORMATS[ct], rt)
    prm = M.pack_rule(rule)
    assert F.applies(prm)
    A, B, C = M.bits32(a), M.bits32(b), M.bits32(c)
    want = np.empty(c.shape, np.uint32)
    K.float_mma_serial(A, B, C, want, prm)
    got = np.empty(c.shape, np.uint32)
    F.float_mma(A, B, C, got, prm)
    np.testing.assert_array_equal(got, want)
    par = np.empty(c.shape, np.uint32)
    F.float_mma(A, B, C, par, prm, jobs=2)
    np.testing.assert_array_equal(par, want)


@pytest.mark.parametrize("profile", ["nvidia-h200", "reference", "amd-rdna3"])
def test_frag_mma_matches_matrix_path(profile):
    from emu.profiles import load_profile
    prof = load_profile(profile)
    cfg = prof.find_config(16, 16, 16, "f16", "f32")
    sg = prof.default_subgroup_size
    maps = [prof.lane_map(cfg, r, sg) for r in ("A", "B", "C", "C")]
    rng = np.random.default_rng(7)
    nsub = 12
    a, b, c = operands(rng, nsub, "f16", "f32", True, 1.0)
    fa, fb, fc = (lm.to_fragments(x).reshape(nsub * sg, -1) for lm, x in zip(maps, (a, b, c)))
    subgroups = np.array([0, 2, 3, 7, 11])
    model = prof.model_for(cfg)
    got = F.frag_mma(model, fa, fb, fc, maps, "f32", subgroups, sg, jobs=2)
    assert got is not None
    A, B, C = (lm.to_matrix(f.reshape(nsub, sg, -1)[subgroups]) for lm, f in zip(maps, (fa, fb, fc)))
    D = M.mma(model, A, B, C, "f32")
    want = np.zeros((nsub, sg, maps[3].elements_per_lane), np.float32)
    want[subgroups] = maps[3].to_fragments(D)
    np.testing.assert_array_equal(got.view(np.uint32), want.reshape(nsub * sg, -1).view(np.uint32))


def _check_against_reference(model, fin, ct, rt, a, b, c):
    rule = M.get_model(model).rule(M.FORMATS[fin], M.FORMATS[ct], rt)
    prm = M.pack_rule(rule)
    assert F.applies(prm)
    A, B, C = M.bits32(a), M.bits32(b), M.bits32(c)
    want = np.empty(C.shape, np.uint32)
    K.float_mma_serial(A, B, C, want, prm)
    got = np.empty(C.shape, np.uint32)
    F.float_mma(A, B, C, got, prm)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("model", ["nvidia-hopper", "nvidia-ampere", "nvidia-volta"])
@pytest.mark.parametrize("ct,rt", [("f32", "f32"), ("f16", "f16"), ("f16", "f32")])
def test_fast_kernel_exact_narrow_sums(model, ct, rt):
    """Small integers and powers of two: block sums that cancel or are exactly representable
    (narrower than the result's significand: no rounding, the branch-free path shifts left)."""
    rng = np.random.default_rng(11)
    S = 64
    a = rng.integers(-4, 5, (S, 16, 16)).astype(np.float16)
    b = (rng.integers(-3, 4, (S, 16, 16)) * 2.0 ** rng.integers(-6, 6, (S, 16, 16))).astype(np.float16)
    c = rng.integers(-50, 51, (S, 16, 16)).astype(DT[ct])
    c[:8] = 0
    _check_against_reference(model, "f16", ct, rt, a, b, c)


@pytest.mark.parametrize("model", ["nvidia-hopper", "nvidia-ampere"])
@pytest.mark.parametrize("shape", [(16, 32, 16), (16, 48, 16), (16, 16, 8), (8, 16, 16), (16, 20, 16)])
@pytest.mark.parametrize("special", [False, True])
def test_fast_kernel_other_shapes(model, shape, special):
    """Shapes other than 16x16x16: several blocks along K (the 32-bit row path carries the
    rounded accumulator between blocks), and shapes where that path does not apply."""
    Md, Kd, Nd = shape
    rng = np.random.default_rng(hash((model, shape, special)) % 2**32)
    a, b, c = operands(rng, 48, "f16", "f32", special, 1.0)
    a = np.concatenate([a] * 3, axis=2)[:, :Md, :Kd]
    b = np.concatenate([b] * 3, axis=1)[:, :Kd, :Nd]
    c = c[:, :Md, :Nd]
    _check_against_reference(model, "f16", "f32", "f32", np.ascontiguousarray(a),
                             np.ascontiguousarray(b), np.ascontiguousarray(c))


@pytest.mark.parametrize("model,fin,ct,rt", [("nvidia-hopper", "f16", "f32", "f32"), ("nvidia-hopper", "bf16", "f32", "f32"),
                                             ("nvidia-ampere", "f16", "f16", "f16"), ("exact", "f16", "f16", "f32")])
@pytest.mark.parametrize("special", [False, True])
def test_fast_kernel_against_plain_python_reference(model, fin, ct, rt, special):
    """The fast kernel straight against the readable reference (emu/numerics/mma_ref.py through
    mma.reference_mma), with no numba reference kernel between them."""
    rng = np.random.default_rng(hash((model, fin, ct, rt, special, "ref")) % 2**32)
    a, b, c = operands(rng, 2, fin, ct, special, 1.0)
    prm = M.pack_rule(M.get_model(model).rule(M.FORMATS[fin], M.FORMATS[ct], rt))
    assert F.applies(prm)
    got = np.empty(c.shape, np.uint32)
    F.float_mma(M.bits32(a), M.bits32(b), M.bits32(c), got, prm)
    M.zero_sign(got, prm)
    want = M.reference_mma(model, a, b, c, rt)
    got = (got.astype(np.uint16) if rt == "f16" else got).view(want.dtype)
    np.testing.assert_array_equal(got.view(np.uint16 if rt == "f16" else np.uint32),
                                  want.view(np.uint16 if rt == "f16" else np.uint32))


@pytest.mark.parametrize("fin", ["f16", "bf16"])
@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("scale", [1.0, 1e-3, 3e3])
def test_tile16_bit_exact(fin, special, scale):
    """emu/numerics/mma_tile.py (Hopper's 16x16x16 step in vector registers): where it answers,
    the reference kernel's bits with the model's zero sign applied (as tile_mma's); where it does
    not (specials, subnormal results), it says so."""
    from emu.numerics import mma_tile
    rng = np.random.default_rng(hash((fin, special, scale)) % 2**32)
    a, b, c = operands(rng, 96, fin, "f32", special, scale)
    prm = M.pack_rule(M.get_model("nvidia-hopper").rule(M.FORMATS[fin], M.FORMATS["f32"], "f32"))
    assert mma_tile.covers(prm, 16, 16, 16)
    A, B, C = M.bits32(a), M.bits32(b), M.bits32(c)
    want = np.empty(c.shape, np.uint32)
    K.float_mma_serial(A, B, C, want, prm)
    M.zero_sign(want, prm)
    got = np.empty(c.shape, np.uint32)
    need = np.zeros(96, np.bool_)
    mma_tile.tiles(A.astype(np.uint16), B.astype(np.uint16), C, got, prm, need)
    np.testing.assert_array_equal(got[~need], want[~need])
    assert need.any() if special else (~need).any()


@pytest.mark.parametrize("fin", ["f16", "bf16"])
@pytest.mark.parametrize("zero_pos", [True, False])
def test_tile16_answers_zeros(fin, zero_pos):
    """Zeros stay in mma_tile's vector path: ReLU-like operands (rows and columns of zeros, both
    signs), subnormal operands, terms that cancel to an exact zero, C of both zero signs; the bits
    are the reference kernel's, under the model's zero sign rule and without it (-0 where C and
    every product are negative zeros)."""
    from emu.numerics import mma_tile
    rng = np.random.default_rng(11)
    S = 256
    a = rng.standard_normal((S, 16, 16)).astype(DT[fin])
    b = rng.standard_normal((S, 16, 16)).astype(DT[fin])
    c = np.where(rng.random((S, 16, 16)) < 0.5, np.float32(0), np.float32(-0.0))
    c[S // 2:] = rng.standard_normal((S // 2, 16, 16))
    a[a < 0.3] = 0
    b[b < 0.3] = 0
    a[::4, :, ::2] = -0.0
    b[1::4, ::3] = -0.0
    a[2::4, :, 1::2] = -a[2::4, :, 0::2]        # pairs of terms that cancel
    b[2::4, 1::2] = b[2::4, 0::2]
    a[3::4, 5] = np.finfo(DT[fin]).smallest_subnormal * 3     # (B large: normal products)
    b[3::4] = (np.abs(b[3::4]) + 1) * 256
    a[0::8, :4] = -0.0                          # C and every product -0: the zero's sign is -
    b[0::8] = np.abs(b[0::8])
    c[0::8, :4] = -0.0
    prm = M.pack_rule(M.get_model("nvidia-hopper").rule(M.FORMATS[fin], M.FORMATS["f32"], "f32"))
    prm[K.P_ZERO_POS] = zero_pos
    A, B, C = M.bits32(a), M.bits32(b), M.bits32(c)
    want = np.empty(c.shape, np.uint32)
    K.float_mma_serial(A, B, C, want, prm)
    M.zero_sign(want, prm)
    assert (want == 0).sum() > 1000 and ((want == 1 << 31).sum() > 100) != zero_pos
    got = np.empty(c.shape, np.uint32)
    need = np.zeros(S, np.bool_)
    mma_tile.tiles(A.astype(np.uint16), B.astype(np.uint16), C, got, prm, need)
    assert not need.any()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("scale", [1.0, 1e-2, 30.0])
@pytest.mark.parametrize("zero_pos", [True, False])
def test_tile16_f16_results_bit_exact(special, scale, zero_pos):
    """mma_tile.tile16 with f16 C and results (Hopper's f16 -> f16 step, C and D as uint16): where
    it answers, the reference kernel's bits with the model's zero sign applied; it leaves what is
    outside its case (specials, subnormal and overflowing f16 results) and answers the rest, zeros
    of terms that cancel included."""
    from emu.numerics import mma_tile
    rng = np.random.default_rng(hash((special, scale, zero_pos)) % 2**32)
    S = 128
    a, b, c = operands(rng, S, "f16", "f16", special, scale)
    a[S // 2::4, :, 1::2] = -a[S // 2::4, :, 0::2]       # pairs of terms that cancel
    b[S // 2::4, 1::2] = b[S // 2::4, 0::2]
    c[S // 2::4] = np.where(rng.random((16, 16)) < 0.5, np.float16(0), np.float16(-0.0))
    prm = M.pack_rule(M.get_model("nvidia-hopper").rule(M.FORMATS["f16"], M.FORMATS["f16"], "f16"))
    prm[K.P_ZERO_POS] = zero_pos
    assert mma_tile.covers(prm, 16, 16, 16)
    A, B, C = M.bits32(a), M.bits32(b), M.bits32(c)
    want = np.empty(c.shape, np.uint32)
    K.float_mma_serial(A, B, C, want, prm)
    M.zero_sign(want, prm)
    got = np.empty(c.shape, np.uint16)
    need = np.zeros(S, np.bool_)
    mma_tile.tiles(A.astype(np.uint16), B.astype(np.uint16), C.astype(np.uint16), got, prm, need)
    np.testing.assert_array_equal(got[~need], want[~need].astype(np.uint16))
    if special or scale < 1:            # specials; f16 subnormal results (at 1e-2 most subgroups)
        assert need.any()
    else:
        assert (~need).sum() >= S // 2
        assert (want[~need] & 0x7FFF == 0).sum() > 50        # zeros answered in the vector path
