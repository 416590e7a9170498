"""Texel formats (emu/numerics/texels.py): every bit pattern of the 8-, 10-, 11- and 16-bit
channels decoded and encoded against exact rational arithmetic and WebGPU's rules."""
import pathlib
from fractions import Fraction

import numpy as np
import pytest

from emu.numerics.texels import FORMATS, STORAGE_FORMATS, decode, encode


def _f32_nearest(q: Fraction) -> np.float32:
    """The f32 nearest to q (ties to even), from exact arithmetic."""
    lo = np.float32(float(q))
    cands = sorted({np.nextafter(lo, np.float32(-np.inf)), lo, np.nextafter(lo, np.float32(np.inf))},
                   key=lambda c: (abs(Fraction(float(c)) - q), int(np.float32(c).view(np.uint32)) & 1))
    return cands[0]


def _raw(fmt, chans):
    """One texel's channel integers -> its bytes (little-endian, memory order)."""
    f = FORMATS[fmt]
    if len(set(f.bits)) == 1 and f.bits[0] in (8, 16, 32):
        return np.array(chans, f"<u{f.bits[0] // 8}").view(np.uint8)
    word, shift = 0, 0
    for c, b in zip(chans, f.bits):
        word |= (c & ((1 << b) - 1)) << shift
        shift += b
    return np.array([word], "<u4").view(np.uint8)


@pytest.mark.parametrize("fmt,bits", [("r8unorm", 8), ("r16unorm", 16)])
def test_unorm_decode_is_correctly_rounded_for_every_value(fmt, bits):
    n = 1 << bits
    raw = np.arange(n, dtype=f"<u{bits // 8}").view(np.uint8).reshape(n, -1)
    got = decode(FORMATS[fmt], raw)[:, 0]
    step = 1 if bits == 8 else 97          # 16 bits: every 97th value against exact arithmetic
    for c in range(0, n, step):
        assert got[c] == _f32_nearest(Fraction(c, n - 1)), c
    assert (encode(FORMATS[fmt], decode(FORMATS[fmt], raw)) == raw).all()


