#!/usr/bin/env python3
"""Build emu/numerics/data/nvidia_sfu.npz from a recording of scripts/h200_builtins.py
(the sfu_*.npz that emu/hw/sfu_record.py wrote). Usage: build_sfu_tables.py RECORDING_DIR"""
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from emu.hw.sfu_record import BANDS, load_sfu  # noqa: E402
from emu.numerics import sfu  # noqa: E402

folder = pathlib.Path(sys.argv[1])
z = {}
for f in sorted(folder.glob("sfu_*.npz")):
    with np.load(f) as a:
        z.update({k: a[k] for k in a.files})
S = load_sfu(z, 1)


def band(name, i):
    x, bits, bad = S[name]
    assert not bad.any()
    off = sum(n for _, n in BANDS[name][:i])
    return bits[off:off + BANDS[name][i][1]]


out = {}
out.update(sfu.encode_table("ex2", band("ex2", 0) & 0x7FFFFF))     # 2^(1 + k/2^23): the mantissas
out.update(sfu.encode_table("rcp", band("rcp", 0)))
out.update(sfu.encode_table("rsq", band("rsq", 0)))
dest = ROOT / "emu" / "numerics" / "data" / "nvidia_sfu.npz"
np.savez_compressed(dest, **out)
print(dest, dest.stat().st_size, "bytes")
