#!/usr/bin/env python3
"""Run emu's SPIR-V front end (what `emu ir` does) over the SPIR-V modules embedded in llama.cpp's
ggml Vulkan backend (libggml-vulkan.so) and tally the outcome, like scripts/corpus.py.

Usage: python scripts/ggml_spirv.py [LIBRARY] [--jsonl OUT.jsonl] [--timeout 20] [--jobs 2]
                                    [--top 30] [--save FOLDER]

LIBRARY defaults to the one scripts/ggml_vulkan.sh unpacks (.hwtmp/ggml/root/usr/lib/x86_64-linux-
gnu/ggml/backends0/libggml-vulkan.so, beside this checkout or the main one); without it the script
says so and skips (exit 0). Nothing of the package enters the repository.

The library stores its shaders as byte arrays without symbols: a module is found by its magic
number (0x07230203) and kept where its header and instruction stream are well formed (version 1.0-1.6,
schema 0, a nonzero bound, instructions whose word counts tile the stream, OpCapability first, the
last OpFunctionEnd closing it). Identical modules count once. Each module is run in-process in a
worker with a time limit (scripts/corpus.py's pool), with no specialization constants given (their
defaults, as `emu ir` runs), and classed ok / rejected (one clean message; bucketed by it) / crash
(any other exception) / timeout. A module is named by its offset in the library (0x...).
--profile NAME also makes each module's compute pipeline on that device (bindings, the profile's
cooperative-matrix shapes, the verifier), as a program's first dispatch would.

Measured on Debian's libggml0-backend-vulkan 0.27.0 (1,452 modules; 2026-12-07, 2 cores):
  before 16-bit integers (the wheel's grammar): 371 ok, 1,081 rejected, 0 crashes, 0 timeouts
  with 16-bit and 8-bit floats, MulExtended, the VALVE mixed dot product, the newest grammar:
  1,193 ok, 259 rejected (146 DotProductInput4x8BitPacked, 77 PhysicalStorageBufferAddresses, 20
  arrays sized by specialization constants, 7 SpecIds of two types, 6 GroupNonUniformClustered,
  2 WorkgroupMemoryExplicitLayoutKHR, 1 OpGroupNonUniformBallotBitCount), 0 crashes, 0 timeouts;
  --profile lavapipe: 1,017 pipelines (the other 176 of those ask for cooperative-matrix shapes
  lavapipe has not).
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import pathlib
import re
import struct
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
from corpus import run_all  # noqa: E402  (the corpus runner's worker pool)

from emu.cluster.jobs import bucket, compile_one, summary  # noqa: E402

LIB = ".hwtmp/ggml/root/usr/lib/x86_64-linux-gnu/ggml/backends0/libggml-vulkan.so"
MAGIC = struct.pack("<I", 0x07230203)
OP_CAPABILITY, OP_FUNCTION, OP_FUNCTION_END = 17, 54, 56


def module_at(data: bytes, start: int) -> bytes | None:
    """The SPIR-V module whose header starts at `start`, or None where the words there are not one."""
    if start + 24 > len(data):
        return None
    _, version, _, bound, schema = struct.unpack_from("<5I", data, start)
    if version & 0xFF0000FF or not 0x10000 <= version <= 0x10600 or schema != 0 or bound == 0:
        return None
    pos, end, first = start + 20, None, True
    while pos + 4 <= len(data):
        word = struct.unpack_from("<I", data, pos)[0]
        count, opcode = word >> 16, word & 0xFFFF
        if first and opcode != OP_CAPABILITY:
            return None
        first = False
        if count == 0 or pos + 4 * count > len(data):
            break
        if end is not None and pos == end and opcode != OP_FUNCTION:
            break                         # after a function only another function may follow
        pos += 4 * count
        if opcode == OP_FUNCTION_END:
            end = pos
    return data[start:end] if end is not None else None


def extract(data: bytes) -> list[tuple[int, bytes]]:
    """(offset, module) of each distinct well-formed module in `data`, in order of first offset."""
    found, seen, at = [], set(), data.find(MAGIC)
    while at >= 0:
        mod = module_at(data, at)
        if mod is not None:
            digest = hashlib.sha256(mod).digest()
            if digest not in seen:
                seen.add(digest)
                found.append((at, mod))
        at = data.find(MAGIC, at + 1)
    return found


def first_message(message: str, path: str) -> str:
    """The bucket of a refusal: its first message without the instruction it names ('[instruction
    12: %5 = ...]') or the temporary module's path, so that one cause is one row."""
    message = re.sub(r"\s*\[instruction \d+: .*\]$", "", message.replace(path, "MODULE"))
    return bucket(message)


def default_library() -> pathlib.Path:
    for base in (ROOT, pathlib.Path("/work/main")):
        if (base / LIB).is_file():
            return base / LIB
    return ROOT / LIB


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("library", nargs="?", help=f"libggml-vulkan.so (default: {LIB})")
    ap.add_argument("--jsonl", help="write one JSON line per module here")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per module (default 20)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--top", type=int, default=30, help="rejection buckets to print (default 30)")
    ap.add_argument("--save", help="also keep the modules in this folder (0xOFFSET.spv), e.g. for `emu ir`")
    ap.add_argument("--profile", help="also make each module's compute pipeline on this device profile "
                                      "(e.g. lavapipe): what a program's first dispatch needs beyond `emu ir`")
    args = ap.parse_args(argv)
    lib = pathlib.Path(args.library) if args.library else default_library()
    if not lib.is_file():
        print(f"ggml_spirv.py: skipped: {lib} is not there (bash scripts/ggml_vulkan.sh unpacks "
              f"Debian's libggml0-backend-vulkan)", file=sys.stderr)
        return 0
    modules = extract(lib.read_bytes())
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(args.save or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for offset, mod in modules:
            p = folder / f"0x{offset:08x}.spv"
            p.write_bytes(mod)
            paths.append(str(p))
        t0 = time.monotonic()
        job = functools.partial(compile_one, profile=args.profile)
        results = run_all(paths, args.jobs, args.timeout, progress=True, job=job)
        wall = time.monotonic() - t0
    records = [{"job": pathlib.Path(p).name, **r} for p, r in zip(paths, results)]
    for p, r in zip(paths, records):
        if r["class"] == "rejected":
            r["bucket"] = first_message(r["message"], p)
    if args.jsonl:
        with open(args.jsonl, "w") as f:
            for r in records:
                f.write(json.dumps({"module": r["job"], **{k: v for k, v in r.items() if k != "job"}}) + "\n")
    what = f" and pipelines on {args.profile}" if args.profile else ""
    print(summary("corpus", records, f"{len(modules)} distinct SPIR-V modules in {lib}{what} in {wall:.0f} s",
                  args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
