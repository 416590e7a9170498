"""Lockstep executor: runs an entry point over a dispatch grid, batch by batch.

A batch is many workgroups at once. Every IR instruction runs once per batch over all its lanes
(numpy arrays with a leading lane axis); control flow narrows an active-lane mask. Workgroups are
padded to a whole number of subgroups with lanes that never run, so a subgroup is a reshape
(lanes -> (subgroups, subgroup_size)).

Because all invocations of a workgroup execute each instruction before any executes the next,
a barrier reached by every live invocation is already satisfied; one reached by only some of
them is the undefined behaviour WGSL forbids, and is reported.
"""
from __future__ import annotations

import math

from dataclasses import dataclass

import numpy as np

from ..errors import EmuError, HostError, note_location
from ..isa.ir import PUSH_CONSTANTS
from ..isa.ir import Block, Function, Inst, Module, used_globals
from ..isa.ops import OPS
from ..isa.types import CoopMatrixType, SamplerType, TextureType, Type, contains
from ..memory.memory import Cell, Ptr, Region, store, zero_value
from ..memory.textures import part_of
from . import fastpaths
from .coop import zero_fragments
from .frame import Breakable, Frame  # noqa: F401  (re-exported)
from .handlers import HANDLERS
from .layout import PipelineLayout


@dataclass
class Options:
    subgroup_size: int = 32
    # steps one invocation may take before it counts as hung: each loop iteration costs the
    # instructions of its body (as the JIT counts); per invocation, so it does not grow with the
    # dispatch. 1 M stops a stuck loop in well under a minute at the largest batch (measured).
    max_steps: int = 1_000_000
    timeout: float | None = None    # wall-clock seconds for one dispatch (--timeout), None: no limit
    race_check: bool = True         # report data races on workgroup memory and overlapping coop stores
    progress: object = None         # progress(text): called every few seconds of a long run
    bounds: str = "webgpu"          # out of bounds: run as WebGPU does and report, or "strict": stop
    batch_lanes: int = 1 << 16      # lanes per batch (whole workgroups)
    tracer: object = None           # emu.trace tracer, or None: no tracing cost
    jobs: int = 1                   # threads for the compiled kernels (emu/jit); never changes results


