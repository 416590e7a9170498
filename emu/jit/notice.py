"""One line on stderr when a run stops to compile kernels for more than a second (a first run, or
a new shader): numba compiles silently, so without it a cold start looks like a hang. numba
reports a compile only on a cache miss (loading a cached kernel says nothing), so a warm run
prints nothing. The line is printed at most once per process; `emu warmup` compiles ahead."""
from __future__ import annotations

import sys
import threading
from contextlib import contextmanager

from numba.core import event

DELAY_S = 1.0


class _Notice(event.Listener):
    def __init__(self):
        self.profile = None         # the device whose dispatch is running, if any
        self.compiling = 0          # compiles in progress (nested: a kernel compiles its callees)
        self.timer = None
        self.said = False
        self.lock = threading.Lock()

    def on_start(self, ev):
        with self.lock:
            self.compiling += 1
            if self.said or self.timer is not None:
                return
            self.timer = threading.Timer(DELAY_S, self._say)
            self.timer.daemon = True
            self.timer.start()

    def on_end(self, ev):
        with self.lock:
            self.compiling -= 1
            if self.compiling == 0 and self.timer is not None:
                self.timer.cancel()
                self.timer = None

    def _say(self):
        with self.lock:
            if self.said or self.compiling == 0:
                return
            self.said = True
            self.timer = None
            where = f" for {self.profile}" if self.profile else ""
        print(f"compiling kernels{where} (first run only)...", file=sys.stderr, flush=True)


_NOTICE = _Notice()
event.register("numba:compile", _NOTICE)


def quiet() -> None:
    """Never print the line in this process (a test suite that asserts exact stderr)."""
    _NOTICE.said = True


@contextmanager
def for_profile(name: str):
    """Name the device in the line while a dispatch runs."""
    old, _NOTICE.profile = _NOTICE.profile, name
    try:
        yield
    finally:
        _NOTICE.profile = old
