"""Every dispatcher covers every op of the table (emu/isa/ops.py), with a rule or a declared
exception, and refers to ops by checked names (OP.x), not by string literals."""
import ast
from pathlib import Path

import pytest

from emu.isa import ops as O
from emu.isa.ops import OP, OPS

EMU = Path(O.__file__).resolve().parents[1]


def _ops_named_in(path: str, cls: str, method: str) -> set[str]:
    """The ops a method's if/elif chain names as OP.x."""
    tree = ast.parse((EMU / path).read_text())
    fn = next(f for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and c.name == cls
              for f in c.body if isinstance(f, ast.FunctionDef) and f.name == method)
    return {getattr(OP, n.attr) for n in ast.walk(fn)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "OP"}


def test_executor():
    from emu.scheduler.handlers import HANDLERS
    assert set(HANDLERS) == set(OPS)


def test_emitter():
    from emu.hw.emit import EMIT_RULES
    assert set(EMIT_RULES) == set(OPS)


def test_fusion_jit_rule_or_declared_unsupported():
    from emu.jit.fuse import UNSUPPORTED_OPS
    # inst() hands vectors, arrays and structs held as values to aggregate()
    ruled = _ops_named_in("jit/fuse.py", "_Gen", "inst") | _ops_named_in("jit/fuse.py", "_Gen", "aggregate")
    assert not ruled & UNSUPPORTED_OPS
    assert ruled | UNSUPPORTED_OPS == set(OPS)


def test_uniformity():
    from emu.isa.uniformity import FROM_OPERANDS
    ruled = _ops_named_in("isa/uniformity.py", "_Walker", "inst")
    coop = {n for n, d in OPS.items() if d.cooperative}
    assert not ruled & FROM_OPERANDS and not coop & FROM_OPERANDS
    assert ruled | coop | FROM_OPERANDS == set(OPS)


def test_tracer_classifies_every_op():
    from emu.trace import tracer as T
    from emu.trace.select import Selection
    from emu.trace.tracer import MemorySink, Tracer
    tr = Tracer(sink=MemorySink(), selection=Selection.parse(ops="all"))

    class Fake:
        def __init__(self, op):
            self.op = op
    kinds = {op: tr._classify(Fake(op)) for op in OPS}
    assert set(kinds.values()) <= {T.SUBGROUP, T.WORKGROUP}
    assert {op for op, k in kinds.items() if k == T.SUBGROUP} == {n for n, d in OPS.items() if d.cooperative}
    from emu.trace.select import CATEGORIES, category
    assert all(category(op) in CATEGORIES for op in OPS)


def test_wgsl_names_are_the_table_s():
    from emu.frontend.wgsl import names
    assert set(names.BIN_OPS.values()) <= set(O.BINARY)
    assert set(names.SUBGROUP_FNS.values()) == set(O.SUBGROUP)
    assert set(names.ATOMIC_FNS.values()) == set(O.ATOMIC)
    assert set(names.COMPOUND.values()) <= set(names.BIN_OPS)


@pytest.mark.parametrize("path", ["hw/emit.py", "jit/fuse.py", "isa/uniformity.py", "trace/tracer.py",
                                  "trace/select.py"])
def test_ops_by_checked_name(path):
    """No `op == "name"`, `op in ("a", ...)` or op-keyed dict literal with a string."""
    bad = []
    for n in ast.walk(ast.parse((EMU / path).read_text())):
        if isinstance(n, ast.Compare):
            sides = [n.left, *n.comparators]
            is_op = any((isinstance(x, ast.Attribute) and x.attr == "op") or
                        (isinstance(x, ast.Name) and x.id == "op") for x in sides)
            lits = [c.value for x in sides for c in ([x] if isinstance(x, ast.Constant) else
                    getattr(x, "elts", [])) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
            if is_op and lits:
                bad.append((n.lineno, lits))
    assert bad == []


def test_names_are_checked():
    with pytest.raises(AttributeError):
        OP.coop_lod
    assert OP.if_ == "if" and O.UNARY.not_ == "not" and list(OP) == list(OPS)


def test_printer_and_parser_round_trip_every_op():
    """One instruction of every op, in the table's shape, printed and read back unchanged."""
    from emu.isa.printer import print_module
    from emu.isa.textparser import parse_ir
    lines = ['module "ops.ir"', "func @main() -> void compute workgroup_size(32, 1, 1) {",
             '  %0 = const {value = 1} : u32']
    n = 1
    for name, d in OPS.items():
        args = ", ".join("%0" for _ in range(d.args[0]))
        attrs = ", ".join(f"{a} = 0" for a in d.attrs)
        text = (f"%{n} = {name}" if d.result else name) + (f" {args}" if args else "")
        text += f" {{{attrs}}}" if attrs else ""
        text += " : u32" if d.result else ""
        blocks = 1 if d.blocks is None else d.blocks
        if blocks:
            lines.append(f"  {text} {{")
            lines += ["  } {"] * (blocks - 1) + ["  }"]
        else:
            lines.append("  " + text)
        n += bool(d.result)
    lines.append("}")
    src = "\n".join(lines) + "\n"
    printed = print_module(parse_ir(src, "ops.ir"), locs=False)
    assert {ln.split("=", 1)[-1].split()[0] if "=" in ln.split("{")[0] else ln.split()[0]
            for ln in printed.splitlines()[2:-1] if ln.strip() not in ("}", "} {")} == set(OPS)
    assert print_module(parse_ir(printed, "ops.ir"), locs=False) == printed