class Batch:
    """The state of one batch of workgroups being executed."""

    def __init__(self, pipe: "Pipeline", first_wg: int, nwg: int, buffers: dict):
        self.pipe, self.opts = pipe, pipe.opts
        layout: PipelineLayout = pipe.layout
        sg = self.opts.subgroup_size
        self.wg_lanes = layout.padded_size(sg)
        self.lanes = L = nwg * self.wg_lanes
        self.nwg = nwg
        geo = pipe.geometry(nwg)
        self.wg_of_lane, self.live = geo["wg_of_lane"], geo["live"]
        self.inputs = _Inputs(self, geo, first_wg)
        self.first_wg = first_wg
        self.lane_mem = Region("<private>", "lane", L, layout.lane_bytes, space="private")
        self.wg_mem = Region("<workgroup>", "workgroup", nwg, layout.workgroup_bytes, space="workgroup")
        self.buffers = buffers
        from ..memory.addresses import DEVICE_MEMORY
        self.addresses = buffers.get(DEVICE_MEMORY)     # the device's addressed buffers, if any
        self.globals = {}
        for g in pipe.module.globals:
            off = layout.global_offsets.get(g.name, 0)
            if g.space in ("storage", "uniform"):
                if (g.group, g.binding) in buffers:    # only those the entry point uses are bound
                    self.globals[g.name] = Ptr(buffers[(g.group, g.binding)], 0, g.type, None)
            elif g.space == "handle":              # a texture view or a sampler
                if (g.group, g.binding) in buffers:     # (a combined image sampler: its half)
                    self.globals[g.name] = part_of(buffers[(g.group, g.binding)], g.type)
            elif contains(g.type, CoopMatrixType):
                # only the entry point's own: another's may use a configuration this device lacks
                if g.name in pipe.used_names:
                    self.globals[g.name] = Cell(g.type, self.zero(g.type))
            elif g.space == "workgroup":
                self.globals[g.name] = Ptr(self.wg_mem, off, g.type, self.wg_of_lane,
                                           f"var<workgroup> '{g.name}'")
            else:
                self.globals[g.name] = Ptr(self.lane_mem, off, g.type, None, f"var<private> '{g.name}'")
        self.races = None               # shadow of workgroup memory (emu/memory/races.py)
        if self.opts.race_check and layout.workgroup_bytes:
            from ..memory.races import WorkgroupRaces
            self.races = WorkgroupRaces(nwg, layout.workgroup_bytes, self.wg_lanes, pipe.race_granule(),
                                         self.opts.subgroup_size)
        self.steps = 0                  # instructions issued (all lanes at once)
        self.lane_steps = np.zeros(L, np.int64)     # loop steps per invocation (see Options)
        self.step_bound = 0             # >= every lane's count: the exact check runs only past the limit
        self.consts: dict = {}

    def zero(self, t: Type):
        """The zero value of `t` in registers, cooperative matrices as zero fragments."""
        from .coop import zero_fragments
        return zero_value(t, self.lanes, lambda ct: zero_fragments(self, ct))

    # -- places and messages ------------------------------------------------------------------
    def where(self, lane: int) -> str:
        sg = self.opts.subgroup_size
        wid = tuple(int(x) for x in self.inputs["workgroup_id"][lane])
        local = lane % self.wg_lanes
        return (f"workgroup ({wid[0]}, {wid[1]}, {wid[2]}), subgroup {local // sg}, lane {local % sg} "
                f"(local_invocation_index {local})")

    def fail(self, inst: Inst, message: str, lanes: np.ndarray | None = None, hint: str | None = None):
        where = None
        if lanes is not None and lanes.any():
            where = self.where(int(np.flatnonzero(lanes)[0]))
        raise EmuError(message, inst.loc, hint=hint, where=where)

    def loop_step(self, inst: Inst, active: np.ndarray, cost: int) -> None:
        """One iteration of `inst` for the lanes of `active`: count it, stop a hung invocation,
        watch the clock."""
        self.lane_steps[active] += cost
        self.step_bound += cost
        limit = self.opts.max_steps
        if self.step_bound > limit:
            over = self.lane_steps > limit
            if over.any():
                self.fail(inst, f"the step limit ({limit} steps per invocation) was reached in this loop "
                                f"by {_lanes_phrase(int(over.sum()))}: probably a loop that never ends; "
                                f"{self.lanes_in(active)}",
                          over, hint="raise the limit with --max-steps N if the kernel really runs that long")
            self.step_bound = int(self.lane_steps.max())
        if self.pipe.clock is not None:
            self.pipe.clock.tick(self, inst, active)

    def race(self, inst: Inst, ptr, write: bool, mask: np.ndarray) -> None:
        """Check a load or store of workgroup memory against the others since the last barrier."""
        found = self.races.access(inst, write, self.wg_of_lane, ptr.offset, ptr.type.size, mask)
        if found is None:
            return
        lane, stamp, other, gran, other_wrote = found
        var, at = self.workgroup_variable(gran * self.races.granule)
        barrier, memory, lang = self.sync_words()
        self.fail(inst, f"data race on {memory} '{var}' (byte {at}): this {'write' if write else 'read'} "
                        f"and {self.racing(inst, lane, stamp, other, other_wrote)}, with no "
                        f"{barrier} between them (undefined behaviour in {lang})",
                  np.arange(self.lanes) == lane,
                  hint=f"put a {barrier} between the two accesses, let one invocation do both, "
                       "or use atomics (--no-race-check runs it anyway, as if the barrier were there)")

    def sync_words(self) -> tuple[str, str, str]:
        """(the workgroup barrier, workgroup memory, the language) as the shader's source spells
        them: WGSL's, or GLSL's and SPIR-V's for a .comp/.glsl/.spvasm/.spv module."""
        from ..frontend import is_spirv_file
        if is_spirv_file(self.pipe.module.file):
            return ("barrier() (OpControlBarrier, Workgroup scope)", "shared (Workgroup) variable",
                    "GLSL and SPIR-V")
        return "workgroupBarrier()", "var<workgroup>", "WGSL"

    def racing(self, inst: Inst, lane: int, stamp: int, other: Inst, other_wrote: bool) -> str:
        """'a write by invocation 3 (...) at f.wgsl:5:3': the other access of a race found by the
        shadow (emu/memory/races.py) at `lane`'s workgroup, from its stamp."""
        from ..memory.races import MANY, stamp_code
        code = stamp_code(stamp)
        base = lane - lane % self.wg_lanes
        if code == MANY:
            them = "by several other invocations"
        elif code < self.wg_lanes:
            them = f"by invocation {code} ({self.where(base + code)})"
        elif code == self.races.workgroup_agent:
            them = f"by the workgroup-scope cooperative matrix {'store' if other_wrote else 'load'}"
        else:
            sub = code - self.wg_lanes
            them = f"by the cooperative matrix {'store' if other_wrote else 'load'} of subgroup {sub} " \
                   f"({self.where(base + sub * self.opts.subgroup_size).split(', lane')[0]})"
        here = "this instruction" if other is inst else \
            f"{other.loc}" if other.loc is not None else "another instruction"
        return f"a {'write' if other_wrote else 'read'} {them} at {here}"

    def workgroup_variable(self, byte: int) -> tuple[str, int]:
        """The workgroup variable holding byte `byte` of a workgroup's memory, and the offset in it."""
        best = ("?", byte)
        for g in self.pipe.module.globals:
            off = self.pipe.layout.global_offsets.get(g.name)
            if g.space == "workgroup" and off is not None and off <= byte < off + max(g.type.size, 1):
                best = (g.name, byte - off)
        return best

    def lanes_in(self, mask: np.ndarray, show: int = 3) -> str:
        """'N lanes are still in it: workgroup (..), ...' for a message."""
        idx = np.flatnonzero(mask)
        head = "; ".join(self.where(int(i)) for i in idx[:show])
        more = f" and {idx.size - show} more" if idx.size > show else ""
        return f"{_lanes_phrase(idx.size, 'are')} still in it: {head}{more}"

    # -- running ---------------------------------------------------------------------------------
    def run(self, fn: Function):
        frame = Frame([None] * self.pipe.nvals, self.lanes)
        for i, name in fn.param_builtins.items():
            frame.vals[fn.params[i].id] = self.inputs[name]
        for g in self.pipe.module.globals:
            if g.space in ("private", "workgroup") and g.init is not None and not contains(g.type, CoopMatrixType):
                # WGSL initialises private variables; the rest, workgroup memory included, starts
                # as zeros: the batch's regions are made zero-filled (Batch.__init__)
                store(self.globals[g.name], self.constant(g.type, g.init), self.lanes, self.live, False)
        self.run_block(fn.body, self.live.copy(), frame)

    def run_block(self, block: Block, mask: np.ndarray, frame: Frame) -> np.ndarray:
        """Run `block` for the lanes of `mask`; returns the lanes still running at its end."""
        vals = frame.vals
        tracer = self.opts.tracer
        for inst in block.insts:
            self.steps += 1
            handler = HANDLERS[inst.op]
            if inst.blocks or OPS[inst.op].terminator:
                if tracer is not None:
                    tracer.event(self, inst, mask, frame)
                handler(self, inst, mask, frame)
                mask = mask & ~frame.dead
                if not mask.any():
                    return mask
                continue
            try:
                res = handler(self, inst, mask, frame)
            except Exception as e:      # a bug of ours: say at least where in the shader
                note_location(e, inst.loc, self.where(int(np.flatnonzero(mask)[0])) if mask.any() else None)
                raise
            if inst.result is not None:
                vals[inst.result.id] = res
            if tracer is not None:
                tracer.event(self, inst, mask, frame)
        return mask

    def arg(self, frame: Frame, inst: Inst, i: int):
        return frame.vals[inst.args[i].id]

    def constant(self, t: Type, value):
        """A constant in register form, broadcast over the batch's lanes (cached, read-only)."""
        from ..isa.constants import to_array
        key = (t, _freeze(value))
        v = self.consts.get(key)
        if v is None:
            v = self.consts[key] = to_array(t, value, self.lanes)
        return v


