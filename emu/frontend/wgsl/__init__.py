"""The WGSL front end: text -> syntax tree -> cooperative IR."""
from __future__ import annotations

from ...errors import EmuError


def compile_source(source: str, file: str = "<input>", *, strict: bool = False):
    """Parse and lower a WGSL module. Returns (ir.Module, warnings); raises EmuError."""
    from .errors import WgslError
    from .lower import Lowerer
    from .parser import parse
    try:
        tree = parse(source, file)
    except WgslError as e:
        raise EmuError(e.message, e.span, hint=e.hint) from None
    lw = Lowerer(tree, file, strict)
    module = lw.run()
    return module, lw.warnings
