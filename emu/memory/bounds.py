"""Out-of-bounds accesses. WGSL defines them: a WebGPU implementation keeps every access inside
its buffer or variable (an index is clamped, a read may return zero, a write may be dropped;
WebGPU's robust buffer access allows each). By default (`bounds="webgpu"`) emu runs such an
access the way an implementation does (an index is clamped to the last element, as Dawn's
robustness transform does; a cooperative matrix access follows the profile's measured rule, else
Dawn's, see memory/coop.py) and reports every site once after the dispatch: where in the source,
what it touched, the first workgroup and lane, and how many accesses. `bounds="strict"` stops at
the first one with an error instead."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import EmuError, HostError

BOUNDS = ("webgpu", "strict")
DEFAULT_BOUNDS = "webgpu"
STRICT_HINT = "--bounds strict (Python: bounds=\"strict\") stops at the first out-of-bounds access"


def check_bounds_option(value: str) -> str:
    if value not in BOUNDS:
        raise HostError(f"bounds must be one of {', '.join(BOUNDS)}, not {value!r}",
                        hint="webgpu: run out-of-bounds accesses as WebGPU does and report them; "
                             "strict: stop at the first")
    return value


@dataclass
class Site:
    loc: object
    what: str           # what was accessed: "buffer 'x' (@group(0) @binding(1))"
    kind: str           # "index" or "cooperative matrix access"
    done: str           # what the device did instead
    where: str          # the first lane that went out of bounds
    count: int = 0      # accesses (lanes; elements for a cooperative matrix)
    unit: str = "access"
    text: str = ""      # the message's start where it is not an out-of-bounds access
    hint: str = STRICT_HINT


class BoundsLog:
    """The out-of-bounds sites of one dispatch, each once, in source order."""

    def __init__(self):
        self.sites: dict = {}

    def note(self, ex, inst, what: str, kind: str, done: str, lanes: np.ndarray, count: int,
             unit: str = "access", text: str = "", hint: str = STRICT_HINT):
        key = (id(inst), what)
        site = self.sites.get(key)
        if site is None:
            site = self.sites[key] = Site(inst.loc, what, kind, done, ex.where(int(np.flatnonzero(lanes)[0])),
                                          unit=unit, text=text, hint=hint)
        site.count += int(count)

    def warnings(self) -> list[EmuError]:
        out = []
        for s in sorted(self.sites.values(), key=lambda s: (getattr(s.loc, "line", 0), getattr(s.loc, "col", 0))):
            n = f"{s.count} {s.unit}{'' if s.count == 1 else 'es' if s.unit.endswith('s') else 's'}"
            head = f"{s.text}: {n}" if s.text else f"out-of-bounds {s.kind} into {s.what}: {n} out of bounds"
            out.append(EmuError(f"{head}; {s.done}", s.loc, where=f"first in {s.where}", hint=s.hint,
                                severity="warning"))
        return out


def tally(warnings: list) -> str:
    """What a run's warnings were, counted by kind: "2 out-of-bounds site(s), 1 same-value store
    race(s)" (empty when there were none)."""
    same = sum("write the same value" in w.message for w in warnings)
    oob = len(warnings) - same
    return ", ".join(([f"{oob} out-of-bounds site(s)"] if oob else []) +
                     ([f"{same} same-value store race(s)"] if same else []))

