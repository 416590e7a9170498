"""test-backend-ops on emu's Vulkan ICD, every listed case, spread over several processes: for a
machine with more cores than this one (the device machine has 16), where one process per op in
turn would leave most of them idle.

    python -m bench.vulkan_icd_parallel CASES.json --families khr,scalar [--jobs 16] [--budget 540]
        [--chunk 40] [--skip OP,OP] [--out F.jsonl] [OP ...]

CASES.json is `test-backend-ops support -b Vulkan0`'s supported cases per op ({op: [params]}, as
bench.vulkan_icd_sample's supported_cases writes it; the three families list the same cases on
emu's nvidia-h200). Work units are (family, op, up to --chunk cases), smallest op first; --jobs
threads each start one test-backend-ops process per unit (bench.vulkan_icd_sample.run_op: OK, FAIL,
"cpu", CRASH, "not reached") until --budget seconds have passed; units not started are written as
"not started". `python -m bench.vulkan_icd_sample table F.jsonl` tabulates the lines."""
from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import threading
import time

from bench.vulkan_icd import FAMILIES, _tbo
from bench.vulkan_icd_sample import mark, run_op


def units(cases: dict, families: list, ops: list, skip: set, chunk: int) -> list:
    chosen = [op for op in (ops or sorted(cases, key=lambda o: len(cases[o]))) if op not in skip and op in cases]
    return [(fam, op, cases[op][k:k + chunk]) for op in chosen for fam in families
            for k in range(0, len(cases[op]), chunk)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases")
    ap.add_argument("ops", nargs="*")
    ap.add_argument("--families", default="nv2")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--budget", type=float, default=540, help="seconds for the whole run")
    ap.add_argument("--chunk", type=int, default=40, help="cases per test-backend-ops process")
    ap.add_argument("--skip", default="", help="ops left out, e.g. FLASH_ATTN_EXT,MUL_MAT")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    tbo = _tbo()
    if tbo is None:
        print("bench.vulkan_icd_parallel: test-backend-ops is not unpacked (bash scripts/ggml_vulkan.sh)",
              file=sys.stderr)
        return 1
    from emu.vulkan.build import build
    manifest = str(build())
    todo = queue.Queue()
    for u in units(json.load(open(a.cases)), a.families.split(","), a.ops, set(filter(None, a.skip.split(","))),
                   a.chunk):
        todo.put(u)
    end, lock = time.time() + a.budget, threading.Lock()
    out = open(a.out or os.devnull, "a")

    class Locked:                 # run_op writes and flushes lines; one at a time across threads
        def write(self, s):
            with lock:
                out.write(s)

        def flush(self):
            with lock:
                out.flush()

    def worker():
        while time.time() < end - 20:
            try:
                fam, op, cs = todo.get_nowait()
            except queue.Empty:
                return
            env = dict(os.environ, VK_DRIVER_FILES=manifest, GGML_VK_VISIBLE_DEVICES="0", **FAMILIES[fam])
            run_op(tbo, env, op, cs, fam, end - time.time(), Locked())
    threads = [threading.Thread(target=worker) for _ in range(a.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    while not todo.empty():
        fam, op, cs = todo.get_nowait()
        mark(out, op, fam, cs, "not started")
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
