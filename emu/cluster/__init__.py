"""Past one machine: dispatches split over processes and test campaigns, on Dask's `distributed`.

    from emu.cluster import Cluster
    with Cluster("local:4") as cl:                      # or "tcp://scheduler:8786"
        warnings = cl.dispatch(dev, pipe, {(0, 0): a, (0, 1): out}, (64, 64, 1))

The engine is Dask's `distributed` (the `emu-gpu[cluster]` extra): its tasks take numpy arrays as
they are, a `LocalCluster` of worker processes is the embedded default, a scheduler address runs
the same code on a real cluster, and it re-runs the tasks of a worker that dies. Nothing else in
emu needs it: without it `emu run` runs in one process and `--cluster` says what to install.

`shard.py` splits a dispatch's workgroup grid into ranges, runs each on a worker with the normal
dispatch machinery (the same profile, options and fast paths) and merges what they wrote;
`campaign.py` runs independent jobs (the corpus runner, the fuzzer, differential runs) with their
results streamed to a JSONL file.
"""
from __future__ import annotations

from ..errors import HostError

INSTALL_HINT = "install the extra: pip install 'emu-gpu[cluster]' (Dask's distributed)"


def _distributed():
    try:
        import distributed
    except ImportError:
        raise HostError("--cluster needs Dask's distributed, which is not installed", hint=INSTALL_HINT) from None
    return distributed


def parse_spec(spec: str) -> tuple[str, object]:
    """'local:N' -> ('local', N); 'tcp://host:port' (or another scheme Dask knows) -> ('address', spec)."""
    from ..errors import UsageError
    if spec.startswith("local:"):
        try:
            n = int(spec[6:])
        except ValueError:
            n = 0
        if n < 1:
            raise UsageError(f"--cluster {spec!r}: expected local:N with N >= 1 worker processes, e.g. local:4")
        return "local", n
    if "://" in spec:
        return "address", spec
    raise UsageError(f"--cluster {spec!r}: expected local:N (N worker processes on this machine) or a "
                     f"scheduler address such as tcp://host:8786")


def quiet() -> None:
    """Dask's own log lines (and their tracebacks, on a connection lost) would bury emu's one message."""
    import logging
    for name in ["distributed", "tornado", *logging.root.manager.loggerDict]:
        if name.split(".")[0] in ("distributed", "tornado"):
            logging.getLogger(name).setLevel(logging.CRITICAL)


class Cluster:
    """A connection to a Dask cluster: `local:N` starts N worker processes of one thread each on
    this machine (closed with the Cluster); an address connects to a running scheduler."""

    def __init__(self, spec: str, *, threads: int = 1, timeout: float = 30.0):
        dist = _distributed()
        self.spec = spec
        kind, arg = parse_spec(spec)
        self._local = None
        import logging
        quiet()
        try:
            if kind == "local":
                self._local = dist.LocalCluster(n_workers=arg, threads_per_worker=threads, processes=True,
                                                dashboard_address=":0", silence_logs=logging.CRITICAL)
                self.client = dist.Client(self._local, timeout=timeout)
            else:
                self.client = dist.Client(arg, timeout=timeout)
        except OSError as e:
            self.close()
            raise HostError(f"--cluster {spec}: cannot reach the scheduler ({e})",
                            hint="start one (dask scheduler; dask worker ADDRESS --nthreads 1) or use local:N") from None

    def threads(self) -> int:
        """Worker threads in the cluster now (at least 1)."""
        info = self.client.scheduler_info()
        return max(1, sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()))

    def dispatch(self, device, pipeline, bindings: dict, groups, *, shards: int | None = None) -> list:
        """`device.dispatch(pipeline, bindings, groups)` split into `shards` ranges of workgroups
        (default: one per worker thread) over the cluster's workers (see shard.py): the same
        results and warnings. Where the dispatch cannot be split soundly it runs in this process,
        and the list starts with a note (EmuError of severity "note") saying why."""
        from .shard import dispatch
        return dispatch(self, device, pipeline, bindings, groups, shards=shards)

    def close(self) -> None:
        for what in ("client", "_local"):
            obj = getattr(self, what, None)
            if obj is not None:
                try:
                    obj.close()
                except Exception:        # already gone (the scheduler went away): nothing to close
                    pass
                setattr(self, what, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
