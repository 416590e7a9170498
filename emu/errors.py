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
        head = f"{self.severity}: {self.message}"
        lines = []
        if self.loc is not None:
            lines.append(f"{self.loc.file}:{self.loc.line}:{self.loc.col}: {head}")
            src = (sources or {}).get(self.loc.file)
            if src is not None:
                text = src.splitlines()[self.loc.line - 1] if 0 < self.loc.line <= len(src.splitlines()) else ""
                lines.append("  " + text.expandtabs(4))
                prefix = text[: self.loc.col - 1].expandtabs(4)
                lines.append("  " + " " * len(prefix) + "^")
        else:
            lines.append(f"emu: {head}")
        if self.where:
            lines.append(f"  note: {self.where}")
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


class HostError(EmuError):
    """Bad input from the host program or command line (buffers, dispatch, overrides)."""
