"""The op table is the one definition of every op: each has a doc, an executor handler and a WGSL
emitter rule; the verifier enforces the table and the per-op type rules with exact messages."""
from __future__ import annotations

import importlib

import pytest

from emu.errors import EmuError
from emu.isa import types as T
from emu.isa.ir import Block, Builder, Function, Loc, Module
from emu.isa.ops import OPS
from emu.isa.textparser import parse_ir
from emu.isa.verify import VerifyError, verify


# -- the table -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_has_a_one_line_doc(name):
    d = OPS[name]
    assert d.name == name
    assert d.doc.strip(), f"op '{name}' has no doc"
    assert "\n" not in d.doc, f"op '{name}' doc is more than one line"
    assert not set(d.attrs) & set(d.optional), f"op '{name}' lists an attribute as required and optional"
    lo, hi = d.args
    assert lo >= 0 and (hi is None or hi >= lo)
    if d.terminator:
        assert not d.result and d.effects


def test_every_op_has_an_executor_handler():
    from emu.scheduler.handlers import HANDLERS
    missing = sorted(set(OPS) - set(HANDLERS))
    assert not missing, f"ops without an executor handler: {missing}"
    extra = sorted(set(HANDLERS) - set(OPS))
    assert not extra, f"executor handlers for ops not in the table: {extra}"
    assert all(callable(HANDLERS[n]) for n in OPS)


_EMITTER_MODULES = ("emu.hw.emit", "emu.hw.emitter", "emu.hw.wgsl_emit")
_EMITTER_TABLES = ("RULES", "EMITTERS", "EMIT_RULES")


def _emitter_rules():
    for modname in _EMITTER_MODULES:
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name == modname:
                continue
            raise
        for attr in _EMITTER_TABLES:
            table = getattr(mod, attr, None)
            if isinstance(table, dict):
                return f"{modname}.{attr}", table
        pytest.fail(f"{modname} exists but has none of {', '.join(_EMITTER_TABLES)} "
                    f"(a dict: op name -> emitter rule)")
    pytest.skip("the WGSL emitter does not exist yet: expected a module "
                f"{' or '.join(_EMITTER_MODULES)} with a dict RULES (op name -> emitter rule); "
                "the lead adds it, and this half of the op-table check turns on by itself")


def test_every_op_has_an_emitter_rule():
    where, rules = _emitter_rules()
    missing = sorted(set(OPS) - set(rules))
    assert not missing, f"ops without a WGSL emitter rule in {where}: {missing}"
    extra = sorted(set(rules) - set(OPS))
    assert not extra, f"emitter rules in {where} for ops not in the table: {extra}"


# -- the verifier rejects --------------------------------------------------------------------------

HEAD = '''\
module "t.wgsl"
global @ro : array<f32> storage read group(0) binding(0)
global @rw : array<f32> storage read_write group(0) binding(1)
func @main(%0: u32 builtin(local_invocation_index)) -> void compute workgroup_size(32, 1, 1) {
  %1 = const {value = 0x1.0p+0} : f32                     ; t.wgsl:5:3
  %2 = const {value = 1} : u32                            ; t.wgsl:6:3
'''

COOP = '''\
  %10 = const {{value = 0x0.0p+0}} : f16                  ; t.wgsl:10:3
  %11 = coop_fill %10 : coopmat<f16, {a}, {ra}>            ; t.wgsl:11:3
  %12 = coop_fill %10 : coopmat<f16, {b}, {rb}>            ; t.wgsl:12:3
  %13 = const {{value = 0x0.0p+0}} : f32                  ; t.wgsl:13:3
  %14 = coop_fill %13 : coopmat<f32, {c}, C>               ; t.wgsl:14:3
  %15 = coop_mma %11, %12, %14 : coopmat<f32, {c}, C>      ; t.wgsl:15:7
'''


def _coop(a="16x16", ra="A", b="16x16", rb="B", c="16x16"):
    return COOP.format(a=a, ra=ra, b=b, rb=rb, c=c)


def _module(body: str):
    return parse_ir(HEAD + body + "}\n", "t.ir")


def _rejects(body: str, message: str, line: int, col: int):
    m = _module(body)
    with pytest.raises(VerifyError) as ei:
        verify(m)
    e = ei.value
    assert isinstance(e, EmuError)
    assert e.message == message
    assert e.loc == Loc("t.wgsl", line, col)
    assert str(e).startswith(f"t.wgsl:{line}:{col}: error: {message}")


def test_the_base_module_verifies():
    verify(_module(""))
    verify(_module(_coop()))


