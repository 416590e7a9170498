"""Campaigns (emu/cluster/campaign.py) on a LocalCluster of 2 workers: results streamed to JSONL and
resumable; a worker killed halfway loses nothing (the same table as an uninterrupted run); a job
that hangs is stopped by its own time limit and reported; the scheduler going away is one message
with the finished results kept."""
from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emu.cluster import Cluster, campaign
from emu.cluster.jobs import summary
from emu.errors import HostError

ROOT = Path(__file__).resolve().parents[2]


def corpus(folder: Path, copies: int = 3) -> list:
    """The project's test shaders (a few times over), a file emu rejects and one it takes long on."""
    shaders = sorted(ROOT.glob("tests/shaders/*.wgsl")) + sorted(ROOT.glob("tests/shaders/realworld/*.wgsl"))
    for i in range(copies):
        for s in shaders:
            (folder / f"{i}_{s.name}").write_text(s.read_text())
    (folder / "bad.wgsl").write_text("@compute @workgroup_size(1) fn main( {\n")
    (folder / "tex.wgsl").write_text("@group(0) @binding(0) var t: texture_2d<f32>;\nfn f( {\n")
    return sorted(folder.rglob("*.wgsl"))


def jobs_of(folder: Path, timeout: float = 20.0):
    from emu.cluster.jobs import tint_scope
    return [(str(p.relative_to(folder)), {"path": str(p), "timeout": timeout},
             {"scope": tint_scope(p, p.read_text(), False)}) for p in sorted(folder.rglob("*.wgsl"))]


@pytest.fixture(scope="module")
def cluster():
    with Cluster("local:2") as cl:
        yield cl


def table(records):
    return summary("corpus", records, "title").splitlines()[1:]


