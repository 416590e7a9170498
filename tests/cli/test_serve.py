"""`emu serve` (emu/server.py): an `emu run` handed to the server gives the same outputs, standard
output and error and exit status as one in its own process (EMU_SERVE=0); a request of another
emu or environment is refused; the server ends when idle."""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from emu import server

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not server.available(), reason="emu serve needs Linux")

VEC = """@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  c[g.x] = a[g.x] * 2.0 + 1.0;
}
"""


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMU_SERVE")}
    return dict(env, **dict(dict(EMU_JIT_CACHE=str(tmp_path / "jit"), PYTHONPATH=str(ROOT)), **extra))  # this emu


def _start(env, log):
    """`emu serve` started, once it says it is serving."""
    with open(log, "w") as f:
        p = subprocess.Popen([sys.executable, "-m", "emu", "serve", "--idle", "120"], cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=f)
    deadline = time.monotonic() + 60
    while "serving" not in log.read_text():
        if p.poll() is not None or time.monotonic() >= deadline:
            p.kill()
            raise AssertionError(log.read_text())
        time.sleep(0.05)
    return p


@contextmanager
def _server(env, log):
    p = _start(env, log)
    try:
        yield
    finally:
        p.terminate()
        assert p.wait(timeout=60) == 0
    assert log.read_text().rstrip().endswith("emu serve: ending")


@pytest.fixture
def served(tmp_path):
    """(environment, server log) of an `emu serve` running for the test."""
    env = _env(tmp_path)
    with _server(env, tmp_path / "serve.log"):
        yield env, tmp_path / "serve.log"


def _ran(log) -> int:
    return log.read_text().count("emu serve: ran a command")


def _emu(args, env, cwd, stdin=None, **extra):
    return subprocess.run([sys.executable, "-m", "emu"] + args, capture_output=True, cwd=cwd, input=stdin,
                          env=dict(env, **extra), timeout=120)


def test_served_runs_match_runs_in_their_own_process(served, tmp_path):
    env, log = served
    work = tmp_path / "work"
    work.mkdir()
    (work / "vec.wgsl").write_text(VEC)
    np.save(work / "a.npy", np.arange(128, dtype=np.float32) / 7)
    cases = [  # relative paths: the client's folder
        (["run", "vec.wgsl", "--dispatch", "2", "--buffer", "0:0=a.npy", "--buffer", "0:1=zeros:128:f32",
          "--output", "0:1=OUT"], None),
        # out of bounds under the default policy: a warning, each site once, still exit 0
        (["run", "vec.wgsl", "--dispatch", "3", "--buffer", "0:0=a.npy", "--buffer", "0:1=zeros:128:f32",
          "--output", "0:1=OUT"], None),
        (["run", "vec.wgsl", "--dispatch", "3", "--buffer", "0:0=a.npy", "--buffer", "0:1=zeros:128:f32",
          "--bounds", "strict"], None),                                      # a runtime error, exit 1
        (["run", "-", "--dispatch", "2", "--buffer", "0:0=a.npy", "--buffer", "0:1=zeros:128:f32",
          "--output", "0:1=OUT"], VEC.encode()),                           # the shader on standard input
        (["run", "-", "--dispatch", "2"], b"fn main( {"),                   # a parse error, file:line:col
        (["run", "vec.wgsl", "--dispach", "2"], None),                      # usage, exit 2
        (["run", "missing.wgsl", "--dispatch", "2"], None),
        (["run", "--help"], None),
    ]
    for args, stdin in cases:
        got = []
        for how in ("0", "1", "0"):         # the first in its own process compiles what the case needs
            out = work / f"c{how}.npy"
            r = _emu([a.replace("OUT", out.name) for a in args], env, work, stdin, EMU_SERVE=how)
            # (the summary line's time is the run's own)
            err = re.sub(rb" in \d+\.\d\d s, ", b" in T s, ", r.stderr.replace(out.name.encode(), b"OUT"))
            got.append((r.returncode, r.stdout, err,
                        out.read_bytes() if out.exists() else None))
            out.unlink(missing_ok=True)
        assert got[1] == got[2], args
        assert b"Traceback" not in got[1][2]
    assert _ran(log) == len(cases)          # each was the server's (EMU_SERVE=0 never is)
    c = _emu(cases[0][0][:-1] + ["0:1=c.npy"], env, work)
    assert c.returncode == 0 and _ran(log) == len(cases) + 1
    a = np.arange(128, dtype=np.float32) / 7
    assert np.array_equal(np.load(work / "c.npy").view(np.uint32), (a * np.float32(2) + np.float32(1)).view(np.uint32))


