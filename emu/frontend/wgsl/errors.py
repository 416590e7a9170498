"""WGSL errors: the source spans and diagnostics now live in `emu/diagnostic.py` and the error
class in `emu/errors.py` (the one error tree); the names stay importable from here."""
from __future__ import annotations

from ...diagnostic import (ERROR, INFO, LINE_BREAK_RE, NOTE, WARNING, Diagnostic,  # noqa: F401
                           SourceSpan, format_diagnostic, source_line, split_lines)
from ...errors import WgslError  # noqa: F401

