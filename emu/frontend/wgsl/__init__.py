"""The WGSL front end: text -> syntax tree -> cooperative IR."""
from __future__ import annotations

from ...errors import EmuError, note_location
from ...isa import uniformity
from ...isa.ops import OPS


def compile_source(source: str, file: str = "<input>", *, strict: bool = False,
                   constants: dict | None = None, defer_unset: bool = False, const_eval: str = "wgsl"):
    """Parse and lower a WGSL module. Returns (ir.Module, warnings); raises EmuError.

    A module whose overrides size types or feed module-scope expressions is lowered with the
    overrides as constants (`constants`, else their defaults); `module.needs_constants` says so,
    and each pipeline then lowers it again with its own constants. With `defer_unset` (creating a
    shader module) an override that such a place needs but that has no value yet lowers as a
    placeholder, listed in `module.unset_overrides`: the pipeline's constants must set it.
    `const_eval`: "wgsl" folds const-expressions by WGSL's rules, "tint" as Dawn does
    (emu.numerics.tint)."""
    from .errors import WgslError
    from .lower import Lowerer, NeedsConstants
    from .parser import parse
    try:
        tree = parse(source, file)
    except WgslError as e:
        raise EmuError(e.message, e.span, hint=e.hint) from None
    lw = None
    import sys
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))   # lowering recurses over the tree, as deep as parsing allows
    try:
        try:
            lw = Lowerer(tree, file, strict, constants, const_eval=const_eval)
            module = lw.run()
        except NeedsConstants:
            lw = Lowerer(tree, file, strict, dict(constants or {}), defer_unset=defer_unset, const_eval=const_eval)
            module = lw.run()
            module.needs_constants = True
            module.unset_overrides = list(lw.unset_overrides)
            module.unset_sizes = list(lw.unset_sizes)
    except RecursionError:
        raise EmuError("the shader is nested too deeply to compile", None,
                       hint="split deeply nested expressions, types or calls into smaller parts") from None
    except Exception as e:
        if lw is not None:
            note_location(e, lw.b.loc)      # the statement being lowered
        raise
    finally:
        sys.setrecursionlimit(limit)
    _uniformity_warnings(module, lw.warnings)
    if lw.override_values:
        known = {o.name for o in module.overrides} | {str(o.id) for o in module.overrides if o.id is not None}
        for key in lw.override_values:
            if str(key) not in known:
                names = ", ".join(o.name for o in module.overrides) or "none"
                raise EmuError(f"the shader has no override named '{key}' (it has: {names})",
                               hint="check the name in --override NAME=VALUE")
    return module, lw.warnings


def _uniformity_warnings(module, warnings: list) -> None:
    """Warn where Tint's uniformity analysis would reject a cooperative-matrix operation."""
    if not any(OPS[i.op].cooperative for f in module.functions for i in f.walk()):
        return
    for finding in uniformity.check(module):
        warnings.append(EmuError(finding.message, finding.inst.loc, hint=uniformity.HINT, severity="warning"))
