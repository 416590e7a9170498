"""A trace's size, estimated before it is written, and --trace-limit (emu/trace/budget.py)."""
from pathlib import Path

import numpy as np
import pytest

from emu.trace.budget import human, parse_size

from .conftest import example, gemm_inputs


# workgroups 1..6 loop 200 times, the first and the last not at all: the estimate (from those two)
# is far short, and the limit stops the run while it writes
UNEVEN = """
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_index) i: u32) {
  var n = 0u;
  let reps = select(0u, 200u, w.x > 0u && w.x < 7u);
  for (var k = 0u; k < reps; k++) { n = n + k; }
  o[w.x * 32u + i] = n;
}
"""


def _line(err: str) -> tuple[float, float]:
    """(real, estimated) bytes from the summary line's 'trace FILE (X MB, estimated Y MB)'."""
    import re
    m = re.search(r"trace \S+ \(([\d.]+) (\w+), estimated ([\d.]+) (\w+)\)\n$", err)
    assert m, err
    scale = {"bytes": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}
    return float(m.group(1)) * scale[m.group(2)], float(m.group(3)) * scale[m.group(4)]


def _measured(tmp_path, src, profile, consts, inputs, grid, fmt="jsonl", **sel):
    """(estimate, workgroups traced, the size of the trace then written) through the Python API."""
    import emu
    from emu.api import as_buffers, bind
    from emu.trace import budget
    from emu.trace.select import Selection
    from emu.trace.tracer import Tracer
    path = tmp_path / f"t.{fmt}"
    tracer = Tracer(path, format=fmt, selection=Selection.parse(**sel))
    dev = emu.Device(profile, tracer=tracer)
    mod = dev.create_shader_module(src, "k.wgsl")
    pipe = dev.create_compute_pipeline(mod, constants=consts)
    bufs = {k: dev.create_buffer(v) for k, v in inputs.items()}
    pl = pipe.pipeline
    est, n, _ = budget.estimate(pl, bind(pl.module, pl.entry, as_buffers(pl.module, bufs)[0]), grid, tracer)
    tracer.begin(dev, mod, pipe, grid)
    dev.dispatch(pipe, bufs, grid)
    tracer.end()
    return est, n, path.stat().st_size


