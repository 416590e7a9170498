#!/usr/bin/env python3
"""Build emu/numerics/data/nvidia_sfu.npz from the two H200 recordings of issue 11:
    build_sfu_tables.py FIRST_DIR SECOND_DIR
FIRST_DIR: scripts/h200_builtins.py's output (sfu_*.npz: dense bands of ex2, rcp, rsq);
SECOND_DIR: scripts/h200_tables.py's output (tables_*.npz: sqrt over [1, 4), sin/cos cells)."""
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from emu.hw.sfu_record import BANDS, load_sfu, load_tables, sin_inputs  # noqa: E402
from emu.numerics import sfu  # noqa: E402


def npz(folder, pattern):
    z = {}
    for f in sorted(pathlib.Path(folder).glob(pattern)):
        with np.load(f) as a:
            z.update({k: a[k] for k in a.files})
    return z


S = load_sfu(npz(sys.argv[1], "sfu_*.npz"), 1)
T = load_tables(npz(sys.argv[2], "tables_*.npz"))


def band(name, i):
    x, bits, bad = S[name]
    assert not bad.any()
    off = sum(n for _, n in BANDS[name][:i])
    return bits[off:off + BANDS[name][i][1]]


out = {}
out.update(sfu.encode_table("ex2", band("ex2", 0) & 0x7FFFFF))     # 2^(1 + k/2^23): the mantissas
out.update(sfu.encode_table("rcp", band("rcp", 0)))
out.update(sfu.encode_table("rsq", band("rsq", 0)))
assert not T["sqrt"][2].any()
out.update(sfu.encode_table("sqrt", T["sqrt"][1]))
# lg2: P over [1, 2); where log2 of [0.5, 1) is smaller than 1/2 (and at 0.5) the measured values
P = band("lg2", 0)
n = 1 << 23
neg1 = T["lg2"][1][:n]                     # TABLE_BANDS lg2[0] is [0.5, 1)
keep = (P.view(np.float32) >= 0.5)
keep[0] = True
out.update(sfu.encode_table("lg2", P))
out.update(sfu.encode_table("lg2_neg1", np.where(keep, neg1, sfu.UNKNOWN)))
# sin and cos read one table F over 2^25 cells: sin(q) = F[q], cos(q) = F[q + 2^23] (measured on
# every cell both reach); cells neither reaches stay UNKNOWN
_, q = sin_inputs()
F = np.full(1 << 25, sfu.UNKNOWN, np.uint32)
F[(q + (1 << 23)) % (1 << 25)] = T["cos"][1]
both = F[q] != sfu.UNKNOWN
assert np.array_equal(F[q][both], T["sin"][1][both]), "sin(q) != cos(q - 2^23) somewhere"
F[q] = T["sin"][1]
out.update(sfu.encode_table("sin", F))
# MUFU.TANH.F16 over all f16 inputs (CUDA's tanh.approx.f16), against np.tanh rounded to f16
x16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float64)
with np.errstate(all="ignore"):
    ref16 = np.tanh(x16).astype(np.float16).view(np.uint16).astype(np.int64)
out["tanh_f16/d16"] = (S["tanh_f16"][1].astype(np.int64) - ref16).astype(np.int32)
dest = ROOT / "emu" / "numerics" / "data" / "nvidia_sfu.npz"
sfu.write_tables(out, str(dest))
print(dest, dest.stat().st_size, "bytes; sin cells known:", int((F != sfu.UNKNOWN).sum()))
