"""emu.hw.randprog's random programs: deterministic by seed, shaped as its docstring says, and
replayed against their H200 recordings (tests/data/hw/h200/randprog_fit.npz: seeds 0..1199, fitted
on; randprog_judge.npz: seeds 100000..100599, recorded in the same device call, kept unread until
the model was frozen at commit 9ad1885; both through Dawn and through Vulkan, H100 driver
580.159.04); randprog_heldout.npz: seeds 200000..201199, recorded on an H200 (driver 580.159.04)
after the model was frozen at 6c699cf (its compiler.py unchanged since). The whole recordings: `python scripts/randprog_compare.py` (minutes); here a sample,
whose per-seed results are pinned so that a change of the compiler model shows."""
import hashlib
from pathlib import Path

import numpy as np
import pytest

from emu.hw import randprog

DATA = Path(__file__).resolve().parents[1] / "data" / "hw" / "h200"


def test_programs_are_deterministic_by_seed():
    h = hashlib.sha256()
    for s in range(8):
        p = randprog.generate(s)
        h.update(p.wgsl.encode())
        h.update(p.glsl.encode())
    assert h.hexdigest() == "5b7b434f2bf0c00869707b69888f22562fd24e6f220f3ff17044a8162c7e90fe"
    assert np.array_equal(randprog.generate(5).inputs(), randprog.generate(5).inputs())


def test_each_family_has_its_shape():
    progs = {randprog.family_of(s): randprog.generate(s) for s in range(4)}
    assert set(progs) == set(randprog.FAMILIES)
    assert "for (" in progs["loop"].wgsl and "for (" in progs["loop"].glsl
    assert "fn h0" in progs["func"].wgsl and "h0(" in progs["func"].glsl
    assert "enable f16;" in progs["f16"].wgsl and "float16_t" in progs["f16"].glsl
    # named temporaries used more than once
    text = progs["f32"].wgsl
    assert any(text.count(f"t{k})") + text.count(f"t{k} ") > 1 for k in range(3, 9))


def _sample(name, paths=randprog.PATHS, per_family=3):
    rec = randprog.load_recording(DATA / name)
    seeds = sorted({s for _, s in rec})
    picked = [s for f in randprog.FAMILIES for s in [t for t in seeds if randprog.family_of(t) == f][:per_family]]
    return {(p, s): rec[(p, s)] for p in paths for s in picked if (p, s) in rec}


# per recording, the sample's (path, seed)s that emu reproduces bit for bit (the model at 9ad1885,
# then branch drvmodel: smoothstep's constant edges, f16 products fused through the widening,
# x - x folded, f16 sums of products paired as HFMA2, mix expanded, constant factors folded,
# vector helpers expanded, f16 smoothstep's (3 - t) - t on the Vulkan path; branch dawnf16: WGSL's
# `for (var k = 0u; ...)` unrolled and paired as GLSL's loop is, f16 sums of 2-3 products one chain,
# round trips through max/select/neg/abs, flatten, division-chain, relu-f16)
PINNED = {
    "randprog_fit.npz": [["dawn", k] for k in range(1, 12)] + [["vulkan", k] for k in range(1, 12)],
    "randprog_heldout.npz": [["dawn", 200000], ["dawn", 200001], ["dawn", 200004], ["dawn", 200006], ["dawn", 200008],
                             ["dawn", 200009], ["dawn", 200010], ["dawn", 200011], ["vulkan", 200000], ["vulkan", 200004],
                             ["vulkan", 200006], ["vulkan", 200008], ["vulkan", 200009], ["vulkan", 200010],
                             ["vulkan", 200011]],
    "randprog_judge.npz": [["dawn", 100000], ["dawn", 100001], ["dawn", 100002], ["dawn", 100004], ["dawn", 100005],
                           ["dawn", 100006], ["dawn", 100007], ["dawn", 100008], ["dawn", 100009], ["dawn", 100010],
                           ["dawn", 100011], ["vulkan", 100000], ["vulkan", 100001], ["vulkan", 100002],
                           ["vulkan", 100004], ["vulkan", 100005], ["vulkan", 100006], ["vulkan", 100007],
                           ["vulkan", 100008], ["vulkan", 100009], ["vulkan", 100010], ["vulkan", 100011]],
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_sample_replays_as_pinned(name):
    sample = _sample(name)
    got = randprog.compare(sample)
    identical = sorted(k for k in sample if k not in set(got["differ"]))
    assert [list(k) for k in identical] == PINNED[name]