def test_other_stamps_are_refused(served, tmp_path):
    env, log = served
    # another environment read at start-up: another address, so no server there; runs on its own
    r = _emu(["run", "missing.wgsl", "--dispatch", "1"], env, tmp_path, EMU_SOMETHING="1")
    assert r.returncode == 1 and _ran(log) == 0
    # a request naming another stamp at this server's address: refused, nothing run
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    st = subprocess.run([sys.executable, "-c", "from emu import server; print(server.stamp())"], cwd=ROOT, env=env,
                        capture_output=True, text=True, timeout=120).stdout.strip()
    sock.connect(server.address(st))
    server._send(sock, {"stamp": "0" * 24, "argv": ["run", "--help"], "cwd": str(tmp_path), "env": env,
                        "umask": 0o22}, fds=(0, 1, 2))
    assert server._recv(sock)[0] == {"refused": "stale"}
    sock.close()
    assert _ran(log) == 0


LONG = """@group(0) @binding(0) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(1) fn main() {
  var x = 0.0;
  loop { if (x < 0.0) { break; } x = x + 1.0; }
  c[0] = x;
}
"""


def test_ctrl_c_interrupts_a_served_run(tmp_path):
    """Ctrl-C on `emu run` (SIGINT to it) is passed on to the server: the same message and exit
    status as in its own process; the server goes on serving."""
    env = _env(tmp_path, EMU_JIT="0")         # the interpreter: a loop that runs until stopped
    (tmp_path / "long.wgsl").write_text(LONG)
    args = [sys.executable, "-m", "emu", "run", "long.wgsl", "--dispatch", "1", "--buffer", "0:0=zeros:1:f32",
            "--max-steps", "1000000000"]
    with _server(env, tmp_path / "serve.log"):
        got = []
        for how in ("1", "0"):
            p = subprocess.Popen(args, cwd=tmp_path, env=dict(env, EMU_SERVE=how), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE,     # as from a terminal (a background job ignores it)
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            time.sleep(3)                   # started and into the loop
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=120)
            got.append((p.returncode, out, err))
        assert got[0] == got[1] == (130, b"", b"emu: interrupted\n")
        assert _ran(tmp_path / "serve.log") == 1
        r = _emu(["run", "missing.wgsl", "--dispatch", "1"], env, tmp_path)
        assert r.returncode == 1 and _ran(tmp_path / "serve.log") == 2


def test_server_ends_when_its_stamp_changes(tmp_path):
    """A package installed in a folder on sys.path (its modification time) ends the server, as a
    change to emu's files does: it would not be the Python a new process gets."""
    site = tmp_path / "site"
    site.mkdir()
    env = _env(tmp_path, PYTHONPATH=f"{ROOT}{os.pathsep}{site}")
    log = tmp_path / "serve.log"
    p = _start(env, log)
    try:
        (site / "newpackage").mkdir()
        assert p.wait(timeout=60) == 0
    finally:
        p.kill()
    assert log.read_text().splitlines()[-1].startswith("emu serve: emu's files or Python's packages changed")


def test_idle_server_ends(tmp_path):
    env = _env(tmp_path)
    r = subprocess.run([sys.executable, "-m", "emu", "serve", "--idle", "0.3"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr.splitlines()[-1] == "emu serve: no run for 0.3 s; ending"
    r = subprocess.run([sys.executable, "-m", "emu", "serve", "--idle", "0"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--idle" in r.stderr
