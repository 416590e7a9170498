"""GPUPromise for emu: every operation finishes before its call returns, so a promise is born
resolved (or rejected). It offers wgpu-py's interface: ``sync_wait()``, ``await``, ``then()``,
``catch()``.

Where wgpu-py (or wgpudawn) is importable the class derives from its GPUPromise, so that
``isinstance(p, wgpu.GPUPromise)`` holds; the methods stay these: the binding's resolve through an
event loop (``then()`` needs a running one), while emu's promise has its value already and calls
back at once, loop or not."""
from __future__ import annotations

from ._compat import binding_bases


class GPUPromise(*binding_bases("GPUPromise")):
    """The result of an asynchronous operation (already finished on emu's virtual GPU)."""

    def __init__(self, title: str, value=None, error: BaseException | None = None):
        self._title = str(title)
        self._value = value
        self._error = error
        self._state = "rejected" if error is not None else "fulfilled"

    @classmethod
    def run(cls, title: str, fn, *args, **kwargs) -> "GPUPromise":
        """Call ``fn`` now; the promise holds its result, or the exception it raised."""
        try:
            return cls(title, fn(*args, **kwargs))
        except Exception as e:  # handed to whoever waits on the promise
            return cls(title, error=e)

    def __repr__(self):
        return f"<GPUPromise '{self._title}' {self._state} at {hex(id(self))}>"

    def sync_wait(self):
        """The result; raises the operation's error if it failed."""
        if self._error is not None:
            raise self._error
        return self._value

    def __await__(self):
        if False:  # pragma: no cover - makes this a generator
            yield None
        return self.sync_wait()

    def then(self, callback, error_callback=None, title=None) -> "GPUPromise":
        """Call ``callback(result)`` (now: the work is done); returns a promise of its result."""
        if not callable(callback):
            raise TypeError(f"GPUPromise.then() got a callback that is not callable: {callback!r}")
        title = title or f"{self._title} -> {getattr(callback, '__name__', callback)}"
        if self._error is not None:
            if error_callback is not None:
                error_callback(self._error)
            return GPUPromise(title, error=self._error)
        return GPUPromise.run(title, callback, self._value)

    def catch(self, callback) -> "GPUPromise":
        if not callable(callback):
            raise TypeError(f"GPUPromise.catch() got a callback that is not callable: {callback!r}")
        if self._error is not None:
            return GPUPromise.run(f"Catcher for {self._title}", callback, self._error)
        return GPUPromise(f"Catcher for {self._title}", None)

    def __call__(self, callback):          # decorator form, as in wgpu-py
        self.then(callback)
        return callback
