"""test-backend-ops on emu's Vulkan ICD, sampled: a few cases of every op, spread over its distinct
parameter values, instead of its first cases in order (which a time limit stops long before the
quantized types, the large shapes and the last variants of each op).

    python -m bench.vulkan_icd_sample pick [OP ...] --per-op N [--max-size S] > cases.json
    python -m bench.vulkan_icd_sample run cases.json --family nv2|khr|scalar [--timeout S] [--out F.jsonl] [OP ...]
        [--chunk N --op-budget S]
    python -m bench.vulkan_icd_sample table F.jsonl ...

pick: of the cases `test-backend-ops support -b Vulkan0` lists supported (on emu's device), per op
the last one and then, greedily, the case that covers most parameter values not yet covered (each
type, flag and permutation; for MUL_MAT/MUL_MAT_ID each type pair with n = 1, <= 8, > 8; for
FLASH_ATTN_EXT each K type and head size with one or several query rows), the smaller first, among
those whose size (the product of their shape numbers) is at most --max-size. run: one process per op
(`-o OP -p` the chosen cases' exact parameters), one JSON line per case: OK, FAIL, "cpu" (the CPU
backend has no such case), or CRASH (the first case not reported when the process died; the rest
run again without it), or "not reached" at the time limit. With --chunk N, each op's cases run
smallest first, N to a process (test-backend-ops runs one -p list in its own order, so a large case
early in it would hold back the small ones after it), each op for at most --op-budget seconds. table: per op and family, passed /
failed / the CPU declined / not reached, the last counted against the supported cases of the op."""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict

from bench.vulkan_icd import _ANSI, FAMILIES, _tbo

CASE = re.compile(r"\s*([A-Z0-9_]+)\((.*)\): (SUPPORTED|OK|FAIL|not supported.*)$")


def params(s: str) -> list:
    """'a=1,b=[1,2],c=f16' -> [('a', '1'), ('b', '[1,2]'), ('c', 'f16')] (commas inside brackets kept)."""
    out, depth, cur = [], 0, ""
    for ch in s + ",":
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            out.append(tuple(cur.split("=", 1)) if "=" in cur else (cur, ""))
            cur = ""
        else:
            cur += ch
    return out


def size(ps) -> float:
    n = 1.0
    for k, v in ps:
        if not (k.startswith("per") or k in ("v", "mode")) and re.fullmatch(r"\[[\d,]+\]|\d+", v):
            for x in re.findall(r"\d+", v):
                n *= max(int(x), 1)
    return n


def _bucket(v: str) -> str:
    n = int(v)
    return "1" if n == 1 else "<=8" if n <= 8 else ">8"


def features(op: str, ps) -> set:
    plain = re.compile(r"-?\d+(\.\d+)?$")
    f = {(k, v) for k, v in ps if not plain.match(v) or len(v) < 2 or k in ("n", "mode", "mask", "sinks", "b")}
    sig = tuple((k, v) for k, v in ps if not plain.match(v) and not v.startswith("["))
    f.add(("types", sig))
    d = dict(ps)
    if op in ("MUL_MAT", "MUL_MAT_ID") and d.get("n", "").isdigit():
        f.add(("types and n", sig, _bucket(d["n"])))
    if op == "FLASH_ATTN_EXT":
        f.add(("fa", d.get("type_K"), d.get("hsk"), d.get("hsv"), _bucket(d.get("nb", "1"))))
    return f


def pick(op: str, cases: list, per_op: int, max_size: float) -> list:
    """Indices into `cases` (the op's parameter strings, in test order) to run, in test order."""
    ps = [params(c) for c in cases]
    sizes = [size(p) for p in ps]
    ok = [i for i in range(len(cases)) if sizes[i] <= max_size] or sorted(range(len(cases)), key=sizes.__getitem__)[:3]
    feats = {i: features(op, ps[i]) for i in ok}
    left = set().union(*feats.values())
    chosen = [ok[-1]]
    left -= feats[ok[-1]]
    while left and len(chosen) < per_op:
        best = max((i for i in ok if i not in chosen),
                   key=lambda i: (len(feats[i] & left) / (1 + math.log(sizes[i])), -sizes[i]), default=None)
        if best is None or not feats[best] & left:
            break
        chosen.append(best)
        left -= feats[best]
    return sorted(chosen)


def supported_cases(tbo, env, ops=()) -> dict:
    """{op: [params, ...]} of the cases the backend reports supported, in test order."""
    r = subprocess.run([str(tbo), "support", "-b", "Vulkan0"] + (["-o", ",".join(ops)] if ops else []), env=env,
                       capture_output=True, text=True, errors="replace", timeout=900)
    out = defaultdict(list)
    for ln in _ANSI.sub("", r.stdout).splitlines():
        m = CASE.match(ln)
        if m and m.group(3) == "SUPPORTED":
            out[m.group(1)].append(m.group(2))
    return dict(out)


def _escape(s: str) -> str:
    return re.sub(r"([\[\]().*+?^$|{}\\])", r"\\\1", s)


def mark(out, op: str, family: str, cases: list, result: str) -> None:
    """One JSON line per case of `cases` with the same `result` (cases a run did not report)."""
    for c in cases:
        out.write(json.dumps(dict(op=op, family=family, case=c, result=result)) + "\n")


