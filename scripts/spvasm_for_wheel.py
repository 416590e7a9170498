"""SPIR-V assembly from a newer spirv-dis (Debian's 2026.4, scripts/glslang_nv2.sh) rewritten so the
emu-gpu[vulkan] wheel's spirv-as (2025.5, grammar 1.6 revision 4) assembles it into the same words:
a renamed instruction or enumerant takes the old name the newer grammar keeps as its alias, and
an instruction, capability or decoration the old grammar lacks becomes OpUnknown(opcode, words)
with its value as a number (VK_EXT_cooperative_matrix_maintenance1's GetCoordinate, conversions
capability and transpose decoration). Both grammars are read from their folders.

    python scripts/spvasm_for_wheel.py NEW_GRAMMAR_DIR OLD_GRAMMAR_DIR < in.spvasm > out.spvasm
"""
import json
import re
import sys
from pathlib import Path


def grammar(d):
    doc = json.loads((Path(d) / "spirv.core.grammar.json").read_text())
    ops = {i["opname"]: i for i in doc["instructions"]}
    enums = {}
    for k in doc["operand_kinds"]:
        for e in k.get("enumerants", ()):
            enums.setdefault(k["kind"], {})[e["enumerant"]] = e
    return ops, enums


def main():
    (new_ops, new_enums), (old_ops, old_enums) = grammar(sys.argv[1]), grammar(sys.argv[2])
    value = lambda v: int(v, 16) if isinstance(v, str) else v  # noqa: E731
    for line in sys.stdin:
        m = re.match(r"(\s*)(?:(%\S+) = )?(Op\w+)(.*)", line.rstrip("\n"))
        if not m:
            sys.stdout.write(line)
            continue
        pad, res, op, rest = m.groups()
        words = rest.split()
        if op not in old_ops:
            alias = next((a for a in new_ops[op].get("aliases", ()) if a in old_ops), None)
            if alias:
                op = alias
            else:                           # an instruction the old grammar lacks: ids only here
                kinds = [o["kind"] for o in new_ops[op]["operands"]]
                args = words[:1] + [res] + words[1:] if kinds[:2] == ["IdResultType", "IdResult"] else words
                line = f"{pad}OpUnknown({new_ops[op]['opcode']}, {1 + len(args)}) {' '.join(args)}\n"
                sys.stdout.write(line)
                continue
        kind = {"OpCapability": "Capability", "OpDecorate": "Decoration"}.get(op)
        out = []
        for w in words:
            e = new_enums.get(kind, {}).get(w) if kind else None
            if e is not None and w not in old_enums[kind]:
                alias = next((a for a in e.get("aliases", ()) if a in old_enums[kind]), None)
                if alias is None:           # a capability or decoration the old grammar lacks
                    n = 1 + len(words)
                    code = old_ops[op]["opcode"]
                    args = [str(value(e["value"])) if x == w else x for x in words]
                    out = None
                    sys.stdout.write(f"{pad}OpUnknown({code}, {n}) {' '.join(args)}\n")
                    break
                w = alias
            out.append(w)
        if out is None:
            continue
        sys.stdout.write(f"{pad}{res + ' = ' if res else ''}{op}{' ' if out else ''}{' '.join(out)}\n")


if __name__ == "__main__":
    main()
