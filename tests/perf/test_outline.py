"""emu/jit/outline.py on generated text, run as plain Python: a region made a function does what
its lines did inline (a failing check's return, a break or continue of the loop around it, the
arrays it writes), and the rewrites of values into locals and packed arrays keep the code's
meaning."""
import numpy as np

from emu.jit import outline

B, E = outline.STMT_BEGIN, outline.STMT_END


def _run(lines, outer, args, monkeypatch, min_lines=2):
    monkeypatch.setattr(outline, "MIN_LINES", min_lines)
    funcs, body = outline.split(lines, outer, "@(lambda f: f)")
    src = "\n".join(funcs + [f"def run({', '.join(args)}):"] + ["    " + x for x in body])
    ns = {"np": np}
    exec(src, ns)
    return ns["run"], funcs, body


def test_region_leaving_the_loop_around_it(monkeypatch):
    """A region whose lines break or continue the loop they sit in, or return from the kernel:
    its function returns which, and the call does it."""
    lines = ["out[0] = 0",
             "for i in range(10):",
             f"    {B}",
             "    out[0] += 1",
             "    if x[i] == 1:",
             "        continue",
             "    if x[i] == 2:",
             "        break",
             "    if x[i] == 3:",
             "        err[0] = i",
             "        return",
             "    out[1] += x[i]",
             f"    {E}",
             "    out[2] += 1"]
    run, funcs, body = _run(lines, {"out", "x", "err", "i"}, ["out", "x", "err"], monkeypatch)
    assert sum(1 for f in funcs if f.startswith("def ")) == 1
    assert any("_s0 == 2" in b for b in body) and any("_s0 == 3" in b for b in body)
    for x in ([0, 1, 0, 4, 1, 2, 5, 5, 5, 5], [0, 0, 3, 1, 1, 1, 1, 1, 1, 1], [5] * 10):
        got, err = np.zeros(3, np.int64), np.full(1, -1)
        run(got, np.array(x), err)
        want, werr, i = np.zeros(3, np.int64), -1, 0
        for i in range(10):                     # the same lines, inline
            want[0] += 1
            if x[i] == 1:
                continue
            if x[i] == 2:
                break
            if x[i] == 3:
                werr = i
                break
            want[1] += x[i]
            want[2] += 1
        assert list(got) == list(want) and err[0] == werr


def test_region_assigning_a_scalar_of_the_kernel_stays_inline(monkeypatch):
    lines = [B, "n = n + 1", "out[0] = n", E]
    run, funcs, body = _run(lines, {"n", "out"}, ["n", "out"], monkeypatch, min_lines=1)
    assert funcs == [] and body == ["n = n + 1", "out[0] = n"]


def test_only_leaf_regions_become_functions(monkeypatch):
    """A region holding another region's call stays inline (numba would optimize the callee's
    code again with its caller's)."""
    lines = [B, "out[0] = 1", "out[1] = 2", B, "out[2] = 3", "out[3] = 4", E, "out[4] = 5", E]
    run, funcs, body = _run(lines, {"out"}, ["out"], monkeypatch)
    assert sum(1 for f in funcs if f.startswith("def ")) == 1
    out = np.zeros(5, np.int64)
    run(out)
    assert list(out) == [1, 2, 3, 4, 5]


def test_localize_and_pack():
    """A lane's value one group uses becomes its local; a variable each group stores first at its
    top level too; one a later group reads before storing stays an array, packed into a row."""
    G, H = outline.GROUP_BEGIN, outline.GROUP_END
    top = "        "                               # (fuse._Gen.group: for, while, body)
    lines = [G, "for local in range(4):", "    while True:",
             top + "v1[local] = local * 2", top + "m2[local] = v1[local]", top + "m3[local] = 7",
             top + "v4[local] = v1[local] + 1", top + "break", H,
             G, "for local in range(4):", "    while True:",
             top + "m2[local] = 5", top + "out[local] = m2[local] + m3[local] + v4[local]", top + "break", H]
    local = outline.localize(lines, {"v1", "m2", "m3", "v4"})
    assert local == {"v1", "m2"}
    lines, setup, packed = outline.pack(lines, {"m3": "np.int64", "v4": "np.int64"}, 4)
    assert packed == {"m3", "v4"} and setup == ["lanes_int64 = np.zeros((2, 4), np.int64)"]
    src = "\n".join(["def run(out):"] + ["    " + x for x in setup]
                    + ["    " + x for x in lines if x.strip() not in (G, H)])
    ns = {"np": np}
    exec(src, ns)
    out = np.zeros(4, np.int64)
    ns["run"](out)
    assert list(out) == [5 + 7 + 2 * i + 1 for i in range(4)]
