"""Static memory layout of a pipeline: where each private/workgroup global and each function
`var` lives, and the workgroup's shape. Computed once per pipeline; WGSL has no recursion, so
every variable of every function gets a fixed offset in its lane's private row."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import EmuError
from ..isa.ir import Function, Module
from ..isa.types import MAX_INVOCATION_BYTES, CoopMatrixType, contains, round_up

MAX_INVOCATIONS = 1024


@dataclass
class PipelineLayout:
    wg_size: tuple[int, int, int]
    lane_bytes: int = 0
    workgroup_bytes: int = 0
    global_offsets: dict[str, int] = field(default_factory=dict)
    var_offsets: dict[int, int] = field(default_factory=dict)   # var result id -> byte offset

    @property
    def wg_count(self) -> int:
        return self.wg_size[0] * self.wg_size[1] * self.wg_size[2]

    def padded_size(self, subgroup_size: int) -> int:
        return round_up(subgroup_size, self.wg_count)


def make_layout(module: Module, entry: Function, overrides: dict, subgroup_size: int) -> PipelineLayout:
    size = []
    for v in entry.workgroup_size:
        n = overrides[v] if isinstance(v, str) else v
        if int(n) < 1:
            raise EmuError(f"workgroup size {tuple(entry.workgroup_size)} must be positive", entry.loc,
                           hint="check the overrides used in @workgroup_size")
        size.append(int(n))
    lay = PipelineLayout(tuple(size))
    if lay.wg_count > MAX_INVOCATIONS:
        raise EmuError(f"workgroup size {tuple(size)} has {lay.wg_count} invocations; the device "
                       f"allows at most {MAX_INVOCATIONS}", entry.loc,
                       hint="make the workgroup smaller")
    lane, wg = 0, 0
    # the aliased workgroup blocks share the first bytes: each starts at 0, the largest sets the size
    for g in module.globals:
        if g.space == "workgroup" and g.aliased:
            lay.global_offsets[g.name] = 0
            wg = max(wg, g.type.size)
    for g in module.globals:
        if contains(g.type, CoopMatrixType) or g.aliased:
            continue                      # held as fragments (memory.Cell), not bytes; placed above
        if g.space == "private":
            lane = round_up(g.type.align, lane)
            lay.global_offsets[g.name] = lane
            lane += g.type.size
        elif g.space == "workgroup":
            wg = round_up(g.type.align, wg)
            lay.global_offsets[g.name] = wg
            wg += g.type.size
    for f in module.functions:
        for inst in f.walk():
            if inst.op == "var":
                t = inst.type.pointee
                if contains(t, CoopMatrixType):
                    continue
                lane = round_up(t.align, lane)
                lay.var_offsets[inst.result.id] = lane
                lane += t.size
    lay.lane_bytes, lay.workgroup_bytes = lane, wg
    if lane > MAX_INVOCATION_BYTES:
        raise EmuError(f"the function and private variables of one invocation take {lane} bytes; emu "
                       f"allows {MAX_INVOCATION_BYTES} (WGSL guarantees 8192 of each)", entry.loc,
                       hint="keep large arrays in var<workgroup> or storage buffers")
    return lay
