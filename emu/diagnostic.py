"""Source spans and diagnostics, shared by every front end and everything after them.

A diagnostic is rendered the way compilers usually do it::

    shader.wgsl:3:14: error: expected ';' after let declaration
       let x = a + b
                    ^
       hint: add ';' after 'b'

The first line is ``FILE:LINE:COL: SEVERITY: MESSAGE``; then, when the source text is known, the
source line indented by three spaces and a caret under the column (``^~~~`` when the span covers
more than one character on that line); then ``hint: ...`` when there is one.

Lines and columns are 1-based; columns count Unicode code points. ``end_col`` is exclusive (one past
the last character), so a one-line span covers ``end_col - col`` characters. Line breaks are those of
the WGSL spec (LF, CR, CR LF, VT, FF, NEL, LS, PS); the lexer and the renderer agree on them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

__all__ = [
    "SourceSpan",
    "Diagnostic",
    "ERROR",
    "WARNING",
    "INFO",
    "NOTE",
    "format_diagnostic",
    "source_line",
    "split_lines",
]

ERROR = "error"
WARNING = "warning"
INFO = "info"
NOTE = "note"
_SEVERITIES = (ERROR, WARNING, INFO, NOTE)

# WGSL line breaks (spec "Blankspace and Line Breaks"): CR LF counts as one.
LINE_BREAK_RE = re.compile("\r\n|[\n\u000b\u000c\r\u0085\u2028\u2029]")

_INDENT = "   "


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their line breaks, split the way WGSL counts lines."""
    return LINE_BREAK_RE.split(text)


def source_line(text: Optional[str], line: int) -> Optional[str]:
    """Line ``line`` (1-based) of ``text``, or None when there is no such line."""
    if text is None or line < 1:
        return None
    lines = split_lines(text)
    if line > len(lines):
        return None
    return lines[line - 1]


@dataclass(frozen=True)
class SourceSpan:
    """A range of source text: from (line, col) up to, not including, (end_line, end_col)."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    @classmethod
    def point(cls, file: str, line: int, col: int) -> "SourceSpan":
        """A one-character span at (line, col)."""
        return cls(file, line, col, line, col + 1)

    def to(self, other: "SourceSpan") -> "SourceSpan":
        """The span from the start of ``self`` to the end of ``other``."""
        return SourceSpan(self.file, self.line, self.col, other.end_line, other.end_col)

    @property
    def start(self) -> "SourceSpan":
        """A one-character span at this span's first character (for a bare caret)."""
        return SourceSpan.point(self.file, self.line, self.col)

    @property
    def length(self) -> Optional[int]:
        """Characters covered when the span is on one line, else None."""
        if self.end_line != self.line:
            return None
        return max(0, self.end_col - self.col)

    def text(self, source: str) -> str:
        """The source text this span covers."""
        lines = split_lines(source)
        if self.line < 1 or self.line > len(lines):
            return ""
        if self.end_line == self.line:
            return lines[self.line - 1][self.col - 1:self.end_col - 1]
        parts = [lines[self.line - 1][self.col - 1:]]
        for ln in range(self.line + 1, min(self.end_line, len(lines) + 1)):
            parts.append(lines[ln - 1])
        if self.end_line <= len(lines):
            parts.append(lines[self.end_line - 1][:self.end_col - 1])
        return "\n".join(parts)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def format_diagnostic(
    severity: str,
    span: SourceSpan,
    message: str,
    hint: Optional[str] = None,
    source_text: Optional[str] = None,
) -> str:
    """Render one diagnostic (see the module docstring for the form)."""
    out = [f"{span.file}:{span.line}:{span.col}: {severity}: {message}"]
    line = source_line(source_text, span.line)
    if line is not None:
        out.append(_INDENT + line)
        before = line[: span.col - 1]
        # Keep tabs so that the caret lines up however the terminal expands them.
        pad = "".join("\t" if ch == "\t" else " " for ch in before)
        pad += " " * max(0, span.col - 1 - len(before))
        if span.end_line == span.line:
            width = span.end_col - span.col
        else:  # underline to the end of the first line
            width = len(line) - (span.col - 1)
        width = max(1, width)
        out.append(_INDENT + pad + "^" + "~" * (width - 1))
    if hint:
        out.append(_INDENT + "hint: " + hint)
    return "\n".join(out)


@dataclass(frozen=True)
class Diagnostic:
    """One message about the source: severity is 'error', 'warning', 'info' or 'note'."""

    severity: str
    span: SourceSpan
    message: str
    hint: Optional[str] = None

    def __post_init__(self) -> None:
        if self.severity not in _SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")

    def format(self, source_text: Optional[str] = None) -> str:
        return format_diagnostic(self.severity, self.span, self.message, self.hint, source_text)

    def __str__(self) -> str:
        return self.format(None)