@pytest.mark.parametrize("fmt,bits", [("r8snorm", 8), ("r16snorm", 16)])
def test_snorm_decode_every_value_and_minus_one_twice(fmt, bits):
    n = 1 << bits
    raw = np.arange(n, dtype=f"<u{bits // 8}").view(np.uint8).reshape(n, -1)
    got = decode(FORMATS[fmt], raw)[:, 0]
    m = (1 << (bits - 1)) - 1
    for c in range(0, n, 1 if bits == 8 else 89):
        s = c - n if c >= n // 2 else c
        assert got[c] == max(_f32_nearest(Fraction(s, m)), np.float32(-1)), c
    back = encode(FORMATS[fmt], got[:, None].repeat(4, 1))
    most = np.ones(n, bool)
    most[n // 2] = False                   # -2^(n-1) reads as -1, which writes as -(2^(n-1) - 1)
    assert (back[most] == raw[most]).all()
    assert back[n // 2].view(f"<i{bits // 8}")[0] == -m


def test_normalized_writes_clamp_and_round_to_nearest_even():
    v = np.array([[0.5, -1.0, 2.0, np.nan], [np.inf, -np.inf, 0.001, 0.25]], np.float32)
    assert encode(FORMATS["rgba8unorm"], v).tolist() == [[128, 0, 255, 0], [255, 0, 0, 64]]
    # 0.25 * 255 = 63.75 -> 64; 0.5 * 255 = 127.5 -> 128 (even); 0.255 -> 0; NaN -> 0
    s = encode(FORMATS["rgba8snorm"], np.array([[0.5, -1.0, -2.0, np.nan]], np.float32)).view(np.int8)
    assert s.tolist() == [[64, -127, -127, 0]]          # 63.5 -> 64 (even)
    assert encode(FORMATS["rgba8unorm"], np.array([[0.5 / 255 * 3, 0, 0, 0]], np.float32))[0, 0] == 2  # 1.5 -> 2


def test_f16_channels_every_pattern():
    raw = np.arange(1 << 16, dtype="<u2").view(np.uint8).reshape(-1, 2)
    got = decode(FORMATS["r16float"], raw)[:, 0]
    want = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    finite = np.isfinite(want)
    back = encode(FORMATS["r16float"], got[:, None].repeat(4, 1))
    assert (back[finite] == raw[finite]).all()
    # f32 -> f16 rounds to nearest even: 1 + 2^-11 (half way) -> 1.0, 1 + 3 * 2^-11 -> 1 + 2^-9
    v = np.array([[1 + 2 ** -11, 1 + 3 * 2 ** -11, 70000.0, 0]], np.float32)
    assert encode(FORMATS["rgba16float"], v).view("<u2")[0, :3].tolist() == [0x3C00, 0x3C02, 0x7C00]


@pytest.mark.parametrize("chan,mant", [(0, 6), (2, 5)])
def test_rg11b10ufloat_every_pattern(chan, mant):
    n = 1 << (mant + 5)
    chans = [[0, 0, 0] for _ in range(n)]
    for c in range(n):
        chans[c][chan] = c
    raw = np.stack([_raw("rg11b10ufloat", ch) for ch in chans])
    got = decode(FORMATS["rg11b10ufloat"], raw)[:, chan]
    for c in range(n):
        e, m = c >> mant, c & ((1 << mant) - 1)
        want = (np.inf if m == 0 else np.nan) if e == 31 else \
            float(Fraction(m, 1 << mant) * Fraction(2) ** -14) if e == 0 else \
            float((1 + Fraction(m, 1 << mant)) * Fraction(2) ** (e - 15))
        assert (np.isnan(got[c]) and np.isnan(want)) or got[c] == want, c
    finite = np.isfinite(got)
    back = encode(FORMATS["rg11b10ufloat"], decode(FORMATS["rg11b10ufloat"], raw))
    assert (back[finite] == raw[finite]).all()
    ones = encode(FORMATS["rg11b10ufloat"], np.array([[1.0, -3.0, 1e9, 0]], np.float32)).view("<u4")[0, 0]
    assert (ones & 0x7FF, (ones >> 11) & 0x7FF, ones >> 22) == (15 << 6, 0, 31 << 5)   # 1.0, 0, inf


def test_packed_and_ordered_formats():
    raw = _raw("rgb10a2unorm", [1023, 0, 512, 2])
    assert decode(FORMATS["rgb10a2unorm"], raw[None]).tolist() == [[1.0, 0.0, np.float32(512 / 1023), np.float32(2 / 3)]]
    assert decode(FORMATS["rgb10a2uint"], raw[None]).tolist() == [[1023, 0, 512, 2]]
    bgra = np.array([[10, 20, 30, 255]], np.uint8)              # bytes b, g, r, a
    assert decode(FORMATS["bgra8unorm"], bgra).tolist() == [[np.float32(30 / 255), np.float32(20 / 255),
                                                               np.float32(10 / 255), 1.0]]
    assert (encode(FORMATS["bgra8unorm"], decode(FORMATS["bgra8unorm"], bgra)) == bgra).all()
    # missing channels read as 0, alpha as 1; integers keep their low bits
    assert decode(FORMATS["rg32sint"], np.array([[-5, 7]], "<i4").view(np.uint8)).tolist() == [[-5, 7, 0, 1]]
    assert encode(FORMATS["r8uint"], np.array([[300, 0, 0, 0]], np.uint32)).tolist() == [[300 & 255]]


def test_srgb_decode():
    raw = np.array([[0, 128, 255, 128]], np.uint8)
    got = decode(FORMATS["rgba8unorm-srgb"], raw)[0]
    assert got[0] == 0 and got[2] == 1 and got[3] == np.float32(128 / 255)      # alpha stays linear
    assert abs(float(got[1]) - 0.21586050011389926) < 2 ** -25


def test_every_storage_format_round_trips_its_own_values():
    rng = np.random.default_rng(7)
    for name in STORAGE_FORMATS:
        f = FORMATS[name]
        raw = rng.integers(0, 256, (512, f.bytes), dtype=np.uint8)
        vals = decode(f, raw)
        again = decode(f, encode(f, vals))
        same = (again == vals) | (np.isnan(again) & np.isnan(vals)) if vals.dtype.kind == "f" else again == vals
        assert same.all(), name


def test_device_models_of_the_texture_unit():
    from emu.numerics import sampling as S
    from emu.numerics.texels import TextureModel, _to_half, filtered_half, normalized
    c = np.arange(256)
    recip = normalized(c, 255, TextureModel(normalized_decode="mul-reciprocal"))
    assert np.array_equal(recip, c.astype(np.float32) * np.float32(1 / 255))
    assert int(np.sum(recip != normalized(c, 255, TextureModel()))) == 126   # as lavapipe differs (measured)
    x = np.array([1 + 2 ** -11, -(1 + 2 ** -11), 1 + 3 * 2 ** -11, 70000.0, -70000.0, 1.9999], np.float32)
    assert _to_half(x, "nearest-even").tolist() == [0x3C00, 0xBC00, 0x3C02, 0x7C00, 0xFC00, 0x4000]
    assert _to_half(x, "toward-zero").tolist() == [0x3C00, 0xBC00, 0x3C01, 0x7BFF, 0xFBFF, 0x3FFF]
    assert _to_half(x, "nearest-away").tolist() == [0x3C01, 0xBC01, 0x3C02, 0x7C00, 0xFC00, 0x4000]
    assert filtered_half(np.array([1 + 2 ** -11], np.float32))[0] == np.float32(1 + 2 ** -10)
    # 8-bit fixed-point lerp (llvmpipe): w = round(a * 256), (t0 (256 - w) + t1 w + 128) >> 8
    got = S.fixed8_lerp(np.array([[10, 200, 0, 255]]), np.array([[250, 3, 128, 0]]), np.array([0.3], np.float32))
    assert got.tolist() == [[(10 * 179 + 250 * 77 + 128) >> 8, (200 * 179 + 3 * 77 + 128) >> 8,
                             (128 * 77 + 128) >> 8, (255 * 179 + 128) >> 8]]
    # a nearest mip at k + 0.5, three ways; linear levels of detail with 8 bits, rounded down
    lod = np.array([0.5, 1.5, 2.5, 2.49], np.float32)
    for rule, want in (("half-down", [0, 1, 2, 2]), ("half-up", [1, 2, 3, 2]), ("half-even", [0, 2, 2, 2])):
        _, lv, _, _ = S.mip_levels(lod, 4, "nearest", 0.0, 32.0, TextureModel(mip_nearest=rule))
        assert lv.tolist() == want, rule
    _, lo, hi, w = S.mip_levels(np.array([0.3], np.float32), 4, "linear", 0.0, 32.0, TextureModel(lod_bits=8))
    assert (lo[0], hi[0], w[0]) == (0, 1, np.float32(76 / 256))
    # linear weights with 8 bits, halves up (the H200): a * 256 = 1.5 -> 2
    i0, i1, a = S.footprint(np.array([0.25 + 1.5 / 512], np.float32), np.array([2]), True, "clamp-to-edge",
                            np.zeros(1, np.int64), TextureModel(subtexel_bits=8))
    assert (i0[0], i1[0], a[0]) == (0, 1, np.float32(2 / 256))


def test_the_h200_s_8bit_normalized_stores_truncate_then_round_halves_down():
    from emu.numerics.texels import TextureModel
    h200 = TextureModel(norm8_store="truncated-half-down")
    # values the H200 stored (tests/data/hw/h200/textures.npz): x * 255 = 127.5, 64.5555, 166.5359,
    # 244.5325; unorm: q = floor(x * 4096), (q * 255 + 2047) >> 12
    u = np.array([[0.5, 0.25315881, 0.65308213, 0.95895094], [1.0, 2.0, np.nan, -0.5]], np.float32)
    assert encode(FORMATS["rgba8unorm"], u, h200).tolist() == [[127, 64, 167, 244], [255, 255, 0, 0]]
    assert encode(FORMATS["rgba8unorm"], u).tolist() == [[128, 65, 167, 245], [255, 255, 0, 0]]
    # snorm: the magnitude to 11 bits, (q * 127 + 1023) >> 11, the sign after
    s = np.array([[0.5, -0.88614905, 0.48451585, -1.0], [-0.68903637, 1.0, -0.0, 0.0]], np.float32)
    assert encode(FORMATS["rgba8snorm"], s, h200).view(np.int8).tolist() == [[63, -112, 62, -127], [-87, 127, 0, 0]]
    assert encode(FORMATS["rgba8snorm"], s).view(np.int8).tolist() == [[64, -113, 62, -127], [-88, 127, 0, 0]]
    assert encode(FORMATS["bgra8unorm"], u[:1], h200).tolist() == [[167, 64, 127, 244]]     # same rule, bgra order
    assert encode(FORMATS["rgba16unorm"], u[:1], h200).view("<u2")[0, 0] == 32768          # 16-bit: unchanged


def test_the_h200_s_unorm8_filter_rounds_to_16_bits():
    from emu.numerics import sampling as S
    # texels (10, 200, 0, 255) and (250, 3, 128, 0), weight 1/256: N = round((c0 * 255 + c1) * 257 / 256),
    # halves up (128 * 257 / 256 = 128.5 -> 129), read as N / 65535: the H200's outputs
    got = S.unorm16_filter([np.array([[10, 200, 0, 255]], np.float64), np.array([[250, 3, 128, 0]], np.float64)],
                           [np.array([255 / 256]), np.array([1 / 256])])
    assert got[0].tolist() == [np.float32(n / 65535) for n in (2811, 51202, 129, 65279)]
    assert got[0, 2] == np.float32(0.0019684138)


def test_lavapipe_s_float_filter_is_an_fma_lerp_per_axis():
    from emu.numerics import sampling as S
    t0 = np.array([[0.1, 1.0, -3.0, 0.0]], np.float32)
    t1 = np.array([[0.7, 2.0 ** -30, 5.0, 1.0]], np.float32)
    a = np.array([0.3], np.float32)
    d = (t1 - t0).astype(np.float32)
    want = [np.float32(float(x) + float(a[0]) * float(y)) for x, y in zip(t0[0], d[0])]   # exact in f64 here
    assert S.fma_lerp(t0, t1, a)[0].tolist() == want
    # two axes, x first: ((t00, t01) by ax, (t10, t11) by ax) by ay
    c = {(0, 0): t0, (1, 0): t1, (0, 1): t1, (1, 1): t0}
    got = S.reduce_axes(c, [a, np.array([0.5], np.float32)], S.fma_lerp)
    assert got.tolist() == S.fma_lerp(S.fma_lerp(t0, t1, a), S.fma_lerp(t1, t0, a), np.array([0.5], np.float32)).tolist()


def test_srgb_decode_by_a_device_table():
    from emu.numerics.texels import TextureModel
    table = tuple(k / 512 for k in range(256))
    raw = np.array([[0, 128, 255, 128]], np.uint8)
    got = decode(FORMATS["rgba8unorm-srgb"], raw, TextureModel(srgb_decode=table))[0]
    assert got.tolist() == [0, 0.25, 255 / 512, np.float32(128 / 255)]                  # alpha stays linear
    h200 = np.load(pathlib.Path(__file__).resolve().parents[1] / "data" / "hw" / "h200" / "textures.npz")["probe:srgb"]
    from emu.profiles import load_profile
    img = np.repeat(np.arange(256, dtype=np.uint8), 4).reshape(256, 4)
    assert np.array_equal(decode(FORMATS["rgba8unorm-srgb"], img, load_profile("nvidia-h200").textures), h200)


def test_profiles_carry_the_measured_texture_units():
    from emu.profiles import load_profile
    from emu.profiles.profile import ProfileError, _parse
    h200, lp, ref = (load_profile(n).textures for n in ("nvidia-h200", "lavapipe", "reference"))
    assert (h200.normalized_decode, h200.subtexel_bits, h200.lod_bits, h200.mip_nearest, h200.half_store,
            h200.half_filter, h200.unorm8_filter, h200.norm8_store, h200.filter_weights, h200.cube_corners,
            h200.srgb_filter) == \
        ("exact", 8, 8, "half-up", "toward-zero", "aligned-15", "unorm16", "truncated-half-down", "split8", "thirds",
         "aligned-8")
    assert (h200.coordinate_bits, h200.snorm8_filter, ref.coordinate_bits, ref.snorm8_filter) == (21, "snorm16", None, "float")
    assert (ref.filter_weights, ref.cube_corners, ref.half_filter, ref.srgb_filter) == ("product", "mean", "f32", "float")
    assert (lp.filter_weights, lp.half_filter, lp.srgb_filter) == ("product", "f32", "float")
    assert (lp.normalized_decode, lp.unorm8_filter, lp.mip_nearest, lp.half_store) == \
        ("mul-reciprocal", "fixed8-aos", "half-even", "toward-zero")
    assert (lp.wrap_coords, lp.mixed_filters, lp.lod_gradients, ref.wrap_coords, ref.mixed_filters, ref.lod_gradients,
            h200.wrap_coords, h200.lod_gradients) == \
        ("normalized", "snapped-weights", "llvmpipe", "texel", "select", "exact", "texel", "h200-quad")
    assert len(h200.lod_log2) == 256 and h200.lod_log2[:8] == (0, 2, 4, 5, 6, 8, 9, 11) and h200.lod_log2[-1] == 255
    assert lp.lod_log2 is None and ref.lod_log2 is None
    assert ref.subtexel_bits is None and ref.half_store == "nearest-even"
    import json
    from importlib import resources
    doc = json.loads(resources.files("emu.profiles.data").joinpath("reference.json").read_text())
    doc["textures"] = {"subtexel_bits": 40}
    with pytest.raises(ProfileError, match="textures.subtexel_bits.*40 fractional bits"):
        _parse(json.dumps(doc), "x.json", ())
    doc["textures"] = {"lod_gradients": "h200-quad"}
    with pytest.raises(ProfileError, match="textures.lod_gradients: h200-quad reads"):
        _parse(json.dumps(doc), "x.json", ())
    doc["textures"] = {"lod_gradients": "h200-quad", "lod_log2": list(range(255, -1, -1))}
    with pytest.raises(ProfileError, match="textures.lod_log2.*non-decreasing"):
        _parse(json.dumps(doc), "x.json", ())
    doc["textures"] = {"srgb_decode": [0.5] * 255}
    with pytest.raises(ProfileError, match="textures.srgb_decode.*256 numbers"):
        _parse(json.dumps(doc), "x.json", ())
    doc["textures"] = {"mip_nearest": "sideways"}
    with pytest.raises(ProfileError, match="textures.mip_nearest"):
        _parse(json.dumps(doc), "x.json", ())


def test_the_h200_s_integer_weights_and_aligned_sums():
    """Examples the H200 computed (tests/data/hw/h200/textures_new_cases.npz), each with its rule."""
    from emu.numerics import sampling as S
    from emu.numerics.texels import filtered_half
    f = lambda x: np.array([x / 256], np.float32)      # noqa: E731 (an 8-bit fraction)
    # one level, A = 208, B = 104: w11 = round(208 * 104 / 256 = 84.5) = 85, w10 = A - w11, w01 = B - w11
    # (products of the fractions would give 84.5 and three more halves: f16_filter_2d)
    w = S.split_weights(np.array([256.0]), [f(208), f(104)])
    assert {k: v.tolist() for k, v in w.items()} == {(0, 0): [29], (1, 0): [123], (0, 1): [19], (1, 1): [85]}
    # level 0 of two holds 256 - L = 59 units: upper column round(59 * 211 / 256) = 49, then each column
    # by B = 64: under it 49 * 64 / 256 = 12.25 -> 12, under the lower column 10 * 64 / 256 = 2.5 -> 2
    # (halves down there: unorm8_mips)
    w = S.split_weights(np.array([59.0]), [f(211), f(64)])
    assert {k: v.tolist() for k, v in w.items()} == {(0, 0): [8], (1, 0): [37], (0, 1): [2], (1, 1): [12]}
    # a cube corner's weight 10 (38): round(10 / 3) = 3 (13) beside it, the rest 4 (12) diagonal to it
    for corner, want in ((10, [157, 72, 27]), (38, [107, 65, 84])):
        base = [153.0, 69.0, 24.0] if corner == 10 else [95.0, 52.0, 71.0]
        ws = dict(zip(((0, 0), (1, 0), (0, 1), (1, 1)), (np.array([v]) for v in base + [corner])))
        got = S.corner_thirds(ws, {(1, 1): np.array([True])})
        assert [got[k][0] for k in ((0, 0), (1, 0), (0, 1), (1, 1))] == want + [0]
    # f16 texels -0.018753 and 1.4854 with weights 252 and 4: the small one truncated to 2^-14 (15
    # bits aligned to the larger), the sum rounded to f16: 0.0047645569 where the exact sum gives 0.0047492981
    t0, t1 = np.full((1, 4), -0.0187530517578125), np.full((1, 4), 1.4853515625)
    got = filtered_half(S.aligned_sum([t0, t1], [np.array([252 / 256]), np.array([4 / 256])], 15))
    assert got[0, 0] == np.float32(0.0047645569)
    assert filtered_half((252 * t0 + 4 * t1) / 256)[0, 0] == np.float32(0.0047492981)
    # a texel of weight 0 (or value 0) does not set the alignment
    got = S.aligned_sum([np.full((1, 4), 0.0), np.full((1, 4), 0.00030517578125), np.full((1, 4), 0.005615234375)],
                        [np.array([246 / 256]), np.array([10 / 256]), np.array([0.0])], 8)
    assert got[0, 0] == 0.00030517578125 * 10 / 256
    # 3-D: z splits first, then x, then y (unorm8_3d): z = 128 of 256; its x split 104 / 24; y under
    # the upper x round(104 * 104 / 256 = 42.25) = 42, under the lower round-half-down(9.75) = 10
    w = S.split_weights(np.array([256.0]), [f(208), f(104), f(128)])
    assert [w[(x, y, 1)][0] for y in (0, 1) for x in (0, 1)] == [14, 62, 10, 42]
    # the normalised coordinate keeps 21 fractional bits (rounded down) before it meets the size: the
    # H200 weighs texel 7 by 35/256 at u = 0.1794238 on 37 texels, where u * 37 - 0.5 = 6.13868 (35.502 / 256)
    from emu.numerics.texels import TextureModel
    u = np.array([0.1794238], np.float32)
    for bits, want in ((None, 36), (21, 35)):
        model = TextureModel(subtexel_bits=8, coordinate_bits=bits)
        i0, i1, a = S.footprint(u, np.array([37]), True, "clamp-to-edge", np.zeros(1, np.int64), model)
        assert (i0[0], i1[0], a[0] * 256) == (6, 7, want)



def test_the_h200_s_srgb_exponents_and_snorm16_filter():
    from emu.numerics import sampling as S
    from emu.profiles import load_profile
    table = load_profile("nvidia-h200").textures.srgb_decode
    # codes 64..70 decode below 2^-4 (0.0513..0.0610) but align as code 71 (0.0630): one exponent per
    # 8 codes; 63 (0.0496) and 71 keep their own
    e = S.srgb_exponents(np.array([63, 64, 70, 71, 247, 248, 254, 255]), table)
    assert e.tolist() == [-4, -3, -3, -3, 0, 1, 1, 1]
    # so 0.0528 (code 65) beside 0.9375 (code 248) is truncated to a multiple of 2^-7, not 2^-8
    t = [np.full((1, 4), np.float64(np.float32(table[65]))), np.full((1, 4), np.float64(np.float32(table[248])))]
    w = [np.array([128 / 256]), np.array([128 / 256])]
    exps = [S.srgb_exponents(np.full((1, 4), c), table) for c in (65, 248)]
    assert S.aligned_sum(t, w, 8, exps)[0, 0] == (6 / 128 + 0.9375) / 2
    assert S.aligned_sum(t, w, 8)[0, 0] == (13 / 256 + 0.9375) / 2
    # snorm8 -> a snorm16 result: codes -128 (as -128/127) and 100, weights 200 and 56
    got = S.snorm16_filter([np.full((1, 4), -128.0), np.full((1, 4), 100.0)], [np.array([200 / 256]), np.array([56 / 256])])
    assert got[0, 0] == np.float32(np.floor((200 * -128 + 56 * 100) / 256 * 32767 / 127 + 0.5) / 32767)
    assert S.snorm16_filter([np.full((1, 4), -128.0)], [np.array([1.0])])[0, 0] == -1


def test_llvmpipe_log2_is_mesas_polynomial():
    """sampling.llvmpipe_log2: exact at powers of two, within an ulp of log2 elsewhere and not always
    correctly rounded (log2(1.5) one ulp off); the textureSampleGrad levels of detail it reproduces
    bit for bit are in tests/hw/test_textures_hw.py (lavapipe)."""
    from emu.numerics import sampling as S
    x = np.array([1, 2, 0.25, 1024, 3, 1.5, 0.7, 10], np.float32)
    got = S.llvmpipe_log2(x)
    assert got[:4].tolist() == [0, 1, -2, 10]
    ulps = np.abs(got.view(np.int32).astype(np.int64) - np.log2(x.astype(np.float64)).astype(np.float32).view(np.int32))
    assert ulps.tolist() == [0, 0, 0, 0, 0, 1, 0, 0] and got.dtype == np.float32


def test_h200_level_of_detail_from_gradients():
    """sampling.h200_lod on values the H200 gave (textures_lod_probe.npz, traces/hw/README.md): one
    component is truncated to 9 bits and its 8-bit mantissa read through the table (1 + 143/256
    texels and a hair more: 143 -> 164/256; a hair less: 142 -> 163/256); the middle component
    weighs 11/32, rounded (1.5 + 11/32 * 0.4204102 = 1.644516 reads as 1.6445313, the next step:
    184/256 where the exact length gives 183); 11/16 of a diagonal, rounded at 10 bits (dx = 1.25,
    dy = 0.7581787 texels: 11/16 * 2.008179 to 9 bits -> j = 97)."""
    from emu.numerics import sampling as S
    from emu.profiles import load_profile
    tab = load_profile("nvidia-h200").textures.lod_log2
    f32 = np.float32
    u = np.array([[f32(1 + 143 / 256) + f32(2 ** -20), 0], [f32(1 + 143 / 256) - f32(2 ** -20), 0],
                  [1.5, 0.4204102], [1.25, 0], [0, 0]])
    v = np.array([[0, 0], [0, 0], [0, 0], [0.7581787, 0], [0, 0]])
    lod = S.h200_lod(u, v, tab)
    assert lod[:4].tolist() == [tab[143] / 256, tab[142] / 256, tab[165] / 256, tab[97] / 256]
    assert lod[4] == -np.inf
