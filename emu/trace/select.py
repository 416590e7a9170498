"""What a trace records: op categories or names, and which workgroups, subgroups and lanes.

    --trace-ops coop,barrier            categories: coop, barrier, memory, control, all;
                                        or op names of the IR (coop_mma, load, binary, ...)
    --trace-workgroups "0,0,0;1-3,*,0"  ';'-separated X,Y,Z patterns; each coordinate N, A-B or *
                                        (missing coordinates are *)
    --trace-subgroups 0,2-3             subgroup indices within the workgroup
    --trace-lanes 0-7,16                subgroup invocation ids (lanes of a subgroup)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import HostError
from ..isa.ops import OP, OPS

CATEGORIES = ("coop", "barrier", "memory", "control", "other")
DEFAULT_OPS = ("coop", "barrier")


class SelectionError(HostError):
    """A malformed --trace-* value (the command line reports it as a usage error)."""


def category(op: str) -> str:
    d = OPS[op]
    if d.cooperative:
        return "coop"
    if op == OP.barrier:
        return "barrier"
    if op in (OP.load, OP.store, OP.atomic, OP.texture, OP.address_ptr):
        return "memory"
    if d.blocks != 0 or d.terminator:
        return "control"
    return "other"


def _ints(text: str, flag: str, what: str) -> list[tuple[int, int]]:
    """'0,2-3' -> [(0, 0), (2, 3)] (inclusive ranges)."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                lo, hi = int(a), int(b)
            else:
                lo = hi = int(part)
        except ValueError:
            raise SelectionError(f"{flag} {text!r}: {part!r} is not a {what} number or range A-B",
                                 hint=f"write e.g. {flag} 0,2-3") from None
        if lo < 0 or hi < lo:
            raise SelectionError(f"{flag} {text!r}: {part!r} is not a valid range",
                                 hint="ranges are A-B with 0 <= A <= B")
        out.append((lo, hi))
    if not out:
        raise SelectionError(f"{flag} {text!r}: no {what}s given", hint=f"write e.g. {flag} 0,2-3")
    return out


def _in(ranges, v: int) -> bool:
    return any(lo <= v <= hi for lo, hi in ranges)


@dataclass
class Selection:
    categories: frozenset = frozenset(DEFAULT_OPS)
    names: frozenset = frozenset()
    workgroups: list | None = None     # list of 3-tuples of range lists (None: any)
    subgroups: list | None = None      # range list
    lanes: list | None = None          # range list
    text: dict = field(default_factory=dict)

    @classmethod
    def parse(cls, ops: str | None = None, workgroups: str | None = None,
              subgroups: str | None = None, lanes: str | None = None) -> "Selection":
        sel = cls()
        if ops is not None:
            cats, names = set(), set()
            for w in (x.strip() for x in ops.split(",")):
                if not w:
                    continue
                if w == "all":
                    cats.update(CATEGORIES)
                elif w in CATEGORIES:
                    cats.add(w)
                elif w in OPS:
                    names.add(w)
                else:
                    import difflib
                    near = difflib.get_close_matches(w, list(CATEGORIES) + ["all"] + list(OPS), n=1)
                    raise SelectionError(
                        f"--trace-ops: {w!r} is neither a category (coop, barrier, memory, control, all) "
                        f"nor an IR op", hint=(f"did you mean {near[0]!r}? " if near else "")
                        + "see `emu ir` for op names")
            if not cats and not names:
                raise SelectionError("--trace-ops: nothing selected", hint="write e.g. --trace-ops coop,barrier")
            sel.categories, sel.names = frozenset(cats), frozenset(names)
            sel.text["ops"] = ops
        if workgroups is not None:
            pats = []
            for pat in workgroups.split(";"):
                pat = pat.strip()
                if not pat:
                    continue
                coords = [c.strip() for c in pat.split(",")]
                if len(coords) > 3:
                    raise SelectionError(f"--trace-workgroups {workgroups!r}: {pat!r} has more than 3 coordinates",
                                         hint='write X,Y,Z patterns separated by ";", e.g. "0,0,0;1-3,*,0"')
                coords += ["*"] * (3 - len(coords))
                pats.append(tuple(None if c in ("*", "") else
                                  _ints(c.replace("..", "-"), "--trace-workgroups", "workgroup")
                                  for c in coords))
            if not pats:
                raise SelectionError("--trace-workgroups: no workgroups given", hint='write e.g. "0,0,0;1,0,0"')
            sel.workgroups = pats
            sel.text["workgroups"] = workgroups
        if subgroups is not None:
            sel.subgroups = _ints(subgroups, "--trace-subgroups", "subgroup")
            sel.text["subgroups"] = subgroups
        if lanes is not None:
            sel.lanes = _ints(lanes, "--trace-lanes", "lane")
            sel.text["lanes"] = lanes
        return sel

    # -- queries ------------------------------------------------------------------------------
    def wants_op(self, op: str) -> bool:
        return op in self.names or category(op) in self.categories

    def explicit(self, op: str) -> bool:
        """Named on its own (not only through its category)."""
        return op in self.names

    def wants_workgroup(self, wid: tuple[int, int, int]) -> bool:
        if self.workgroups is None:
            return True
        return any(all(r is None or _in(r, v) for r, v in zip(pat, wid)) for pat in self.workgroups)

    def subgroup_mask(self, n: int) -> np.ndarray:
        if self.subgroups is None:
            return np.ones(n, np.bool_)
        return np.array([_in(self.subgroups, s) for s in range(n)], np.bool_)

    def lane_list(self, sg: int) -> list[int]:
        if self.lanes is None:
            return list(range(sg))
        return [l for l in range(sg) if _in(self.lanes, l)]

    @property
    def everything(self) -> bool:
        return self.categories >= frozenset(CATEGORIES)

    @property
    def all_lanes(self) -> bool:
        return self.lanes is None

    def describe(self) -> dict:
        ops = sorted(self.categories) + sorted(self.names)
        return {"ops": ops, "workgroups": self.text.get("workgroups", "*"),
                "subgroups": self.text.get("subgroups", "*"), "lanes": self.text.get("lanes", "*")}
