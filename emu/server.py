"""`emu serve`: a resident process that runs `emu run` commands for a thin client, so that a run
pays neither the interpreter's start nor numpy's and emu's imports (~0.15-0.3 s of each run).

Only where the user asked: `emu serve` starts it, in the foreground, and nothing starts one
otherwise. While it listens, `emu run` (the command, not a program importing emu) hands its
command line over from emu/__init__.py, before numpy is imported: its standard input, output and
error themselves (the file descriptors, passed over the socket), its working folder, umask and
environment. The server runs emu.cli.main on them as a fresh process would, so the outputs,
messages and exit status are the same; the client then exits with that status. EMU_SERVE=0
makes `emu run` run in its own process; `--cluster` runs always do.

A server serves only its own emu: its address (an abstract Unix socket of this user, Linux
only) is a hash of emu's files (path, size, modification time of each), emu's version, the
Python executable and version, Python's flags, the modification times of the folders on
sys.path (a package installed or upgraded changes them) and the environment read at start-up (EMU_*,
NUMBA_*, PYTHON*, the locale, HOME, TMPDIR, OpenBLAS's threads): a client whose emu or Python
differs finds no server and runs in its own process, and a request naming another stamp is
refused. Both sides check that the other is the same user. The server ends after --idle seconds
without a request, when emu's files or the packages change, or on Ctrl-C / SIGTERM."""
from __future__ import annotations

import os
import sys

from .startup import files_stamp, is_command

_ENV_PREFIXES = ("EMU_", "NUMBA_", "PYTHON", "LC_")
_ENV_KEYS = ("LANG", "HOME", "TMPDIR", "XDG_CACHE_HOME", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
             "OMP_NUM_THREADS")
_MAX_REQUEST = 1 << 24


def available() -> bool:
    return sys.platform.startswith("linux")


def stamp(environ=None, fresh: bool = False) -> str:
    """What a process running emu's command depends on before it reads its command line."""
    import hashlib
    env = os.environ if environ is None else environ
    start = sorted((k, v) for k, v in env.items()
                   if (k.startswith(_ENV_PREFIXES) or k in _ENV_KEYS) and k != "EMU_SERVE")
    from .version import __version__
    # the folders packages are installed in (not sys.path[0], the client's own): installing or
    # removing one, numpy's or numba's upgrade, changes their modification times
    where = [(p, os.stat(p).st_mtime_ns) for p in sys.path[1:] if os.path.isdir(p)]
    key = [os.path.dirname(os.path.abspath(__file__)), files_stamp(fresh), __version__, sys.executable, sys.version,
           repr(sys.flags), sys.warnoptions, sorted(sys._xoptions.items()), start, where]
    return hashlib.sha256(repr(key).encode()).hexdigest()[:24]


def address(st: str) -> bytes:
    return f"\0emu-serve-{os.getuid()}-{st}".encode()


def _same_user(sock) -> bool:
    import socket
    import struct
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.getuid()


def _send(sock, obj, fds=()) -> None:
    import json
    import socket
    data = json.dumps(obj).encode()
    data = len(data).to_bytes(4, "big") + data
    if fds:
        socket.send_fds(sock, [data], list(fds))
    else:
        sock.sendall(data)


def _recv(sock, fds: int = 0):
    """(message, fds) or (None, []) where the other side closed the connection. Reads exactly one
    message (its 4-byte length, then the rest), so that the next one stays in the socket."""
    import json
    import socket
    fd_list = []
    if fds:
        head, fd_list, _flags, _addr = socket.recv_fds(sock, 4, fds)
    else:
        head = sock.recv(4)
    head = _exactly(sock, head, 4)
    n = int.from_bytes(head, "big") if len(head) == 4 else -1
    body = _exactly(sock, b"", n) if 0 <= n <= _MAX_REQUEST else b""
    try:
        if len(body) == n:
            return json.loads(body), fd_list
    except ValueError:
        pass
    for fd in fd_list:
        os.close(fd)
    return None, []


def _exactly(sock, got: bytes, n: int) -> bytes:
    while len(got) < n:
        part = sock.recv(n - len(got))
        if not part:
            break
        got += part
    return got


# ------------------------------------------------------------------------------ the client

def hand_over() -> None:
    """In the `emu run` command: where a server of this emu listens, run the command there and
    exit with its status; otherwise return (the run happens in this process)."""
    argv = sys.argv[1:]
    if argv[:1] != ["run"] or not available() or os.environ.get("EMU_SERVE") == "0" or not is_command() \
            or any(a.startswith("--cl") for a in argv):
        return
    import socket
    st = stamp()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(address(st))
        if not _same_user(sock):
            sock.close()
            return
        mask = os.umask(0)
        os.umask(mask)
        streams = [[getattr(f, "encoding", None), getattr(f, "errors", None), getattr(f, "write_through", False)]
                   for f in (sys.stdin, sys.stdout, sys.stderr)]
        _send(sock, {"stamp": st, "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": mask,
                     "streams": streams}, fds=(0, 1, 2))
        reply, _ = _recv(sock)
    except (OSError, ValueError):       # none listening (or it went away before taking the run)
        sock.close()
        return
    if not reply or "pid" not in reply:         # refused: run here
        sock.close()
        return
    import signal
    pid = int(reply["pid"])

    def interrupt(signum, frame):       # Ctrl-C reached this process: the run is the server's
        try:
            os.kill(pid, signal.SIGINT)
        except OSError:
            pass
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:     # as a run of its own would ignore it
        signal.signal(signal.SIGINT, interrupt)
    try:
        reply, _ = _recv(sock)
    except OSError:
        reply = None
    if not reply or "code" not in reply:
        why = f" ({reply['crash']})" if reply and "crash" in reply else ""
        os.write(2, f"emu: internal error: the emu server failed during the run{why}; run again with "
                    f"EMU_SERVE=0 to run in this process, and please report it\n".encode())
        os._exit(3)
    os._exit(int(reply["code"]))