def test_a_worker_killed_halfway_gives_the_same_table(cluster, tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    corpus(folder)
    jobs = jobs_of(folder)
    whole = campaign.run(cluster, "corpus", jobs, tmp_path / "a.jsonl", 25.0, stream=io.StringIO())
    pids = cluster.client.run(os.getpid)
    killed = []

    def kill_one(record, n):
        if n == len(jobs) // 2 and not killed:
            killed.append(next(iter(pids.values())))
            os.kill(killed[0], signal.SIGKILL)
    err = io.StringIO()
    again = campaign.run(cluster, "corpus", jobs, tmp_path / "b.jsonl", 25.0, stream=err, on_result=kill_one)
    assert killed and killed[0] not in cluster.client.run(os.getpid).values()
    assert table(again) == table(whole)
    assert [r["class"] for r in again] == [r["class"] for r in whole]
    lines = [json.loads(x) for x in (tmp_path / "b.jsonl").read_text().splitlines()]
    assert sorted(r["job"] for r in lines) == sorted(j for j, _, _ in jobs)       # each once
    t = table(whole)
    assert t[1].split() == ["in-scope", str(len(jobs) - 2), "1", "0", "0", str(len(jobs) - 1), f"{100 * (len(jobs) - 2) / (len(jobs) - 1):.1f}%"]
    assert t[2].split() == ["textures", "0", "1", "0", "0", "1", "0.0%"]
    assert f"campaign corpus: {len(jobs)}/{len(jobs)} done (ok {len(jobs) - 2}, rejected 2)" in err.getvalue()


def test_results_stream_to_jsonl_and_a_restart_skips_finished_jobs(cluster, tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    corpus(folder, copies=1)
    jobs = jobs_of(folder)
    out = tmp_path / "r.jsonl"
    first = campaign.run(cluster, "corpus", jobs[:5], out, 25.0, stream=io.StringIO())
    with open(out, "a") as f:
        f.write('{"job": "cut sho')                    # a line cut short by a crash
    err = io.StringIO()
    seen = []
    both = campaign.run(cluster, "corpus", jobs, out, 25.0, stream=err, on_result=lambda r, n: seen.append(r["job"]))
    assert sorted(seen) == sorted(j for j, _, _ in jobs[5:])
    assert both[:5] == first
    assert f"5 of {len(jobs)} jobs already in {out}: running the other {len(jobs) - 5}" in err.getvalue()
    assert len(campaign.read_results(out)) == len(jobs)


def long_shader(path: Path) -> None:
    """40,000 statements: the front end takes well over a second on them."""
    body = "\n".join(f"  x = x + {i}u;" for i in range(40000))
    path.write_text(f"@compute @workgroup_size(1) fn main() {{\n  var x = 0u;\n{body}\n}}\n")


def test_a_hanging_job_is_stopped_by_its_own_limit_and_reported_once(cluster, tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "ok.wgsl").write_text((ROOT / "tests/shaders/vecadd.wgsl").read_text())
    long_shader(folder / "long.wgsl")
    # the long shader gets 0.3 s; the quick one its usual limit, so a loaded machine cannot time it out
    jobs = [(name, dict(p, timeout=0.3 if name == "long.wgsl" else 20.0), meta) for name, p, meta in jobs_of(folder)]
    t0 = time.monotonic()
    recs = campaign.run(cluster, "corpus", jobs, tmp_path / "t.jsonl", 0.3 + campaign.GRACE, stream=io.StringIO())
    assert time.monotonic() - t0 < 30
    assert [(r["job"], r["class"]) for r in recs] == [("long.wgsl", "timeout"), ("ok.wgsl", "ok")]
    assert "TIMEOUT: long.wgsl: None (None)" in summary("corpus", recs, "t")
    assert campaign.exit_code(recs) == 1


def test_a_job_past_the_hard_limit_is_killed_with_its_sandbox(cluster, tmp_path):
    long_shader(tmp_path / "long.wgsl")
    # its own alarm at 30 s; the sandbox's limit (1 s) comes first, as for a job stuck in C code
    recs = campaign.run(cluster, "corpus", [("long", {"path": str(tmp_path / "long.wgsl"), "timeout": 30.0}, {}),
                                            ("next", {"path": str(ROOT / "tests/shaders/vecadd.wgsl"), "timeout": 30.0}, {})],
                        tmp_path / "h.jsonl", 1.0, stream=io.StringIO())
    assert [(r["class"], r.get("message")) for r in recs] == [("timeout", "stopped after 1 s"), ("ok", None)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_scheduler_going_away_is_one_message_and_keeps_the_results(tmp_path):
    port = free_port()
    addr = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False")
    sched = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                              "--port", str(port), "--dashboard-address", ":0"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=env)
    worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", addr, "--nthreads", "1",
                               "--nworkers", "1", "--no-nanny"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=env)
    try:
        folder = tmp_path / "c"
        folder.mkdir()
        corpus(folder, copies=4)
        jobs = jobs_of(folder)
        out = tmp_path / "s.jsonl"

        def stop(record, n):
            if n == 5:
                sched.kill()
        with Cluster(addr, timeout=60) as cl:
            with pytest.raises(HostError) as e:
                campaign.run(cl, "corpus", jobs, out, 25.0, stream=io.StringIO(), on_result=stop)
        msg = e.value.format()
        assert msg.startswith(f"emu: error: the cluster's scheduler ({addr}) went away")
        kept = campaign.read_results(out)
        assert f": {len(kept)} of {len(jobs)} jobs finished, their results kept in {out}" in msg
        assert 5 <= len(kept) < len(jobs)
        assert "run the same command: it skips the finished jobs" in msg
    finally:
        for p in (worker, sched):
            p.kill()
            p.wait()


def test_emu_campaign_corpus_prints_the_table(tmp_path):
    from emu.cli import main
    folder = tmp_path / "c"
    folder.mkdir()
    corpus(folder, copies=1)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["campaign", "corpus", str(folder), "--scope", "--cluster", "local:2", "--out", str(tmp_path / "x.jsonl")])
    lines = out.getvalue().splitlines()
    n = len(list(folder.glob("*.wgsl")))
    assert rc == 0
    assert lines[0].startswith(f"{n} files under {folder} in ")
    assert lines[1].split() == ["scope", "ok", "rejected", "crash", "timeout", "total", "pass"]
    assert lines[2].split()[:6] == ["in-scope", str(n - 2), "1", "0", "0", str(n - 1)]
    assert "top rejection buckets (in scope), of 1:" in out.getvalue()
    assert err.getvalue().splitlines()[-2].startswith(f"campaign corpus: {n}/{n} done (ok {n - 2}, rejected 2), ")
    assert err.getvalue().splitlines()[-1] == f"results: {tmp_path / 'x.jsonl'}"
