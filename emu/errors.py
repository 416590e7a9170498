"""The one error tree. Every user error ends in one message with file:line:col, where it happened
on the device (workgroup, subgroup, lane) when that applies, and the fix.

    EmuError                  a user error (shader, configuration, undefined behaviour, host input)
    ├── WgslError             a WGSL shader the front end rejects, located in its source
    ├── HostError             bad input from the host program or the command line
    │   ├── UsageError        a command line that cannot be parsed (exit status 2)
    │   ├── InvalidArgument   a bad argument to emu.wgpu or emu.numerics (a ValueError, str() the bare
    │   │                     message, as callers of those expect)
    │   └── ArgumentError     a bad argument to emu.Device (a ValueError, str() the whole message)
    └── HwError               what the real WebGPU implementation refused (also a RuntimeError)

Other layers subclass these (VerifyError, ProfileError, EmitError, ...); spans and the rendering
of a diagnostic are in emu/diagnostic.py.
"""
from __future__ import annotations

from typing import Optional

from .diagnostic import ERROR, Diagnostic, SourceSpan, format_diagnostic


class EmuError(Exception):
    """A user error: bad shader, unsupported configuration, undefined behaviour or bad host input."""

    def __init__(self, message: str, loc=None, *, hint: str | None = None, where: str | None = None,
                 severity: str = "error"):
        super().__init__(message)
        self.message, self.loc, self.hint, self.where, self.severity = message, loc, hint, where, severity

    @property
    def span(self) -> SourceSpan | None:
        """Where in the source, as a span (None when the error has no place in a source)."""
        if self.loc is None or isinstance(self.loc, SourceSpan):
            return self.loc
        return SourceSpan.point(self.loc.file, self.loc.line, self.loc.col)

    def format(self, sources: dict[str, str] | str | None = None) -> str:
        """`FILE:LINE:COL: error: MESSAGE`, the source line with a caret, where, and the hint.
        `sources` maps file names to their text (or is the text of the error's own file)."""
        span = self.span
        if span is None:
            lines = [f"emu: {self.severity}: {self.message}"]
            if self.where:
                lines.append(f"   note: {self.where}")
            if self.hint:
                lines.append(f"   hint: {self.hint}")
            return "\n".join(lines)
        text = sources if isinstance(sources, str) or sources is None else sources.get(span.file)
        out = format_diagnostic(self.severity, span, self.message, None, text)
        if self.where:
            out += f"\n   note: {self.where}"
        if self.hint:
            out += f"\n   hint: {self.hint}"
        return out

    sources: dict | None = None      # {file: text} of the shader, set where the error leaves emu's API

    def __str__(self) -> str:
        return self.format(self.sources)


class _PlainStr:
    """str() is the bare message, as it was when these were plain Python exceptions."""

    def __str__(self) -> str:
        return self.message


class HostError(EmuError):
    """Bad input from the host program or command line (buffers, dispatch, overrides)."""


class UsageError(_PlainStr, HostError):
    """A command line that cannot be parsed: `emu` prints the message and exits with status 2."""


class InvalidArgument(_PlainStr, HostError, ValueError):
    """A bad argument to the Python API (emu.wgpu, emu.numerics): still a ValueError."""


class ArgumentError(HostError, ValueError):
    """A bad argument to emu's own Python API (emu.Device, Buffer): str() is the whole message,
    hint included, as the CLI prints it (also a ValueError)."""


class HwError(_PlainStr, EmuError, RuntimeError):
    """A shader or a request that the real WebGPU implementation refused, said for a person."""


class WgslError(EmuError):
    """An error in a WGSL shader, located in its source.

    ``file``, ``line`` and ``col`` (1-based) say where; ``message`` what is wrong; ``hint`` the fix
    when one is obvious. ``span`` is the full range (``line``/``col`` are its start). ``format``
    renders it with the source line and a caret.
    """

    def __init__(self, message: str, span: Optional[SourceSpan] = None, hint: Optional[str] = None, *,
                 file: str = "<input>", line: int = 1, col: int = 1, severity: str = ERROR) -> None:
        if span is None:
            span = SourceSpan.point(file, line, col)
        self.diagnostic = Diagnostic(severity, span, message, hint)   # checks the severity
        super().__init__(message, span, hint=hint, severity=severity)

    @classmethod
    def from_diagnostic(cls, diagnostic: Diagnostic) -> "WgslError":
        return cls(diagnostic.message, diagnostic.span, diagnostic.hint, severity=diagnostic.severity)

    @property
    def file(self) -> str:
        return self.loc.file

    @property
    def line(self) -> int:
        return self.loc.line

    @property
    def col(self) -> int:
        return self.loc.col

    def __reduce__(self):  # picklable (e.g. across worker processes)
        return (WgslError.from_diagnostic, (self.diagnostic,))


class InternalError(EmuError):
    """An exception that is not an EmuError reached the top: a bug in emu, said in one message."""


def rewrite_hint(hint: str | None, rules) -> str | None:
    """A hint written for the command line, said in another front door's terms: each (pattern,
    replacement) of `rules` applied in order (emu.api's Python names, emu.wgpu's wgpu names)."""
    for pattern, repl in rules:
        if hint:
            hint = pattern.sub(repl, hint)
    return hint


def internal_error(exc: BaseException) -> InternalError:
    """`exc` (not an EmuError) as one message naming the shader location where it was known (the
    layer it passed through records it as `emu_loc`). EMU_TRACEBACK=1 also prints the traceback."""
    import os
    import traceback
    if os.environ.get("EMU_TRACEBACK"):
        traceback.print_exception(exc)
    detail = str(exc).splitlines()[0][:300] if str(exc) else ""
    tb = traceback.extract_tb(exc.__traceback__)
    at = f" (in {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
    return InternalError(f"internal error: {type(exc).__name__}{': ' + detail if detail else ''}{at}",
                         getattr(exc, "emu_loc", None), where=getattr(exc, "emu_where", None),
                         hint="this is a bug in emu, not in your input: please report it with the shader "
                              "and the command (EMU_TRACEBACK=1 shows the traceback)")


def note_location(exc: BaseException, loc, where: str | None = None) -> None:
    """Record the innermost shader location an unexpected exception passed through."""
    if not isinstance(exc, EmuError) and getattr(exc, "emu_loc", None) is None:
        try:
            exc.emu_loc, exc.emu_where = loc, where
        except AttributeError:            # an exception type without a __dict__
            pass


class DtypeWarning(UserWarning):
    """Data bound with a numpy dtype that is not the WGSL element type: its bytes are taken as
    they are (float32 data bound to array<f16> reads as two f16 per float). emu.api raises it for
    Python callers; the CLI says the same in its own terms when it loads --buffer files."""
