"""Errors for people: every user error ends in one message with file:line:col, where it happened
on the device (workgroup, subgroup, lane) when that applies, and the fix."""
from __future__ import annotations


class EmuError(Exception):
    """A user error: bad shader, unsupported configuration, undefined behaviour or bad host input."""

    def __init__(self, message: str, loc=None, *, hint: str | None = None, where: str | None = None,
                 severity: str = "error"):
        super().__init__(message)
        self.message, self.loc, self.hint, self.where, self.severity = message, loc, hint, where, severity

    def format(self, sources: dict[str, str] | None = None) -> str:
        """`FILE:LINE:COL: error: MESSAGE`, the source line with a caret, where, and the hint."""
        from .frontend.wgsl.errors import SourceSpan, format_diagnostic
        if self.loc is None:
            lines = [f"emu: {self.severity}: {self.message}"]
            if self.where:
                lines.append(f"   note: {self.where}")
            if self.hint:
                lines.append(f"   hint: {self.hint}")
            return "\n".join(lines)
        span = self.loc if isinstance(self.loc, SourceSpan) else \
            SourceSpan.point(self.loc.file, self.loc.line, self.loc.col)
        text = format_diagnostic(self.severity, span, self.message, None, (sources or {}).get(span.file))
        if self.where:
            text += f"\n   note: {self.where}"
        if self.hint:
            text += f"\n   hint: {self.hint}"
        return text

    def __str__(self) -> str:
        return self.format()


class HostError(EmuError):
    """Bad input from the host program or command line (buffers, dispatch, overrides)."""
