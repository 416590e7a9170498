"""One line on stderr when a run stops to compile kernels for more than a second: numba compiles
silently, so without it a cold start looks like a hang. numba reports a compile only on a cache
miss (loading a cached kernel says nothing), so a warm run prints nothing. The line says what is
compiled: emu's own kernels ("kernels for P (first run only)": they are kept in numba's cache, once
per machine and emu version), or a shader's kernel, named with why it is compiled rather than
interpreted (emu/jit/tier.py) inside `compiling(what)`. Each is said at most once per process;
`emu warmup` compiles emu's own ahead.

This module does not import numba (a run whose kernels load without it never does, emu/jit/
native.py): the listener is registered when numba's event module is first imported, whoever
imports it, or at once where numba is already loaded."""
from __future__ import annotations

import importlib.machinery
import sys
import threading
from contextlib import contextmanager

DELAY_S = 1.0


class _Notice:
    def __init__(self):
        self.profile = None         # the device whose dispatch is running, if any
        self.compiling = 0          # compiles in progress (nested: a kernel compiles its callees)
        self.timer = None
        self.what = None            # (what, why) compiles now, if a caller named it (compiling())
        self.said = set()           # the things said in this process (None: emu's own kernels)
        self.silent = False
        self.lock = threading.Lock()

    def on_start(self, ev):
        with self.lock:
            self.compiling += 1
            if self.silent or self.what in self.said or self.timer is not None:
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
            self.timer = None
            if self.silent or self.what in self.said or self.compiling == 0:
                return
            self.said.add(self.what)
            where = f" for {self.profile}" if self.profile else ""
            what, why = self.what or ("kernels", "first run only")
            line = f"compiling {what}{where} ({why})..."
        print(line, file=sys.stderr, flush=True)


_NOTICE = _Notice()


def _register(event) -> None:
    class Listener(event.Listener):
        def on_start(self, ev):
            _NOTICE.on_start(ev)

        def on_end(self, ev):
            _NOTICE.on_end(ev)
    event.register("numba:compile", Listener())


class _OnImport:
    """Finds numba.core.event as Python would, and registers the listener once it has run (a
    meta path finder and loader by their methods: importlib.abc's bases cost ~20 ms to import)."""
    NAME = "numba.core.event"

    def find_spec(self, name, path=None, target=None):
        if name != self.NAME:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None:
            self.loader, spec.loader = spec.loader, self
        return spec

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _register(module)


if _OnImport.NAME in sys.modules:
    _register(sys.modules[_OnImport.NAME])
else:
    sys.meta_path.insert(0, _OnImport())


def quiet() -> None:
    """Never print the line in this process (a test suite that asserts exact stderr)."""
    _NOTICE.silent = True


@contextmanager
def compiling(what: str, why: str):
    """Name what compiles meanwhile (a shader's kernel) and why in the line."""
    old, _NOTICE.what = _NOTICE.what, (what, why)
    try:
        yield
    finally:
        _NOTICE.what = old


@contextmanager
def for_profile(name: str):
    """Name the device in the line while a dispatch runs."""
    old, _NOTICE.profile = _NOTICE.profile, name
    try:
        yield
    finally:
        _NOTICE.profile = old
