"""A workgroup-mode kernel cut into functions, so that numba's compile time and memory grow with
the kernel's size, not faster.

In workgroup mode (emu/jit/fuse.py) the code between barriers runs as groups, each a loop over the
workgroup's invocations, and every value lives in a per-lane array. One kernel unrolled by the
driver's compiler (llama.cpp's rms_norm: 13,000 lines, 2,800 arrays, 240 groups) is then one
Python function that numba's analyses take minutes and gigabytes over: their fix points run over
every block times every variable. Two rewrites of the generated text remove that:

- a lane's value that only one group uses (it is defined there, and in the IR its definition
  dominates its uses, so each run of the group sets it before reading it) becomes a plain local
  of that group instead of an element of a per-lane array: fewer arrays, and values LLVM keeps in
  registers;
- each group of at least MIN_LINES lines becomes a function of its own, called where it stood;
  its arguments are the kernel's names it reads (arrays, buffers, the workgroup's scalars). A
  failing check inside returns True, and the caller leaves the kernel as the inline code did.

The group's lines are those fuse._Gen.group writes between GROUP_BEGIN and GROUP_END. A group
that assigns one of the kernel's plain (scalar) names stays inline: a function could not give it
back. The result is the same code, run in the same order: the same bits (tests/perf/test_fuse.py).
"""
from __future__ import annotations

import re

GROUP_BEGIN, GROUP_END = "##GROUP{", "##GROUP}"     # a group (fuse._Gen.group)
STMT_BEGIN, STMT_END = "##STMT{", "##STMT}"         # a statement holding a barrier (fuse._Gen.wg_block)
MIN_LINES = 10              # shorter regions stay inline (a function of their own costs numba more)
GROUP_LINES = 150           # a longer group is cut into groups of about this many lines (fuse._Gen.group)
CHUNK_LINES = 300           # a block's statements are cut into runs of about this many lines
_LANE = re.compile(r"\b([vmie]\d+(?:_\d+)*)\[local\]")
_SSA = re.compile(r"^[vmie]\d+(?:_\d+)*$")      # a lane's value, variable or index (fuse._Gen.lane_var)
_FLAG = re.compile(r"^w(?:brk|cnt)\d+$")
_FLAG_USE = re.compile(r"\b(w(?:brk|cnt)\d+)\[")
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:[-+*|&]?=)(?!=)")


# the workgroup's barrier epoch and loop steps (fuse._Gen's scalars `ep` and `wsteps`) as the two
# elements of one array `wst`, which a function can advance for its caller
WG_STATE = re.compile(r"\b(ep|wsteps|ib|wexit(\d+))\b")


def wg_state(m) -> str:
    """`ep`, `wsteps`, `ib` (where the barrier interval began, with subgroup barriers) and each
    workgroup loop's exit flag as an element of the array `wst`."""
    fixed = {"ep": "wst[0]", "wsteps": "wst[1]", "ib": "wst[2]"}
    return fixed.get(m[1]) or f"wst[{3 + int(m[2])}]"


def _regions(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) line indices of each group's markers."""
    out, start = [], None
    for i, line in enumerate(lines):
        s = line.strip()
        if s == GROUP_BEGIN:
            start = i
        elif s == GROUP_END:
            out.append((start, i))
            start = None
    return out


def prune(lines: list[str], defined: set[str]) -> list[str]:
    """The lines less each group's definitions of `defined` names (the builtin inputs every group
    computes for its invocation) that the group never reads."""
    drop = set()
    for a, b in _regions(lines):
        used: set[str] = set()
        defs = []
        for i in range(a, b + 1):
            m = _ASSIGN.match(lines[i])
            if m and m[1] in defined:
                defs.append(i)
            else:
                used.update(_IDENT.findall(lines[i]))
        for i in reversed(defs):                # (a later input may read an earlier one)
            lhs, rhs = lines[i].split("=", 1)
            if lhs.strip() in used:
                used.update(_IDENT.findall(rhs))
            else:
                drop.add(i)
    return [x for i, x in enumerate(lines) if i not in drop]