# ------------------------------------------------------------------------------ the server

def serve(main, idle: float, fresh=None, say=None) -> int:
    """Serve `emu run` requests with main(argv) -> exit status until `idle` seconds pass without
    one, emu's files change, or SIGINT / SIGTERM. fresh(): called before each run, to forget
    what a process says only once."""
    import signal
    import socket
    say = say or (lambda text: print(text, file=sys.stderr, flush=True))
    st = stamp()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(address(st))
    except OSError:
        say("emu serve: a server for this emu and Python is already running (`emu run` uses it)")
        return 1
    sock.listen(16)
    stop = []

    def on_term(signum, frame):
        stop.append(signum)
        raise KeyboardInterrupt
    old_term = signal.signal(signal.SIGTERM, on_term)
    # a client passes on its Ctrl-C as SIGINT; a shell script's `emu serve &` starts with SIGINT ignored
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    tick = max(0.05, min(idle, 2.0))        # how often it checks its stamp (~5 ms)
    last = _now()
    try:
        say(f"emu serve: serving `emu run` for {os.path.dirname(os.path.abspath(__file__))} with {sys.executable} "
            f"(pid {os.getpid()}); ends after {idle:g} s without a run, or on Ctrl-C")
        while True:
            sock.settimeout(tick)
            try:
                conn, _ = sock.accept()
            except socket.timeout:
                if stamp(fresh=True) != st:
                    say("emu serve: emu's files or Python's packages changed; ending (start it again for them)")
                    return 0
                if _now() - last >= idle:
                    say(f"emu serve: no run for {idle:g} s; ending")
                    return 0
                continue
            with conn:
                conn.settimeout(None)
                _serve_one(conn, st, main, fresh, say)
            if stop:                # SIGTERM during a run: that run was interrupted; now end
                raise KeyboardInterrupt
            last = _now()
    except KeyboardInterrupt:
        say("emu serve: ending")
        return 0
    finally:
        sock.close()
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGINT, old_int)


def _now() -> float:
    import time
    return time.monotonic()


def _serve_one(conn, st: str, main, fresh, say) -> None:
    """One request: its run logged (before the client hears, so the log is complete once it exits)."""
    try:
        if not _same_user(conn):
            return
        req, fds = _recv(conn, fds=3)
    except OSError:
        return
    if req is None or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return
    try:
        if req.get("stamp") != st or not isinstance(req.get("argv"), list):
            _send(conn, {"refused": "stale"})       # another emu or Python: the client runs it itself
            return
        _send(conn, {"pid": os.getpid()})
        t0 = _now()
        try:
            reply = {"code": _run(req, fds, main, fresh)}
        except Exception as e:      # noqa: BLE001  (a bug of the server's own: said by the client)
            reply = {"crash": f"{type(e).__name__}: {e}"}
        say(f"emu serve: ran a command: exit status {reply.get('code', 'none: ' + reply.get('crash', ''))} "
            f"in {_now() - t0:.3f} s")
        _send(conn, reply)
    except OSError:         # the client went away
        pass
    finally:
        for fd in fds:
            os.close(fd)


def _run(req, fds, main, fresh) -> int:
    """main(argv) with the client's standard streams, folder, umask and environment."""
    import warnings
    saved_fds = [os.dup(i) for i in range(3)]
    saved = (sys.stdin, sys.stdout, sys.stderr, dict(os.environ), os.getcwd())
    for fd, i in zip(fds, range(3)):
        os.dup2(fd, i)
    mask = os.umask(int(req.get("umask", 0o022)))
    try:
        os.environ.clear()
        os.environ.update(req.get("env", {}))
        os.chdir(req["cwd"])
        sys.stdin, sys.stdout, sys.stderr = _streams(req.get("streams"))
        if fresh is not None:
            fresh()
        with warnings.catch_warnings():     # a fresh registry: warnings said once are said again
            try:
                code = main(list(req["argv"]))
            except KeyboardInterrupt:
                print("emu: interrupted", file=sys.stderr)
                code = 130
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        return int(code)
    finally:
        for s in (sys.stdout, sys.stderr):      # before fds 1 and 2 are the server's again
            try:
                s.flush()
            except (OSError, ValueError):
                pass
        sys.stdin, sys.stdout, sys.stderr = saved[:3]
        os.environ.clear()
        os.environ.update(saved[3])
        os.chdir(saved[4])
        os.umask(mask)
        for i, fd in enumerate(saved_fds):
            os.dup2(fd, i)
            os.close(fd)


def _streams(given):
    """New sys.stdin, stdout and stderr on fds 0-2 made as the client's were (encoding, errors,
    unbuffered or not) and as Python makes them at start: stdout line-buffered on a terminal,
    stderr always."""
    import io
    out = []
    for fd, like in enumerate(given or [[None, None, False]] * 3):
        enc, errors, through = (list(like) + [None, None, False])[:3]
        raw = io.FileIO(fd, "rb" if fd == 0 else "wb", closefd=False)
        buf = raw if fd and through else (io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw))
        out.append(io.TextIOWrapper(buf, encoding=enc, errors=errors, write_through=bool(fd and through),
                                    line_buffering=fd == 2 or (fd == 1 and raw.isatty())))
    return out
