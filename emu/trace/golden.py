"""Golden traces and lane-map pictures of the example kernels (traces/).

    python -m emu.trace.golden           # regenerate traces/ after an intended change
    python -m emu.trace.golden --check   # exit 1 and name the files that differ (tests do this)

For each example kernel (emu/examples/gemm_dawn.wgsl, gemm_wgpu.wgsl) and each profile of
PROFILES: a C = A x B GEMM with M = N = K = 32 on fixed inputs (below), traced with the default
ops (cooperative ops and barriers) for subgroup 0 of workgroup (0, 0, 0), lanes 0, 1, 16 and 17
(every lane would make the files ~8 times larger; the lane maps are pictured whole); the
explanation of element (2, 3) of that subgroup's last multiply-add, from a trace of every lane
(`explain/`); and, per profile, an SVG of the A, B and C lane maps of the config the kernels use
(`lanes/`).
"""
from __future__ import annotations

import argparse
import difflib
import json
import sys
from importlib import resources
from pathlib import Path

import numpy as np

PROFILES = ("nvidia-h200", "amd-rdna3", "reference")
KERNELS = {"gemm_dawn": 32, "gemm_wgpu": 16}      # kernel -> output block per workgroup
SIZE = 32
CONFIG = "f16xf16->f32:16x16x16"
SELECTION = {"workgroups": "0,0,0", "subgroups": "0", "lanes": "0,1,16,17"}
EXPLAIN = (2, 3)
ROOT = Path(__file__).resolve().parents[2] / "traces"


def _value(i: np.ndarray, seed: int) -> np.ndarray:
    """Deterministic f16 inputs with 4 significant bits and exponents from 2^-10 to 2^0, so that
    products line up at different exponents (alignment and rounding matter) while the values
    stay short to print: +-(8..15)/8 * 2^-(0..10)."""
    h = (i.astype(np.uint64) * np.uint64(2654435761) + np.uint64(seed * 40503)) & np.uint64(0xFFFFFFFF)
    h = (h >> np.uint64(8)).astype(np.int64)
    sign = np.where(h & 1, -1.0, 1.0)
    mant = 8 + ((h >> 1) & 7)
    exp = (h >> 4) % 11
    return (sign * mant / 8.0 * np.exp2(-exp.astype(np.float64))).astype(np.float16)


def inputs(size: int = SIZE) -> tuple[np.ndarray, np.ndarray]:
    n = np.arange(size * size)
    return _value(n, 1).reshape(size, size), _value(n, 2).reshape(size, size)


def trace_records(kernel: str, profile: str, selection: dict | None = None) -> tuple[list[dict], np.ndarray]:
    """The trace records of one golden run and the output matrix C."""
    from ..api import Device
    from .select import Selection
    from .tracer import MemorySink, Tracer
    name = f"{kernel}.wgsl"
    src = resources.files("emu.examples").joinpath(name).read_text()
    tr = Tracer(sink=MemorySink(), selection=Selection.parse(**(SELECTION if selection is None else selection)))
    dev = Device(profile, tracer=tr)
    mod = dev.create_shader_module(src, f"emu/examples/{name}")
    pipe = dev.create_compute_pipeline(mod, constants={"M": SIZE, "N": SIZE, "K": SIZE})
    a, b = inputs()
    bufs = {(0, 0): dev.create_buffer(a), (0, 1): dev.create_buffer(b),
            (0, 2): dev.create_buffer(size=4 * SIZE * SIZE)}
    grid = (SIZE // KERNELS[kernel], SIZE // KERNELS[kernel], 1)
    tr.begin(dev, mod, pipe, grid)
    try:
        dev.dispatch(pipe, bufs, grid)
    finally:
        tr.end()
    return tr.records, bufs[(0, 2)].read(np.float32).reshape(SIZE, SIZE)


def render_all() -> dict[str, str]:
    """Every golden file: relative path -> content."""
    from . import lanes
    from .explain import Trace, explain_event, render_text
    from .tracer import dumps
    out: dict[str, str] = {}
    for kernel in KERNELS:
        for prof in PROFILES:
            recs, _ = trace_records(kernel, prof)
            out[f"{kernel}.{prof}.jsonl"] = "".join(dumps(r) + "\n" for r in recs)
            full, _ = trace_records(kernel, prof, {k: v for k, v in SELECTION.items() if k != "lanes"})
            t = Trace(full, f"{kernel}.{prof}")
            out[f"explain/{kernel}.{prof}.txt"] = render_text(explain_event(t, t.mma_events()[-1], *EXPLAIN))
    for prof in PROFILES:
        for role in "ABC":
            out[f"lanes/{prof}.{role}.svg"] = lanes.render_svg(lanes.view(prof, CONFIG, role))
    return out


def write(root: Path = ROOT) -> list[str]:
    files = render_all()
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    for p in _existing(root):
        if p not in files:
            (root / p).unlink()
    return sorted(files)


def _existing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.suffix in (".jsonl", ".svg", ".txt"))


def check(root: Path = ROOT) -> list[str]:
    """What differs between traces/ and a fresh rendering, one line per problem ([] if nothing)."""
    files = render_all()
    problems = []
    for rel, text in sorted(files.items()):
        p = root / rel
        if not p.exists():
            problems.append(f"{rel}: missing")
            continue
        old = p.read_text(encoding="utf-8")
        if old != text:
            problems.append(f"{rel}: differs: {_first_difference(old, text, rel)}")
    for rel in _existing(root):
        if rel not in files:
            problems.append(f"{rel}: not produced any more")
    return problems


def _first_difference(old: str, new: str, rel: str) -> str:
    a, b = old.splitlines(), new.splitlines()
    for i, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            if rel.endswith(".jsonl"):
                where = _json_path(json.loads(x), json.loads(y))
                return f"line {i}, at {where}"
            return f"line {i}: {next(difflib.unified_diff([x], [y], lineterm='', n=0), '')[:0]}{x[:80]!r} -> {y[:80]!r}"
    return f"{len(a)} lines before, {len(b)} now"


def _json_path(x, y, path="$") -> str:
    if type(x) is not type(y):
        return f"{path}: {json.dumps(x)[:60]} -> {json.dumps(y)[:60]}"
    if isinstance(x, dict):
        for k in list(x) + [k for k in y if k not in x]:
            if x.get(k) != y.get(k):
                return _json_path(x.get(k), y.get(k), f"{path}.{k}")
    if isinstance(x, list):
        if len(x) != len(y):
            return f"{path}: {len(x)} items -> {len(y)}"
        for i, (p, q) in enumerate(zip(x, y)):
            if p != q:
                return _json_path(p, q, f"{path}[{i}]")
    return f"{path}: {json.dumps(x)[:60]} -> {json.dumps(y)[:60]}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m emu.trace.golden", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    ap.add_argument("--root", type=Path, default=ROOT, help="the traces folder (default: traces/)")
    args = ap.parse_args(argv)
    if args.check:
        problems = check(args.root)
        for p in problems:
            print(p)
        if problems:
            print("golden traces changed; if that is intended, run: python -m emu.trace.golden")
            return 1
        print(f"golden traces in {args.root}: unchanged")
        return 0
    files = write(args.root)
    total = sum((args.root / f).stat().st_size for f in files)
    print(f"wrote {len(files)} files ({total // 1024} KB) to {args.root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