def localize(lines: list[str], candidates: set[str]) -> set[str]:
    """Make each candidate per-lane array a plain local of the groups that name it (in place)
    where no value crosses from one group to another: a name that only one group uses (a value
    defined there), or one that each group using it first stores at its top level, where the
    store runs before anything else of the group reads it (a function's variables, which
    SPIR-V declares at the top of its first block: the first group stores their initial value,
    later ones set them before reading). Returns those names (their arrays are no longer needed)."""
    regions = _regions(lines)
    region = [-1] * len(lines)
    for r, (a, b) in enumerate(regions):
        region[a:b + 1] = [r] * (b + 1 - a)
    where: dict[str, dict] = {}             # name -> {region: its first line there}
    for i, line in enumerate(lines):
        for name in _IDENT.findall(line):
            if name in candidates and _SSA.match(name):
                where.setdefault(name, {}).setdefault(region[i], i)

    def stored_first(name, r, i):           # the group's first use: a store at its top level
        a = regions[r][0]
        top = " " * (len(lines[a]) - len(lines[a].lstrip()) + 8)    # (fuse._Gen.group: for, while, body)
        head = f"{top}{name}[local] = "
        return lines[i].startswith(head) and name not in _IDENT.findall(lines[i][len(head):])
    local = {n for n, rs in where.items() if -1 not in rs and (
        len(rs) == 1 or all(stored_first(n, r, i) for r, i in rs.items()))}
    for a, b in regions:
        for i in range(a, b + 1):
            if "[local]" in lines[i]:
                lines[i] = _LANE.sub(lambda m: m[1] if m[1] in local else m[0], lines[i])
    return local


def pack(lines: list[str], arrays: dict[str, str], lanes: int) -> tuple[list[str], list[str], set]:
    """(the lines with each per-lane array of `arrays` (name -> numpy dtype) made a row of one
    2-D array per dtype, the setup lines of those, the names packed): a kernel then holds a handful of arrays
    instead of hundreds, and a group's function takes a handful of arguments."""
    rows: dict[str, dict[str, int]] = {}
    for name, dt in sorted(arrays.items()):
        if _SSA.match(name):
            table = rows.setdefault(dt, {})
            table[name] = len(table)
    where = {name: (f"lanes_{dt.split('.')[-1]}", row) for dt, table in rows.items() for name, row in table.items()}

    def sub(m):
        got = where.get(m[1])
        return m[0] if got is None else f"{got[0]}[{got[1]}, local]"
    out = [_LANE.sub(sub, x) if "[local]" in x else x for x in lines]
    # the flags of the workgroup's loops (fuse._Gen.wg_loop), indexed [local] and [:]
    flags = {name: row for row, name in enumerate(sorted(n for n in arrays if _FLAG.match(n)))}
    if flags:
        out = [_FLAG_USE.sub(lambda m: f"wflags[{flags[m[1]]}, " if m[1] in flags else m[0], x) for x in out]
    setup = [f"lanes_{dt.split('.')[-1]} = np.zeros(({len(t)}, {lanes}), {dt})" for dt, t in sorted(rows.items())]
    setup += [f"wflags = np.zeros(({len(flags)}, {lanes}), np.bool_)"] if flags else []
    return out, setup, set(where) | set(flags)


def chunk(lines: list[str], starts: list[int], pad: str) -> None:
    """Mark runs of consecutive statements of one block (each from starts[i] to starts[i + 1]) as
    regions of about CHUNK_LINES lines (in place), so that a block of many short statements (the
    groups and barriers of an unrolled loop) is cut into functions too."""
    spans = [(a, b) for a, b in zip(starts, starts[1:]) if b > a]
    if not spans or spans[-1][1] - spans[0][0] <= CHUNK_LINES:
        return
    runs, cur = [], []
    for a, b in spans:
        if cur and b - cur[0][0] > CHUNK_LINES:
            runs.append(cur)
            cur = []
        cur.append((a, b))
    runs.append(cur)
    for run in reversed([r for r in runs if len(r) > 1]):
        lines.insert(run[-1][1], pad + STMT_END)
        lines.insert(run[0][0], pad + STMT_BEGIN)


