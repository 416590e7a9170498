"""llama.cpp's test-backend-ops on emu's Vulkan ICD and on lavapipe, op by op, on this machine.

    python -m bench.vulkan_icd [OP ...] [--timeout S] [--only emu|lavapipe] [--family nv2|khr|scalar]
                               [--params REGEX] [--out FILE]
    python -m bench.vulkan_icd --sets [SET ...] [--rounds N]

--sets runs the case sets of bench/vulkan_icd.md's warm tables (SETS: an op and a -p regex each,
START none at all) on emu and on lavapipe back to back, N rounds, and prints each run's CPU
seconds and the ratio emu / lavapipe (the target: at most 1).

Each op runs `test-backend-ops test -b Vulkan0 -o OP` (Debian's ggml Vulkan backend, unpacked by
scripts/ggml_vulkan.sh) as its own process: on emu (VK_DRIVER_FILES=$(emu vulkan-icd), the only
Vulkan device) and on lavapipe (the system's drivers, GGML_VK_VISIBLE_DEVICES=0). The table gives
per op and device: cases passed / failed / not supported, whether the run ended (a crash or the time
limit stops it early), the wall time and the CPU time of the process (user + system: on a shared
machine the fairer measure). --family picks ggml's shader family (nv2: its default, NV cooperative
matrix 2 where the device offers it; khr: GGML_VK_DISABLE_COOPMAT2=1; scalar: no cooperative
matrices); a case the backend supports but the run did not reach (time limit, crash) is counted
apart, from `test-backend-ops support`."""
from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPS = ("ADD", "MUL", "SCALE", "SQR", "RMS_NORM", "SOFT_MAX", "CPY", "GET_ROWS", "MUL_MAT")


def _tbo() -> Path | None:
    for p in (os.environ.get("EMU_GGML"), ROOT / ".hwtmp/ggml", Path("/work/main/.hwtmp/ggml")):
        if p and (Path(p) / "test-backend-ops").is_file():
            return Path(p) / "test-backend-ops"
    return None


# the case sets of the warm tables (bench/vulkan_icd.md, branches icdwarm, icdspeed): -o OP -p REGEX
SETS = {
    "MMV1": ("MUL_MAT", r"type_a=(f32|f16|q4_0),type_b=f32,m=16,n=1,k=(256|4096),bs=\[1,1\],nr=\[1,1\],"
                        r"per=\[0,1,2,3\],k_v=0,o=1,src_overlap=0,m_v=0"),
    "MMN9": ("MUL_MAT", r"type_a=(f16|q4_0),type_b=f32,m=16,n=9,k=256,bs=\[1,1\],nr=\[1,1\],per=\[0,1,2,3\]"),
    "FA": ("FLASH_ATTN_EXT", r"hsk=64,hsv=64,nh=4,nr23=\[1,1\],kv=113,nb=1,mask=1,sinks=1,max_bias=0.000000,"
                             r"logit_softcap=0.000000,prec=f32,type_K=f16,type_V=f16,permute=\[0,1,2,3\]"),
    "RMSNORM": ("RMS_NORM", r"ne=\[1025,5,4,3\]"),
    "ROPE": ("ROPE", r"type=f32,ne_a=\[128,(32|40),2,1\],n_dims=128,mode=0,"),
    "GETROWS9": ("GET_ROWS", r"type=q4_0,n=(256|76800),m=5,r=4,be1=(1|7),"),
    "START": ("ADD", "NOMATCH"),          # no case: the start-up and the end alone
}
FAMILIES = {"nv2": {}, "khr": {"GGML_VK_DISABLE_COOPMAT2": "1"},
            "scalar": {"GGML_VK_DISABLE_COOPMAT2": "1", "GGML_VK_DISABLE_COOPMAT": "1"}}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def supported(tbo: Path, op: str, env: dict, params: list) -> int:
    """How many cases of OP the backend reports supported (test-backend-ops support)."""
    r = subprocess.run([str(tbo), "support", "-b", "Vulkan0", "-o", op, *params], env=env, capture_output=True,
                       text=True, errors="replace", timeout=600)
    return sum(_ANSI.sub("", ln).rstrip().endswith(": SUPPORTED") for ln in r.stdout.splitlines()
               if ln.strip().startswith(op + "("))


