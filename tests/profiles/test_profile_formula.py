"""The lane-map formula language: right answers, and nothing but integer arithmetic (an `ast` tree
with a whitelist of nodes, evaluated here: nothing reaches eval)."""

import numpy as np
import pytest

from emu.profiles import Formula, FormulaError


def ev(src, **kw):
    return int(Formula(src, names=tuple(kw) or ("lane", "i")).evaluate(**kw))


@pytest.mark.parametrize("src, want", [
    ("1 + 2 * 3", 7),
    ("(1 + 2) * 3", 9),
    ("7 // 2", 3),
    ("-7 // 2", -4),          # floor, like Python
    ("-7 % 3", 2),
    ("1 << 4 | 1", 17),       # shifts bind tighter than |
    ("6 & 3 ^ 1", 3),         # & before ^, as in Python
    ("~0", -1),
    ("0x10 + 1", 17),
    ("--3", 3),
    ("2 * 3 % 4", 2),         # left to right at equal precedence
])
def test_arithmetic_follows_python(src, want):
    assert ev(src) == want == eval(src)  # eval only on our own trusted literals, to compare


def test_names_and_vectorisation():
    f = Formula("(lane >> 2) + 8 * ((i >> 1) & 1)")
    lane, i = np.arange(32)[:, None], np.arange(4)[None, :]
    got = f.evaluate(lane=lane, i=i)
    assert got.shape == (32, 4)
    assert got[5, 2] == 1 + 8 and got[31, 0] == 7


@pytest.mark.parametrize("src", [
    "__import__('os').system('echo hi')",
    "lane.__class__",
    "open('x')",
    "lane ** 2",
    "lambda: 1",
    "1 if lane else 2",
    "[1, 2][0]",
    "lane; i",
    "'a'",
    "1.5",
    "lane < 3",
    "",
    "   ",
    "(lane",
    "lane)",
    "lane lane",
    "exec",
])
def test_rejects_anything_else(src):
    with pytest.raises(FormulaError):
        Formula(src).evaluate(lane=np.arange(4), i=0)


def test_unknown_name_message_lists_allowed_names():
    with pytest.raises(FormulaError, match=r"unknown name 'x'.*allowed names: i, lane"):
        Formula("lane + x")


def test_limits():
    with pytest.raises(FormulaError, match="longer than"):
        Formula("1+" * 300 + "1")
    with pytest.raises(FormulaError, match="nested too deeply"):
        Formula("(" * 60 + "1" + ")" * 60)
    with pytest.raises(FormulaError, match="division by zero"):
        Formula("lane // (i - i)").evaluate(lane=1, i=2)
    with pytest.raises(FormulaError, match="shift"):
        Formula("lane << 99").evaluate(lane=1, i=0)
    with pytest.raises(FormulaError, match="no value"):
        Formula("lane + i").evaluate(lane=1)


@pytest.mark.parametrize("src, message", [
    ("__import__('os').system('x')", "a function call at column 1"),
    ("lane.__class__", "an attribute at column 1"),
    ("lane[0]", "an index at column 1"),
    ("lane ** 2", "** at column 6"),
    ("lane / 2", "/ (use //) at column 6"),
    ("(lane + 1) < 3", "a comparison at column 1"),
    ("lane and i", "and/or at column 1"),
    ("1 if lane else 2", "a conditional expression at column 1"),
    ("lambda: 1", "a lambda at column 1"),
    ("(x := 1)", ":= at column 2"),
    ("+lane", "unary + at column 1"),
    ("not lane", "not at column 1"),
    ("1.5", "the constant 1.5 at column 1"),
    ("True", "the constant True at column 1"),
    ("'a'", "the constant 'a' at column 1"),
    ("[1, 2]", "a list at column 1"),
    ("  lane @ i", "@ at column 8"),
    ("lane; i", "is not a formula (invalid syntax at column 5)"),
])
def test_refused_constructs_are_named_with_their_column(src, message):
    with pytest.raises(FormulaError) as e:
        Formula(src)
    assert message in e.value.message
    assert "allowed: integers, names, ( ) and the operators" in e.value.message


def test_nothing_is_evaluated_while_refusing(tmp_path):
    marker = tmp_path / "ran"
    with pytest.raises(FormulaError):
        Formula(f"__import__('pathlib').Path({str(marker)!r}).touch()")
    assert not marker.exists()