class _Inputs(dict):
    """Builtin input values of a batch, computed when an instruction first asks for one."""

    def __init__(self, batch: "Batch", geo: dict, first_wg: int):
        super().__init__(geo["inputs"])        # those that only depend on the lane's position
        self.batch, self.first_wg = batch, first_wg

    def __missing__(self, name):
        pipe = self.batch.pipe
        if name == "workgroup_id":
            gx, gy, _ = pipe.grid
            wg = self.first_wg + np.arange(self.batch.nwg)
            ids = np.stack([wg % gx, (wg // gx) % gy, wg // (gx * gy)], axis=1) + np.array(pipe.base)
            ids = ids.astype(np.uint32)
            v = ids[self.batch.wg_of_lane]
        elif name == "global_invocation_id":
            v = self["workgroup_id"] * np.array(pipe.layout.wg_size, np.uint32) + self["local_invocation_id"]
        elif name == "num_workgroups":
            v = np.broadcast_to(np.array(pipe.grid, np.uint32), (self.batch.lanes, 3))
        else:
            raise KeyError(name)
        self[name] = v
        return v


def _smallest_scalar(t) -> int:
    """Bytes of the smallest scalar a type holds (a struct's members, an array's elements)."""
    if hasattr(t, "members"):
        return min((_smallest_scalar(m.type) for m in t.members), default=4)
    while hasattr(t, "elem"):
        t = t.elem
    return getattr(t, "size", 4) or 4


def _lanes_phrase(n: int, verb: str = "") -> str:
    if n == 1:
        return "1 invocation" + (" is" if verb else "")
    return f"{n} invocations" + (f" {verb}" if verb else "")


class Clock:
    """Wall time of one dispatch: --timeout, and a progress note every few seconds."""

    FIRST, EVERY = 5.0, 10.0

    def __init__(self, opts: Options, total: int, per_batch: int):
        import time
        self.now = time.monotonic
        self.start = self.now()
        self.opts, self.total, self.per_batch = opts, total, per_batch
        self.next_note = self.start + self.FIRST
        self.deadline = self.start + opts.timeout if opts.timeout else None

    def tick(self, batch, inst=None, active=None) -> None:
        if self.deadline is None and self.opts.progress is None:
            return
        t = self.now()
        if self.deadline is not None and t > self.deadline:
            where = f"; {batch.lanes_in(active)}" if active is not None else ""
            batch.fail(inst or Inst("loop", []), f"the dispatch ran longer than --timeout {self.opts.timeout:g} "
                       f"seconds{' (stopped in this loop)' if inst is not None else ''}{where}", active,
                       hint="raise --timeout, or make the kernel do less per dispatch")
        if self.opts.progress is not None and t > self.next_note:
            self.next_note = t + self.EVERY
            loc = f", in the loop at {inst.loc}" if inst is not None and inst.loc is not None else ""
            done = batch.first_wg
            self.opts.progress(f"emu: running for {t - self.start:.0f} s: workgroups {done}..{done + batch.nwg - 1} "
                               f"of {self.total}{loc}")


def _freeze(v):
    """A hashable key of a constant's value; -0.0 and 0.0 (equal, one hash) keep apart."""
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    return (v, math.copysign(1.0, v)) if isinstance(v, float) else v


def _check_bindings(module: Module, entry) -> None:
    """One entry point may not use two variables at one @group @binding (other entry points may),
    but for buffers of one address space in a module that allows it (SPIR-V: views of one buffer)."""
    seen = {}
    for g in used_globals(module, entry):
        if g.group is None:
            continue
        other = seen.setdefault((g.group, g.binding), g)
        if other is not g and (g.group, g.binding) == PUSH_CONSTANTS:
            raise EmuError(f"entry point '{entry.name}' uses two push-constant blocks, '{other.name}' and "
                           f"'{g.name}': a pipeline has one", g.loc,
                           hint="put the values in one struct in a single var<push_constant>")
        if other is not g and {g.name, other.name} & set(module.combined_samplers) and \
                {type(g.type), type(other.type)} == {TextureType, SamplerType}:
            continue                # a combined image sampler's texture and sampler
        if other is not g and module.binding_aliases and g.space == other.space and g.space in ("storage", "uniform"):
            continue                # two views of one buffer (Vulkan's aliased descriptors)
        if other is not g:
            raise EmuError(f"@group({g.group}) @binding({g.binding}) is used by both '{other.name}' and "
                           f"'{g.name}' in entry point '{entry.name}'", g.loc,
                           hint="give one of them another binding")


class Pipeline:
    """A module specialised for one entry point, overrides, subgroup size and profile."""

    def __init__(self, module: Module, entry: str | None, overrides: dict, profile, opts: Options):
        from .layout import make_layout
        self.module, self.opts, self.profile = module, opts, profile
        eps = module.entry_points()
        if entry is None:
            if not eps:
                graphics = ", ".join(f"@{g[1]} {g[0]}" for g in module.graphics_entries)
                raise EmuError("the shader has no compute entry point" + (f" (only {graphics})" if graphics else ""),
                               hint="emu runs compute shaders: declare one, e.g. "
                                    "@compute @workgroup_size(64) fn main() { ... }")
            if len(eps) > 1:
                raise EmuError(f"the shader has {len(eps)} compute entry points ({', '.join(f.name for f in eps)})",
                               hint="choose one with --entry NAME")
            self.entry = eps[0]
        else:
            self.entry = module.function(entry)
            graphics = next((g for g in module.graphics_entries if g[0] == entry), None)
            if self.entry is None and graphics is not None:
                raise EmuError(f"'{entry}' is a @{graphics[1]} entry point: emu runs compute shaders only",
                               graphics[2], hint="pick a @compute entry point with --entry")
            if self.entry is None or self.entry.stage != "compute":
                names = ", ".join(f.name for f in eps) or "none"
                raise EmuError(f"no compute entry point named '{entry}' (the shader has: {names})",
                               hint="pass one of those names to --entry")
        _check_bindings(module, self.entry)
        self.used_globals = used_globals(module, self.entry)
        self.used_names = {g.name for g in self.used_globals}
        self.overrides = resolve_overrides(module, overrides)
        self.layout = make_layout(module, self.entry, self.overrides, opts.subgroup_size)
        self.nvals = module_value_count(module)
        self.grid = (1, 1, 1)
        self.base = (0, 0, 0)              # vkCmdDispatchBase's first workgroup (dispatch)
        self._geometry: dict = {}
        self.loop_costs: dict[int, int] = {}      # id(loop inst) -> steps per iteration
        self.clock = None

    def geometry(self, nwg: int) -> dict:
        """Per-lane positions for a batch of `nwg` workgroups (the same for every such batch)."""
        geo = self._geometry.get(nwg)
        if geo is None:
            sg = self.opts.subgroup_size
            wg_lanes = self.layout.padded_size(sg)
            wx, wy, wz = self.layout.wg_size
            lane = np.arange(nwg * wg_lanes)
            local = lane % wg_lanes
            lid = np.stack([local % wx, (local // wx) % wy, local // (wx * wy)], axis=1).astype(np.uint32)
            geo = self._geometry[nwg] = {
                "wg_of_lane": lane // wg_lanes,
                "live": local < self.layout.wg_count,
                "inputs": {
                    "local_invocation_index": local.astype(np.uint32),
                    "local_invocation_id": lid,
                    "subgroup_invocation_id": (local % sg).astype(np.uint32),
                    "subgroup_size": np.full(lane.size, sg, np.uint32),
                    "subgroup_id": (local // sg).astype(np.uint32),
                    # the subgroups a workgroup has: its invocations, rounded up to whole subgroups
                    "num_subgroups": np.full(lane.size, -(-self.layout.wg_count // sg), np.uint32),
                }}
        return geo

    def race_granule(self) -> int:
        """The race shadow's granule: the smallest scalar in workgroup memory or moved there by a
        cooperative matrix element (4, 2 with f16, 1 with 8-bit types), so that two invocations'
        neighbouring elements never share one."""
        if not hasattr(self, "_granule"):
            sizes = [_smallest_scalar(g.type) for g in self.module.globals if g.space == "workgroup"]
            sizes += [i.args[2].type.elem.size if i.op.startswith("coop_store") else i.type.elem.size
                      for f in self.module.functions for i in f.walk()
                      if i.op in ("coop_load", "coop_store", "coop_load_tensor", "coop_store_tensor")]
            self._granule = max(1, min([4] + sizes))
        return self._granule

    def check_limits(self, grid) -> None:
        """The device's limits (the profile's, with WebGPU's names), checked at each dispatch."""
        lim = self.profile.limits
        name = "max-compute-workgroups-per-dimension"
        for axis, n in zip("xyz", grid):
            if n > lim[name]:
                raise HostError(f"dispatch {tuple(grid)}: {n} workgroups along {axis} exceed the device "
                                f"limit {name} ({lim[name]})",
                                hint="split the work into several dispatches, or let each invocation "
                                     "do more of it")
        entry, size = self.entry, self.layout.wg_size
        for axis, n in zip("xyz", size):
            name = f"max-compute-workgroup-size-{axis}"
            if n > lim[name]:
                raise HostError(f"@workgroup_size{size} of '{entry.name}': {n} along {axis} exceeds the "
                                f"device limit {name} ({lim[name]})", entry.loc,
                                hint="make the workgroup smaller")
        name = "max-compute-invocations-per-workgroup"
        if self.layout.wg_count > lim[name]:
            raise HostError(f"@workgroup_size{size} of '{entry.name}' has {self.layout.wg_count} invocations; "
                            f"the device limit {name} is {lim[name]}", entry.loc,
                            hint="make the workgroup smaller")
        name = "max-compute-workgroup-storage-size"
        if not hasattr(self, "_wg_storage"):     # (walks the IR: once per pipeline, not per dispatch)
            self._wg_storage = workgroup_storage(self.module, entry)
        used = self._wg_storage
        if used > lim[name]:
            raise HostError(f"'{entry.name}' uses {used} bytes of var<workgroup> memory (each variable "
                            f"rounded up to 16 bytes); the device limit {name} is {lim[name]}",
                            entry.loc, hint="use smaller workgroup arrays")

    def dispatch(self, grid: tuple[int, int, int], buffers: dict, workgroups: tuple[int, int] | None = None,
                 base: tuple[int, int, int] = (0, 0, 0)) -> list:
        """Run every workgroup of `grid`; `buffers` maps (group, binding) to a Region. Returns the
        warnings of the run: each out-of-bounds site once (memory/bounds.py). `workgroups` =
        (first, end): only the workgroups of that range of flat indices (x fastest), as one
        shard of a dispatch split over processes (emu/cluster) runs them. `base`: Vulkan's
        vkCmdDispatchBase, added to each WorkgroupId (and so GlobalInvocationId; NumWorkgroups
        stays `grid`); a nonzero base runs on the interpreter (the compiled kernels number
        workgroups from 0), with the same bits."""
        self.check_limits(grid)
        from ..memory.bounds import BoundsLog
        self.bounds_log = BoundsLog()
        self.base = tuple(int(b) for b in base)
        try:
            self._run(grid, buffers, workgroups)
        finally:
            self.base = (0, 0, 0)
        return self.bounds_log.warnings()

    def _run(self, grid, buffers, workgroups=None):
        self.grid = tuple(grid)
        total = grid[0] * grid[1] * grid[2]
        lo, end = workgroups if workgroups is not None else (0, total)
        wg_lanes = self.layout.padded_size(self.opts.subgroup_size)
        per_batch = max(1, self.opts.batch_lanes // wg_lanes)
        # and no more private memory per batch than 256 MiB (big function arrays: smaller batches)
        per_batch = max(1, min(per_batch, (256 << 20) // max(1, self.layout.lane_bytes * wg_lanes)))
        if self.opts.race_check and self.layout.workgroup_bytes:
            # the race shadow takes 48 bytes per granule of workgroup memory (2 or 4 bytes; 1 where it
            # holds 8-bit types): at most ~200 MB a batch
            units = self.layout.workgroup_bytes // min(2, self.race_granule())
            per_batch = max(1, min(per_batch, (4 << 20) // max(1, units)))
        start = lo
        self.ran = {"interpreted": 0, "compiled": 0}     # workgroups each way (emu run says it)
        self.clock = Clock(self.opts, total, per_batch)
        # a pipeline fast path (emu/jit/fuse.py when plugged in) gives the same results; a kernel
        # that stops (an error to report) hands over from the batch where it stopped
        if not hasattr(self, "_jit"):
            self._jit = fastpaths.compile_pipeline(self)
        if self._jit is not None and not any(self.base):
            tier = self._jit.tier() if hasattr(self._jit, "tier") else None
            if tier is not None and not tier.hot():
                start = self._interpret_first(tier, buffers, lo, end, per_batch, wg_lanes)
            if start < end:
                stopped = self._jit.run(self.grid, buffers, (start, end))
                if stopped is None:
                    self.ran["compiled"] += end - start
                    return
                self.ran["compiled"] += (stopped - start) // per_batch * per_batch
                start += (stopped - start) // per_batch * per_batch
        self.ran["interpreted"] += end - start
        for first in range(start, end, per_batch):
            batch = Batch(self, first, min(per_batch, end - first), buffers)
            self.clock.tick(batch)
            batch.run(self.entry)

    def _interpret_first(self, tier, buffers, lo: int, end: int, per_batch: int, wg_lanes: int) -> int:
        """A kernel not compiled yet (a new shader's): interpret batches, the first small and each
        twice the last, while `tier` (emu/jit/tier.py) finds that cheaper than compiling; returns
        the first workgroup left for the compiled kernel (`end`: none). Interpreted workgroups
        write what they would in the interpreter's own batches (a kernel the fast paths take
        reads no buffer it writes), so the results are the same bits."""
        import time
        size = max(1, min(per_batch, tier.PROBE_LANES // wg_lanes))
        if getattr(self._jit, "whole_batches", False):
            # a kernel that may store to an element more than once per invocation: the rest it
            # runs must start where one of the interpreter's own batches would (lockstep order
            # within a batch differs from lane order only where two invocations store to one
            # element, which that kernel checks in its own part)
            size = per_batch
        first, spent = lo, 0.0
        try:
            while first < end:
                n = min(size, end - first)
                t0 = time.thread_time()
                batch = Batch(self, first, n, buffers)
                self.clock.tick(batch)
                batch.run(self.entry)
                last = time.thread_time() - t0
                spent += last
                first += n
                self.ran["interpreted"] += n
                if first < end and not tier.go_on(spent, last, n, first - lo, end - first):
                    break
                size = min(per_batch, 2 * size)
        finally:
            tier.ran(spent)
        return first


def workgroup_storage(module: Module, entry: Function) -> int:
    """Bytes of var<workgroup> the entry point (and what it calls) uses, as WebGPU counts them."""
    from ..isa.types import round_up
    seen, names, todo = set(), set(), [entry]
    while todo:
        fn = todo.pop()
        if fn is None or fn.name in seen:
            continue
        seen.add(fn.name)
        for inst in fn.walk():
            if inst.op == "global":
                names.add(inst.attrs["name"])
            elif inst.op == "call":
                todo.append(module.function(inst.attrs["callee"]))
    return sum(round_up(16, g.type.size) for g in module.globals
               if g.space == "workgroup" and g.name in names and not isinstance(g.type, CoopMatrixType))


def module_value_count(module: Module) -> int:
    n = 0
    for f in module.functions:
        for p in f.params:
            n = max(n, p.id + 1)
        for i in f.walk():
            if i.result is not None:
                n = max(n, i.result.id + 1)
    return n


def resolve_overrides(module: Module, given: dict) -> dict:
    from ..isa.constants import host_override_values
    out = {}
    known = {o.name: o for o in module.overrides}
    for key, value in (given or {}).items():
        values = host_override_values(module.overrides, key, value, "override '{}'")
        if not values:
            names = ", ".join(known) or "none"
            raise EmuError(f"the shader has no override named '{key}' (it has: {names})",
                           hint="check the name in --override NAME=VALUE")
        out.update(values)
    for o in module.overrides:
        if o.name not in out:
            if o.default is None:
                raise EmuError(f"override '{o.name}' has no default and was not set", o.loc,
                               hint=f"set it with --override {o.name}=VALUE")
            out[o.name] = o.default
    return out