def run_op(tbo: Path, op: str, env: dict, timeout: float, params: list = (), count_supported: bool = True) -> dict:
    n_supported = supported(tbo, op, env, list(params)) if count_supported else 0
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    try:
        r = subprocess.run([str(tbo), "test", "-b", "Vulkan0", "-o", op, *params], env=env, capture_output=True,
                           text=True, errors="replace", timeout=timeout)
        out, rc = r.stdout + r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
        rc = "timeout"
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [ln for ln in out.splitlines() if ln.strip().startswith(op + "(")]
    ok = sum("OK" in ln for ln in lines)
    fail = sum("FAIL" in ln for ln in lines)
    unsupported = sum("not supported" in ln for ln in lines)
    first_error = next((ln.strip() for ln in out.splitlines() if ln.startswith("emu vulkan:")), "")
    first_fail = next((_ANSI.sub("", ln).strip() for ln in lines if "FAIL" in ln), "")
    return dict(op=op, ok=ok, fail=fail, unsupported=unsupported, ended=rc == 0, rc=rc, wall=wall, cpu=cpu,
                not_reached=max(n_supported - ok - fail, 0), first_error=(first_error or first_fail)[:300])


def run_sets(tbo: Path, devices: dict, names: list, rounds: int) -> list:
    """Each set on each device back to back, `rounds` times: the test run's CPU (user + sys)."""
    rows = []
    for rnd in range(rounds):
        for name in names:
            op, regex = SETS[name]
            cpu = {}
            for dev, env in devices.items():
                r = run_op(tbo, op, env, 600, ["-p", regex], count_supported=False)
                cpu[dev] = r["cpu"]
                rows.append(dict(r, set=name, device=dev, round=rnd))
            ratio = cpu["emu"] / cpu["lavapipe"] if cpu.get("lavapipe") else float("nan")
            print(f"round {rnd} {name:9} " + " ".join(f"{d} {c:6.2f} s" for d, c in cpu.items())
                  + f"  emu/lavapipe {ratio:.2f}  (passed {rows[-1]['ok']}, load {os.getloadavg()[0]:.1f})", flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ops", nargs="*", default=list(OPS))
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--only", choices=("emu", "lavapipe"))
    ap.add_argument("--family", choices=tuple(FAMILIES), default="nv2", help="ggml's shader family")
    ap.add_argument("--params", default=None, help="test-backend-ops -p: a regex over the cases' parameters")
    ap.add_argument("--out", default=None, help="write the markdown table here too")
    ap.add_argument("--sets", action="store_true", help="the positional names are SETS (all of them if none)")
    ap.add_argument("--rounds", type=int, default=2, help="--sets: rounds, emu and lavapipe back to back")
    args = ap.parse_args(argv)
    tbo = _tbo()
    if tbo is None:
        print("bench.vulkan_icd: test-backend-ops is not unpacked (bash scripts/ggml_vulkan.sh)", file=sys.stderr)
        return 1
    from emu.vulkan.build import build
    devices = {"emu": dict(os.environ, VK_DRIVER_FILES=str(build()), GGML_VK_VISIBLE_DEVICES="0"),
               "lavapipe": dict(os.environ, GGML_VK_VISIBLE_DEVICES="0")}
    devices["lavapipe"].pop("VK_DRIVER_FILES", None)
    for env in devices.values():
        env.update(FAMILIES[args.family])
    if args.sets:
        names = [n for n in args.ops if n not in OPS] or list(SETS)
        unknown = [n for n in names if n not in SETS]
        if unknown:
            print(f"bench.vulkan_icd: no set {', '.join(unknown)} (sets: {', '.join(SETS)})", file=sys.stderr)
            return 1
        run_sets(tbo, {d: e for d, e in devices.items() if not args.only or d == args.only}, names, args.rounds)
        return 0
    params = ["-p", args.params] if args.params else []
    rows = []
    for op in args.ops:
        for name, env in devices.items():
            if args.only and name != args.only:
                continue
            r = run_op(tbo, op, env, args.timeout, params)
            r["device"] = name
            rows.append(r)
            print(f"{op:10} {name:9} {args.family:6} ok {r['ok']:4} fail {r['fail']:3} unsupported {r['unsupported']:4} "
                  f"not reached {r['not_reached']:4} "
                  f"{'ended' if r['ended'] else 'stopped (' + str(r['rc']) + ')':16} wall {r['wall']:7.1f} s "
                  f"cpu {r['cpu']:7.1f} s {r['first_error'][:120]}", flush=True)
    table = ["| op | device | family | passed | failed | not supported | not reached | run | wall s | CPU s | first message |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        table.append(f"| {r['op']} | {r['device']} | {args.family} | {r['ok']} | {r['fail']} | {r['unsupported']} | "
                     f"{r['not_reached']} | "
                     f"{'ended' if r['ended'] else 'stopped: ' + str(r['rc'])} | {r['wall']:.1f} | {r['cpu']:.1f} | "
                     f"{r['first_error'].replace('|', '/')[:160]} |")
    text = "\n".join(table) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