@pytest.mark.parametrize("body, message, line, col", [
    ("  frobnicate %1                                          ; t.wgsl:7:3\n",
     "unknown op 'frobnicate'", 7, 3),
    ("  %3 = load %1, %2 : f32                                 ; t.wgsl:7:3\n",
     "'load' takes 1..1 operands, not 2", 7, 3),
    ("  %3 = construct : vec2<f32>                             ; t.wgsl:7:3\n",
     "'construct' takes 1..n operands, not 0", 7, 3),
    ("  %3 = binary %1, %1 : f32                               ; t.wgsl:7:3\n",
     "'binary' needs attribute 'fn'", 7, 3),
    ("  %3 = global : ptr<storage, array<f32>, read>           ; t.wgsl:7:3\n",
     "'global' needs attribute 'name'", 7, 3),
    ("  %3 = binary %1, %4 {fn = \"add\"} : f32                 ; t.wgsl:7:3\n"
     "  %4 = const {value = 0x1.0p+1} : f32                     ; t.wgsl:8:3\n",
     "'binary' uses %4 before it is defined (or outside its block)", 7, 3),
    ("  %3 = binary %2, %2 {fn = \"lt\"} : bool                  ; t.wgsl:7:3\n"
     "  if %3 {                                                ; t.wgsl:7:3\n"
     "    %4 = binary %1, %1 {fn = \"add\"} : f32               ; t.wgsl:8:5\n"
     "  } {\n"
     "  }\n"
     "  %5 = binary %4, %1 {fn = \"mul\"} : f32                 ; t.wgsl:10:3\n",
     "'binary' uses %4 before it is defined (or outside its block)", 10, 3),
    ("  break                                                  ; t.wgsl:7:3\n",
     "break outside a loop or switch", 7, 3),
    ("  %3 = binary %2, %2 {fn = \"lt\"} : bool                  ; t.wgsl:7:3\n"
     "  if %3 {                                                ; t.wgsl:7:3\n"
     "    continue                                             ; t.wgsl:8:5\n"
     "  } {\n"
     "  }\n",
     "continue outside a loop", 8, 5),
    ("  %3 = global {name = \"ro\"} : ptr<storage, array<f32>, read> ; t.wgsl:7:3\n"
     "  %4 = access %3, %0 {path = [-1]} : ptr<storage, f32, read> ; t.wgsl:7:3\n"
     "  store %4, %1                                           ; t.wgsl:7:9\n",
     "store through a read-only pointer (ptr<storage, f32, read>)", 7, 9),
    ("  %3 = binary %1, %2 {fn = \"add\"} : f32                 ; t.wgsl:7:12\n",
     "binary 'add' of different types f32 and u32", 7, 12),
    ("  %3 = const {value = 1} : i32                           ; t.wgsl:7:3\n"
     "  %4 = binary %2, %3 {fn = \"shl\"} : u32                 ; t.wgsl:7:12\n",
     "shift of u32 by i32: the amount must be u32 of the same width", 7, 12),
    ("  %3 = if_not %1 : bool                                  ; t.wgsl:7:3\n",
     "unknown op 'if_not'", 7, 3),
    ("  if %2 {                                                ; t.wgsl:7:3\n"
     "  } {\n"
     "  }\n",
     "if condition must be bool, not u32", 7, 3),
    ("  loop {                                                 ; t.wgsl:7:3\n"
     "  }\n",
     "'loop' has 2 blocks, not 1", 7, 3),
    ("  %3 = store %1, %1 : f32                                ; t.wgsl:7:3\n",
     "'store' must not produce a value", 7, 3),
    (_coop(ra="B", rb="A"), "coop_mma needs roles A, B, C; got B, A, C", 15, 7),
    (_coop(a="16x8"), "coop_mma shapes do not agree: 16x8 x 16x16 + 16x16", 15, 7),
    (_coop(c="8x8"), "coop_mma shapes do not agree: 16x16 x 16x16 + 8x8", 15, 7),
])
def test_verifier_rejects(body, message, line, col):
    _rejects(body, message, line, col)


def test_verifier_rejects_programmatic_ir():
    """The same checks on IR built with the Builder, independent of the text parser."""
    b = Builder()
    body = Block()
    b.block = body
    b.loc = Loc("p.wgsl", 3, 4)
    x = b.op("const", [], T.F32, value=1.0)
    y = b.op("const", [], T.U32, value=1)
    b.op("binary", [x, y], T.F32, fn="sub")
    m = Module(file="p.wgsl", functions=[Function("f", [], T.VOID, body)])
    with pytest.raises(VerifyError) as ei:
        verify(m)
    assert ei.value.message == "binary 'sub' of different types f32 and u32"
    assert ei.value.loc == Loc("p.wgsl", 3, 4)
