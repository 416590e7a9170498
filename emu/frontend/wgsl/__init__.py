"""The WGSL front end: text -> syntax tree -> cooperative IR."""
from __future__ import annotations

from ...errors import EmuError, note_location
from ...isa import uniformity as ir_uniformity
from . import uniformity as wgsl_uniformity
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
        # the IR's matrix check speaks of cooperative ops in both dialects; where it finds nothing,
        # Tint's own subgroup-matrix rules run with the rest of its analysis
        matrix = []
        _uniformity_warnings(module, matrix, _matrix_uniformity_severity(tree))
        lw.warnings.extend(uniformity_findings(tree, matrix=not matrix))
        lw.warnings.extend(matrix)
        if tree.tint_too_deep is not None:
            from .parser import TINT_PARSE_DEPTH
            lw.warnings.append(EmuError(
                "maximum parser recursive depth reached: Tint (Dawn, Chrome) rejects this shader",
                tree.tint_too_deep, severity="warning",
                hint=f"Tint's parser allows {TINT_PARSE_DEPTH} levels of blocks, statements, parentheses, "
                     f"argument lists, indices, template lists and unary operators together (WGSL sets no "
                     f"limit but 127 levels of braces): compute inner parts into 'let' values, or move "
                     f"inner blocks into a function"))
    except RecursionError:
        raise EmuError("the shader is nested too deeply to compile", None,
                       hint="split deeply nested expressions, types or calls into smaller parts") from None
    except Exception as e:
        if lw is not None:
            note_location(e, lw.b.loc)      # the statement being lowered
        raise
    finally:
        sys.setrecursionlimit(limit)
    if lw.override_values:
        known = {o.name for o in module.overrides} | {str(o.id) for o in module.overrides if o.id is not None}
        for key in lw.override_values:
            if str(key) not in known:
                names = ", ".join(o.name for o in module.overrides) or "none"
                raise EmuError(f"the shader has no override named '{key}' (it has: {names})",
                               hint="check the name in --override NAME=VALUE")
    return module, lw.warnings


MATRIX_UNIFORMITY_RULE = "chromium.subgroup_matrix_uniformity"


def _matrix_uniformity_severity(tree) -> str:
    """Tint's severity for subgroup-matrix uniformity: error unless a module-scope
    `diagnostic(SEVERITY, chromium.subgroup_matrix_uniformity);` sets it (the last one wins)."""
    severity = "error"
    for d in tree.directives:
        if getattr(d, "rule", None) == MATRIX_UNIFORMITY_RULE:
            severity = d.severity
    return severity


def _uniformity_warnings(module, warnings: list, severity: str = "error") -> None:
    """Warn where Tint's uniformity analysis would reject (or, with the rule set to warning or
    info, report) a cooperative-matrix operation; nothing where the shader turns the rule off."""
    if severity == "off" or not any(OPS[i.op].cooperative for f in module.functions for i in f.walk()):
        return
    from .names import coop_spelling
    for finding in ir_uniformity.check(module, coop_spelling(module)):
        message = finding.message
        if severity != "error":
            message = message.replace("Tint (Dawn, Chrome) rejects this shader",
                                      f"Tint (Dawn, Chrome) reports it as a{'n' if severity == 'info' else ''} "
                                      f"{severity} ({MATRIX_UNIFORMITY_RULE})")
        warnings.append(EmuError(message, finding.inst.loc, hint=ir_uniformity.HINT, severity="warning"))


_UNIFORMITY_HINTS = {
    "derivative_uniformity": "sample with an explicit level (textureSampleLevel, textureSampleGrad) or compute "
                             "derivatives before the branch, keep the call out of control flow that depends on "
                             "per-invocation values, or turn the rule off with diagnostic(off, derivative_uniformity)",
    "subgroup_uniformity": "call the subgroup operation where the whole subgroup gets to (outside branches and "
                           "loops that depend on per-invocation values), or turn the rule off with "
                           "diagnostic(off, subgroup_uniformity)",
    None: "make the condition uniform (workgroup_id, num_workgroups, constants, overrides, uniform buffers, "
          "workgroupUniformLoad of a workgroup variable) or move the call out of the branch or loop that "
          "depends on a per-invocation value",
}


def uniformity_findings(tree, matrix: bool = True) -> list:
    """What Tint's uniformity analysis reports (emu.frontend.wgsl.uniformity), as warnings that
    name Tint's severity, its reason and its notes."""
    if not wgsl_uniformity.needs_analysis(tree, matrix):
        return []
    out = []
    for f in wgsl_uniformity.analyze(tree, matrix):
        verdict = "Tint (Dawn, Chrome) rejects this shader" if f.severity == "error" else \
            f"Tint (Dawn, Chrome) reports it as a{'n' if f.severity == 'info' else ''} {f.severity}" + \
            (f" ({f.rule})" if f.rule else "")
        notes = "\n   note: ".join(f"{s.file}:{s.line}:{s.col}: {text}" if s is not None else text
                                   for s, text in f.notes)
        out.append(EmuError(f"{f.message}: {verdict}", f.span, where=notes or None,
                            hint=ir_uniformity.HINT if f.rule == MATRIX_UNIFORMITY_RULE else
                            _UNIFORMITY_HINTS.get(f.rule, _UNIFORMITY_HINTS[None]), severity="warning"))
    return out