def _gemm_case(n=64):
    a, b = gemm_inputs(n)
    return (example("gemm_dawn"), "nvidia-h200", {"M": n, "N": n, "K": n},
            {(0, 0): a, (0, 1): b, (0, 2): np.zeros(n * n, np.float32)}, (n // 32, n // 32, 1))


def _naive_case(n=32):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in "ab")
    return (NAIVE, "reference", {"M": n, "N": n, "K": n},
            {(0, 0): a, (0, 1): b, (0, 2): np.zeros(n * n, np.float32)}, (n // 16, n // 16, 1))


@pytest.mark.parametrize("case,fmt,sel,traced", [
    ("gemm", "jsonl", {}, 4),                                       # the default ops: coop, barrier
    ("gemm", "perfetto", {}, 4),
    ("gemm", "jsonl", {"ops": "all", "workgroups": "1,*,0"}, 2),
    ("gemm", "jsonl", {"subgroups": "0", "lanes": "0-7"}, 4),
    ("naive", "jsonl", {"ops": "all"}, 4),
    ("naive", "jsonl", {"ops": "memory", "lanes": "0-7"}, 4),
])
def test_the_estimate_is_close_to_the_size_written(tmp_path, case, fmt, sel, traced):
    est, n, size = _measured(tmp_path, *(_gemm_case() if case == "gemm" else _naive_case()), fmt=fmt, **sel)
    assert n == traced
    assert abs(est - size) <= 0.01 * size, (est, size)


def test_run_names_the_trace_with_its_size_and_estimate(cli, tmp_path, naive_gemm):
    trace = tmp_path / "t.jsonl"
    code, out, err = cli(*naive_gemm(32), "--trace", trace, "--trace-ops", "all")
    assert code == 0, err
    real, est = _line(err)
    size = trace.stat().st_size
    assert abs(real - size) <= 0.05 * size and abs(est - size) <= 0.06 * size


def test_a_trace_over_the_limit_stops_before_writing(cli, tmp_path, naive_gemm):
    trace = tmp_path / "t.jsonl"
    code, out, err = cli(*naive_gemm(32), "--trace", trace, "--trace-ops", "all", "--trace-limit", "3M",
                         "--output", f"0:2={tmp_path}/c.npy")
    assert code == 1 and out == ""
    first, hint = err.splitlines()
    assert first.startswith("emu: error: the trace would be about ")
    assert first.endswith("over --trace-limit 3.0 MB; nothing was written")
    assert "(4 workgroups traced, ~" in first and "--trace-ops all, --trace-workgroups *" in first
    assert hint == ("   hint: trace less: --trace-ops coop,barrier (or OP names) instead of all, --trace-workgroups "
                    "\"0,0,0\", --trace-subgroups 0, --trace-lanes 0-7; or raise the limit with --trace-limit "
                    "SIZE (e.g. 5G; none for no limit)")
    assert not trace.exists() and not (tmp_path / "c.npy").exists()
    # narrowed as the message says, or with a higher limit: it runs
    code, out, err = cli(*naive_gemm(32), "--trace", trace, "--trace-ops", "all", "--trace-limit", "3M",
                         "--trace-workgroups", "0,0,0", "--trace-lanes", "0-7")
    assert code == 0, err
    code, out, err = cli(*naive_gemm(32), "--trace", trace, "--trace-ops", "all", "--trace-limit", "none")
    assert code == 0, err


def test_a_trace_that_passes_the_limit_while_writing_is_removed(cli, tmp_path):
    (tmp_path / "u.wgsl").write_text(UNEVEN)
    trace = tmp_path / "t.jsonl"
    args = ["run", tmp_path / "u.wgsl", "--dispatch", "8", "--buffer", "0:0=zeros:256:u32", "--trace", trace,
            "--trace-ops", "all"]
    code, out, err = cli(*args, "--trace-limit", "none")
    assert code == 0, err
    real, est = _line(err)
    assert est < real / 10                  # the two probed workgroups skip the loop
    code, out, err = cli(*args, "--trace-limit", str(int(real / 2)))
    assert code == 1
    assert err.startswith(f"emu: error: the trace passed --trace-limit {human(int(real / 2))} while writing "
                          f"'{trace}'; the run stopped and the partial trace was removed\n")
    assert not trace.exists()


def test_sizes():
    assert parse_size("500M") == 500_000_000 and parse_size("2GB") == 2 * 10**9
    assert parse_size("4GiB") == 4 << 30 and parse_size("1.5g") == 1_500_000_000 and parse_size("123") == 123
    assert parse_size("none") is None and parse_size("0") is None
    from emu.errors import UsageError
    with pytest.raises(UsageError, match="expected a size such as 500M"):
        parse_size("lots")


NAIVE = (Path(__file__).resolve().parents[2] / "bench" / "shaders" / "matmul_naive.wgsl").read_text()


def test_a_probe_that_stops_with_an_error_leaves_it_to_the_run(cli, tmp_path):
    """The last workgroup (a probe) fails first; the run reports the error it meets itself, the
    same as without --trace."""
    (tmp_path / "oob.wgsl").write_text("@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n"
                                       "@compute @workgroup_size(1) fn main(@builtin(workgroup_id) w: vec3<u32>) "
                                       "{ o[w.x * 2u] = 1u; }\n")
    args = ["run", tmp_path / "oob.wgsl", "--dispatch", "8", "--buffer", "0:0=zeros:8:u32", "--bounds", "strict"]
    plain = cli(*args)
    traced = cli(*args, "--trace", tmp_path / "t.jsonl")
    assert plain[0] == traced[0] == 1 and plain[2] == traced[2]
    assert "workgroup (4, 0, 0)" in plain[2], plain[2]