def _escaping(body: list[str]) -> set[int]:
    """The lines of `body` that are a `break` or `continue` of a loop around it (the workgroup's
    loop whose body these lines are part of)."""
    loops: list[int] = []
    out = set()
    for i, x in enumerate(body):
        if not x.strip() or x.lstrip().startswith("#"):
            continue
        ind = len(x) - len(x.lstrip())
        while loops and ind <= loops[-1]:
            loops.pop()
        s = x.strip()
        if s.startswith(("while ", "for ")):
            loops.append(ind)
        elif s in ("break", "continue") and not loops:
            out.add(i)
    return out


# what a region's function returns: go on, or what the inline code did (a failing check's
# `return`, a `break` or `continue` of the loop around the region)
_GO, _RETURN, _BREAK, _CONTINUE = 0, 1, 2, 3


def split(lines: list[str], outer: set[str], decorator: str, prefix: str = "grp") -> tuple[list[str], list[str]]:
    """(the functions, the lines with each long marked region, innermost first, replaced by a call
    to its function); the markers are dropped. `outer`: the names the kernel defines outside the
    regions (its parameters, arrays and per-workgroup scalars), which a function takes as
    arguments; a region that assigns one of them stays inline. The function returns what the
    region did (_GO, _RETURN, _BREAK, _CONTINUE) and its call does the same.

    Only regions that call no other function become functions: numba links a callee's machine
    code into its caller's module and optimizes that module again, so a chain of functions each
    calling the next costs the whole kernel's LLVM time once per level (measured: rms_norm's
    wrappers took 9, 11, 15, 18, 22, 32, 60 s, one level after the other). Flat, the whole is
    optimized once, in `run`."""
    funcs: list[str] = []
    begins, ends = (GROUP_BEGIN, STMT_BEGIN), (GROUP_END, STMT_END)
    call = re.compile(rf"^\s*_s\d+ = {prefix}\d+\(")    # a region that calls one stays inline (below)

    def outlined(body: list[str], ind: int) -> list[str]:
        if len(body) < MIN_LINES or any((m := _ASSIGN.match(x)) and m[1] in outer or call.match(x) for x in body):
            return body
        names = sorted({n for x in body for n in _IDENT.findall(x.split("#", 1)[0]) if n in outer})
        name = f"{prefix}{sum(1 for x in funcs if x.startswith('def '))}"
        funcs.extend([decorator, f"def {name}({', '.join(names)}):"])
        esc = _escaping(body)
        done = {"return": _RETURN, "break": _BREAK, "continue": _CONTINUE}
        for i, x in enumerate(body):
            s = x[ind:]
            word = s.strip()
            if word == "return" or i in esc:
                s = s.replace(word, f"return {done[word]}")
            funcs.append("    " + s)
        funcs.extend([f"    return {_GO}", "", ""])
        pad = " " * ind
        # (a name of its own at each call: numba rebuilds SSA form for a name assigned in many places)
        res = f"_s{name[len(prefix):]}"
        site = [pad + f"{res} = {name}({', '.join(names)})", pad + f"if {res} == {_RETURN}:", pad + "    return"]
        for word in ("break", "continue"):
            if any(body[i].strip() == word for i in esc):
                site += [pad + f"if {res} == {done[word]}:", pad + f"    {word}"]
        return site

    def walk(part: list[str]) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(part):
            if part[i].strip() not in begins:
                out.append(part[i])
                i += 1
                continue
            depth, j = 0, i
            while True:
                s = part[j].strip()
                depth += (s in begins) - (s in ends)
                if depth == 0:
                    break
                j += 1
            out += outlined(walk(part[i + 1:j]), len(part[i]) - len(part[i].lstrip()))
            i = j + 1
        return out
    return funcs, walk(lines)