def run_op(tbo, env, op: str, cases: list, family: str, timeout: float, out) -> None:
    todo = list(cases)
    while todo:
        t = time.time()
        args = [str(tbo), "test", "-b", "Vulkan0", "-o", op, "-p", "^(" + "|".join(map(_escape, todo)) + ")$"]
        try:
            r = subprocess.run(args, env=env, capture_output=True, text=True, errors="replace", timeout=timeout)
            text, rc = r.stdout + r.stderr, r.returncode
        except subprocess.TimeoutExpired as e:
            text = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
            rc = None
        text = _ANSI.sub("", text)
        done = {}
        for ln in text.splitlines():
            m = CASE.match(ln)
            if m and m.group(1) == op and m.group(3) != "SUPPORTED":
                done[m.group(2)] = "cpu" if m.group(3).startswith("not supported") else m.group(3)
        for c in todo:
            if c in done:
                out.write(json.dumps(dict(op=op, family=family, case=c, result=done[c])) + "\n")
        rest = [c for c in todo if c not in done]
        if rest and rc is None:
            mark(out, op, family, rest, "not reached")
            rest = []
        elif rest:                              # the process died (or stopped) before this case ended
            said = [ln for ln in text.splitlines() if ln.startswith("emu vulkan:")][:1]
            out.write(json.dumps(dict(op=op, family=family, case=rest[0], result="CRASH", rc=rc,
                                      message=(said or text.splitlines()[-1:] or [""])[0][:400])) + "\n")
            rest = rest[1:]
            timeout = max(timeout - (time.time() - t), 30)
        out.flush()
        todo = rest


def run_chunked(tbo, env, op: str, cases: list, family: str, timeout: float, out, chunk: int,
                budget: float | None) -> None:
    """run_op over `cases` smallest first, `chunk` to a process, for at most `budget` seconds in all
    (each process at most `timeout`); the cases left then are not reached."""
    deadline = time.time() + (budget if budget is not None else math.inf)
    cases = sorted(cases, key=lambda c: size(params(c)))
    for i in range(0, len(cases), chunk):
        left = deadline - time.time()
        if left < 15:
            mark(out, op, family, cases[i:], "not reached")
            out.flush()
            return
        run_op(tbo, env, op, cases[i:i + chunk], family, min(left, timeout), out)


def table(files: list, supported: dict) -> str:
    counts = defaultdict(Counter)
    for f in files:
        for ln in open(f):
            d = json.loads(ln)
            counts[(d["op"], d["family"])][d["result"]] += 1
    fams = [f for f in FAMILIES if any(k[1] == f for k in counts)]
    rows = ["| op | " + " | ".join(fams) + " |", "|---|" + "---|" * len(fams)]
    total = {f: Counter() for f in fams}
    for op in sorted({k[0] for k in counts}, key=lambda o: (-len(supported.get(o, ())), o)):
        cells = []
        for f in fams:
            c = counts.get((op, f))
            if not c:
                cells.append("-")
                continue
            ran = c["OK"] + c["FAIL"] + c["cpu"]
            c = Counter(c, reached=max(len(supported.get(op, ())) - ran, 0))
            total[f].update(c)
            crash = f" ({c['CRASH']} crash)" if c["CRASH"] else ""
            cells.append(f"{c['OK']} / {c['FAIL']}{crash} / {c['cpu']} / {c['reached']}")
        rows.append(f"| {op} | " + " | ".join(cells) + " |")
    rows.append("| **all** | " + " | ".join(f"{t['OK']} / {t['FAIL']} / {t['cpu']} / {t['reached']}"
                                             for t in total.values()) + " |")
    return "\n".join(rows) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("pick", "run", "table"))
    ap.add_argument("args", nargs="*")
    ap.add_argument("--per-op", type=int, default=12)
    ap.add_argument("--max-size", type=float, default=3e6)
    ap.add_argument("--family", choices=tuple(FAMILIES), default="nv2")
    ap.add_argument("--timeout", type=float, default=240, help="seconds per op and process")
    ap.add_argument("--out", default=None, help="JSON lines of the cases run (appended)")
    ap.add_argument("--chunk", type=int, default=0, help="run: smallest cases first, this many to a process")
    ap.add_argument("--op-budget", type=float, default=None, help="run --chunk: seconds per op in all")
    a = ap.parse_intermixed_args(argv)
    tbo = _tbo()
    if tbo is None:
        print("bench.vulkan_icd_sample: test-backend-ops is not unpacked (bash scripts/ggml_vulkan.sh)", file=sys.stderr)
        return 1
    from emu.vulkan.build import build
    env = dict(os.environ, VK_DRIVER_FILES=str(build()), GGML_VK_VISIBLE_DEVICES="0", **FAMILIES[a.family])
    if a.what == "pick":
        sup = supported_cases(tbo, env, a.args)
        json.dump({op: [cs[i] for i in pick(op, cs, a.per_op, a.max_size)] for op, cs in sup.items()}, sys.stdout, indent=0)
        return 0
    if a.what == "table":
        print(table(a.args, supported_cases(tbo, env)))
        return 0
    chosen = json.load(open(a.args[0]))
    with open(a.out or os.devnull, "a") as out:
        for op in a.args[1:] or list(chosen):
            if a.chunk:
                run_chunked(tbo, env, op, chosen[op], a.family, a.timeout, out, a.chunk, a.op_budget)
            else:
                run_op(tbo, env, op, chosen[op], a.family, a.timeout, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
