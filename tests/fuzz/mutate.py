"""Mutations of text and bytes for the fuzzer: each one a small, plausible edit a careless user or
an attacker might make (delete, repeat, swap or splice a piece; put in a token, an extreme number,
an odd character), chosen by a seeded random.Random so that a run is repeatable."""
from __future__ import annotations

import random
import re

# tokens worth putting in a WGSL shader: keywords, operators, brackets, extreme literals, names
# that are the same after NFKC folding, characters that are not what they look like
TOKENS = [
    "fn", "var", "let", "const", "override", "struct", "loop", "for", "while", "if", "else", "switch",
    "case", "default", "break", "continue", "return", "discard", "continuing", "break if", "alias",
    "enable f16;", "requires", "diagnostic", "const_assert", "workgroupBarrier();", "storageBarrier();",
    "@compute", "@workgroup_size(64)", "@workgroup_size(1024, 1024)", "@group(0)", "@binding(0)", "@id(0)",
    "@builtin(local_invocation_index)", "@align(16)", "@size(4)", "array", "array<", "array<u32>",
    "array<2>", "atomic<u32>", "ptr<function, u32>", "ptr<storage, u32, read_write>", "vec4<f32>",
    "mat4x4<f32>", "vec3<bool>", "f16", "u32", "i32", "f32", "bool", "<", ">", "<<", ">>", ">>=",
    "(", ")", "[", "]", "{", "}", ",", ";", ":", ".", "->", "=", "==", "!", "~", "&", "&&", "|", "||",
    "^", "+", "-", "*", "/", "%", "++", "--", "+=", ".x", ".xx", ".rgba", "&o", "*p",
    "0", "1u", "-1i", "2147483647i", "4294967295u", "4294967296u", "9223372036854775807",
    "0x7fffffff", "1e999999", "1e309", "1e-999999", "0x1p99999", "1.5h", "0.1f", "3.4e38f",
    "select(0u, 1u, o)", "arrayLength(&o)", "bitcast<f32>(1u)", "i32(o.xx)", "atomicAdd(&o, 1u)",
    "subgroupAdd(1u)", "subgroupBroadcast(1u, 99u)", "workgroupUniformLoad(&o)",
    "fi", "\ufb01", "\u212e", "a\u0301", "_", "__", "o[70]", "o[9223372036854775807]",
    "\u0000", "\ufeff", "\u2028", "\u00a0", "/*", "*/", "//", "\"", "\\", "#", "$",
]


def mutate(text: str, rng: random.Random, seeds: list[str] | None = None, edits: int | None = None) -> str:
    """`text` after 1..4 random edits."""
    for _ in range(edits or rng.choice((1, 1, 1, 2, 2, 3, 4))):
        text = _one(text, rng, seeds)
    return text


def _span(text: str, rng: random.Random) -> tuple[int, int]:
    if not text:
        return 0, 0
    a = rng.randrange(len(text) + 1)
    if rng.random() < 0.5:                       # a token-sized piece
        m = re.compile(r"\w+|\s+|.").match(text, min(a, len(text) - 1))
        return m.start(), m.end()
    return a, min(len(text), a + rng.choice((1, 2, 4, 8, 16, 64, 256)))


def _one(text: str, rng: random.Random, seeds) -> str:
    op = rng.randrange(11)
    a, b = _span(text, rng)
    if op == 0:                                   # delete
        return text[:a] + text[b:]
    if op == 1:                                   # repeat a piece
        return text[:b] + text[a:b] * rng.choice((1, 2, 8, 100)) + text[b:]
    if op in (2, 3, 4):                           # insert a token
        t = rng.choice(TOKENS)
        return text[:a] + (" " if rng.random() < 0.5 else "") + t + " " + text[a:]
    if op == 5:                                   # replace a piece by a token
        return text[:a] + rng.choice(TOKENS) + text[b:]
    if op == 6:                                   # swap two pieces
        c, d = _span(text, rng)
        if b <= c:
            return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
        return text
    if op == 7:                                   # a number becomes an extreme one
        nums = list(re.finditer(r"\b\d+(\.\d*)?([eE][+-]?\d+)?[uifh]?\b", text))
        if nums:
            m = rng.choice(nums)
            return text[:m.start()] + rng.choice(("0", "1", "4294967295", "2147483648", "65536", "4294967296",
                                                   "99999999999999999999", "1e40", "-1", "1e999999"
                                                   )) + text[m.end():]
        return text
    if op == 8:                                   # a random character
        return text[:a] + chr(rng.choice((rng.randrange(32, 127), rng.randrange(0, 32),
                                           rng.randrange(0x80, 0x3000), rng.randrange(0x10000, 0x10ffff)))) + text[a:]
    if op == 9 and seeds:                         # splice in a piece of another input
        other = rng.choice(seeds)
        c, d = _span(other, rng)
        return text[:a] + other[c:d] + text[b:]
    if op == 10:                                  # duplicate a whole line
        lines = text.split("\n")
        i = rng.randrange(len(lines))
        lines.insert(i, lines[rng.randrange(len(lines))])
        return "\n".join(lines)
    return text


def mutate_bytes(data: bytes, rng: random.Random, edits: int | None = None) -> bytes:
    """`data` after 1..4 byte-level edits (flip, delete, insert, truncate, repeat, set to an
    extreme value)."""
    b = bytearray(data)
    for _ in range(edits or rng.choice((1, 1, 2, 3, 4))):
        op = rng.randrange(6)
        i = rng.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(i, len(b) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            del b[i:i + rng.choice((1, 4, 16))]
        elif op == 2:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.choice((1, 2, 4, 8))))
        elif op == 3:
            del b[i:]
        elif op == 4:
            b[i:i] = b[i:i + rng.choice((1, 8, 64))] * rng.choice((2, 16))
        elif op == 5 and b:
            j = min(i, len(b) - 1)
            b[j] = rng.choice((0, 0x7f, 0x80, 0xff, ord("9"), ord("-"), ord(","), ord("(")))
    return bytes(b)
