"""Replay recorded builtin vectors (emu/hw/builtins_record.py) on the emulator and count matches.

    rows = compare(recording, "nvidia-h200", limit=65536)

Each case's own shader runs on ``emu.Device(profile)`` -- the interpreter or the fusion JIT, as
``emu run`` would -- over the recorded inputs (the first ``limit`` of them), and every output is
compared bit for bit with what the GPU returned. ``equal_nan`` also counts any NaN as equal to
any NaN (the measure issue 11 quotes).
"""
from __future__ import annotations

import numpy as np

from .builtins_record import _BITS, _NP, BY_KEY, _dispatch, shader

__all__ = ["run_emu", "compare"]


def _is_nan(bits, t):
    if t == "f32":
        return (bits & 0x7FFFFFFF) > 0x7F800000
    if t == "f16":
        return (bits & 0x7FFF) > 0x7C00
    return np.zeros(bits.shape, bool)


def run_emu(case, arrays, profile: str, limit: int | None = None):
    """The case's shader on the emulator: [output bits] for the first `limit` inputs."""
    from ..api import Device
    n = len(arrays[0]) // (int(case.args[0][1]) if case.args[0][0] == "v" else 1)
    m = n if limit is None else min(n, limit)
    dev = Device(profile)
    pipe = dev.create_compute_pipeline(dev.create_shader_module(shader(case), f"{case.key}.wgsl"))
    bufs = {}
    for j, (a, x) in enumerate(zip(case.args, arrays)):
        k = int(a[1]) if a[0] == "v" else 1
        bufs[(0, j)] = dev.create_buffer(np.ascontiguousarray(x[: m * k]))
    outs = []
    for j, t in enumerate(case.outs):
        outs.append(dev.create_buffer(np.zeros(m, _NP[t])))
        bufs[(0, len(arrays) + j)] = outs[-1]
    dev.dispatch(pipe, bufs, _dispatch(m))
    return [o.read(_BITS[t]) for o, t in zip(outs, case.outs)], m


def compare(recording: dict, profile: str, limit: int | None = 65536, keys=None) -> dict:
    """{case key: {n, equal, equal_nan, example}} for every recorded case (or `keys`)."""
    rows = {}
    for key, (arrays, res, bad) in recording.items():
        if arrays is None or key not in BY_KEY or (keys and key not in keys):
            continue
        case = BY_KEY[key]
        try:
            got, m = run_emu(case, arrays, profile, limit)
        except Exception as e:       # a case the emulator cannot run is a row too
            rows[key] = {"n": 0, "equal": 0, "equal_nan": 0, "error": f"{type(e).__name__}: {e}"[:300]}
            continue
        ok = np.ones(m, bool)
        okn = np.ones(m, bool)
        for g, r, t in zip(got, res, case.outs):
            r = r[:m]
            eq = g == r
            ok &= eq
            okn &= eq | (_is_nan(g, t) & _is_nan(r, t))
        if bad is not None:
            ok |= bad[:m]
            okn |= bad[:m]
        row = {"n": int(m), "equal": int(ok.sum()), "equal_nan": int(okn.sum())}
        w = np.flatnonzero(~ok)
        if w.size:
            i = int(w[0])
            row["example"] = {"index": i, "inputs": [hex(int(x.view(np.uint16 if x.itemsize == 2 else np.uint32)[i]))
                                                     if x.dtype.kind == "f" else int(x[i]) for x in arrays],
                              "gpu": [hex(int(r[i])) for r in res], "emu": [hex(int(g[i])) for g in got]}
        rows[key] = row
    return rows
