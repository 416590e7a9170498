"""A dispatch split into ranges of workgroups, run on a cluster's workers, merged exactly.

Workgroups of one dispatch share nothing but storage memory, so a range of them runs on any
process that holds the same pipeline and the same initial buffers; each worker runs its range
through the normal dispatch (Pipeline.dispatch(..., workgroups=(first, end)): the same profile,
options and fast paths). What the ranges wrote is merged:

- bytes that one range changed are taken from it;
- a binding written only by commutative atomics (atomicAdd/Sub, Min, Max, And, Or, Xor, one kind
  per binding, results unused) is combined element by element: the sum of every range's change,
  the min or max of their finals, the and/or of their finals, the xor of their changes; exactly
  what one process computes, in any order;
- bytes that two ranges both changed are a data race between workgroups: reported (a warning
  naming the binding and byte) and the dispatch run again in one process, so the result is still
  the one-process run's.

What cannot be merged soundly runs in one process with a note saying why (plan()): an atomic whose
returned value is used (it depends on the order of workgroups), atomicExchange and
atomicCompareExchangeWeak, atomicLoad of storage, storage both read and written by the entry point
(a workgroup could read what another wrote), atomics and plain stores (or two atomic kinds) on one
binding, one buffer bound twice, a tracer attached (it observes one process).

A write that leaves a byte as it was cannot be seen by the merge; it needs no merging unless
another range changes that byte too, which is the race WGSL leaves undefined.
"""
from __future__ import annotations

import hashlib
import pickle
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import EmuError, HostError

COMMUTATIVE = {"add": "add", "sub": "add", "min": "min", "max": "max", "and": "and", "or": "or", "xor": "xor",
               "store_max": "max", "store_min": "min"}       # the last two: atomic<vec2<u32>>, as a u64


@dataclass
class Plan:
    """How a pipeline's dispatch may be split: `reason` (and `loc`) when it may not; else for
    each storage binding the entry point writes, ("plain",) or ("atomic", kind, dtype name)."""
    writes: dict = field(default_factory=dict)
    reason: str | None = None
    loc: object = None


def plan(pipe) -> Plan:
    """Which storage bindings the entry point (and what it calls) reads and writes, and how."""
    module = pipe.module
    fns, todo = {}, [pipe.entry]
    while todo:                                   # the functions the entry point reaches
        fn = todo.pop()
        if fn is None or fn.name in fns:
            continue
        fns[fn.name] = fn
        todo += [module.function(i.attrs["callee"]) for i in fn.walk() if i.op == "call"]
    storage = {g.name: g for g in module.globals if g.space == "storage"}
    roots: dict[int, set] = {}                    # value id -> the storage variables it may point into
    changed = True
    while changed:                                # pointers flow through access chains and calls
        changed = False
        for fn in fns.values():
            for i in fn.walk():
                if i.result is None and i.op != "call":
                    continue
                if i.op == "global" and i.attrs["name"] in storage:
                    new = {(i.result.id, i.attrs["name"])}
                elif i.op == "access":
                    new = {(i.result.id, r) for r in roots.get(i.args[0].id, ())}
                elif i.op == "call":
                    callee = fns.get(i.attrs["callee"])
                    new = {(p.id, r) for p, a in zip(callee.params if callee else (), i.args)
                           for r in roots.get(a.id, ())}
                else:
                    continue
                for vid, r in new:
                    if r not in roots.setdefault(vid, set()):
                        roots[vid].add(r)
                        changed = True
    used = {a.id for fn in fns.values() for i in fn.walk() for a in i.args}
    reads, writes, out = {}, {}, Plan()

    def refuse(reason, inst):
        if out.reason is None:
            out.reason, out.loc = reason, inst.loc

    for fn in fns.values():
        for i in fn.walk():
            targets = roots.get(i.args[0].id, set()) if i.args else set()
            if i.op == "texture":
                refuse("the entry point uses textures, which the cluster does not split yet", i)
            if i.op in ("load", "coop_load"):
                for r in targets:
                    reads.setdefault(r, i)
            elif i.op in ("store", "coop_store"):
                for r in targets:
                    writes.setdefault(r, {}).setdefault("plain", i)
            elif i.op == "atomic" and targets:
                fn_ = i.attrs["fn"]
                if fn_ == "load":
                    for r in targets:
                        reads.setdefault(r, i)
                elif fn_ == "store":
                    for r in targets:
                        writes.setdefault(r, {}).setdefault("plain", i)
                elif fn_ in COMMUTATIVE:
                    if i.result is not None and i.result.id in used:
                        refuse(f"the value atomic{fn_.capitalize()} returns is used, and it depends on "
                               f"the order in which workgroups run", i)
                    for r in targets:
                        writes.setdefault(r, {}).setdefault(("atomic", COMMUTATIVE[fn_], _atomic_dtype(i)), i)
                else:
                    name = "atomicCompareExchangeWeak" if fn_ == "compare_exchange_weak" else "atomicExchange"
                    refuse(f"{name} on storage memory depends on the order in which workgroups run", i)
            elif i.op not in ("access", "array_length", "call", "global"):
                for a in i.args:
                    if roots.get(a.id):
                        refuse(f"a pointer to storage memory is used by '{i.op}', which the merge does "
                               f"not know", i)
    for name, kinds in writes.items():
        g = storage[name]
        if name in reads:
            refuse(f"'{name}' (@group({g.group}) @binding({g.binding})) is both read and written: a "
                   f"workgroup could read what another one wrote", reads[name])
        elif len(kinds) > 1:
            refuse(f"'{name}' (@group({g.group}) @binding({g.binding})) is written "
                   f"{'by atomics and by plain stores' if 'plain' in kinds else 'by atomics of two kinds'}: "
                   f"the merge cannot tell which bytes each one wrote", next(iter(kinds.values())))
        else:
            out.writes[(g.group, g.binding)] = ("plain",) if "plain" in kinds else next(iter(kinds))
    return out


def _atomic_dtype(inst) -> str:
    # the word the atomic works on: i32/u32, naga's i64/u64, or u64 for atomic<vec2<u32>>
    if inst.attrs["fn"] in ("store_max", "store_min"):
        return "u64"
    t = inst.type
    return t.name if getattr(t, "name", None) in ("i32", "u32", "i64", "u64") else "u32"


# -- on a worker ----------------------------------------------------------------------------------

_PIPELINES: dict = {}          # spec key -> (device, pipeline), kept while the worker lives


def pipeline_spec(device, pipeline) -> dict:
    """What a worker needs to make the same pipeline on the same device."""
    o = device.options
    return {"profile": profile_ref(device.profile), "subgroup_size": o.subgroup_size, "bounds": o.bounds,
            "max_steps": o.max_steps, "timeout": o.timeout, "race_check": o.race_check,
            "source": pipeline.module.source, "file": pipeline.module.file,
            "entry": pipeline.pipeline.entry.name, "constants": dict(pipeline.pipeline.overrides)}


def profile_ref(profile) -> str | None:
    """How a worker loads the same profile: a shipped one's name, else its JSON file's path."""
    from ..profiles import list_profiles, load_profile
    if profile.name in list_profiles() and load_profile(profile.name) is profile:
        return profile.name
    import os
    src = getattr(profile, "source", None)
    return os.path.abspath(src) if src and os.path.isfile(src) else None


def spec_key(spec: dict) -> str:
    return hashlib.sha256(pickle.dumps(spec)).hexdigest()[:20]


def _worker_pipeline(spec: dict, key: str):
    got = _PIPELINES.get(key)
    if got is None:
        from ..api import Device
        dev = Device(spec["profile"], spec["subgroup_size"], bounds=spec["bounds"], max_steps=spec["max_steps"],
                     timeout=spec["timeout"], race_check=spec["race_check"], jobs=1, hints="cli")
        mod = dev.create_shader_module(spec["source"], spec["file"])
        got = _PIPELINES[key] = (dev, dev.create_compute_pipeline(mod, spec["entry"], spec["constants"]))
    return got


def run_shard(spec: dict, key: str, grid, first: int, end: int, inputs: dict, modes: dict) -> dict:
    """Run workgroups first..end-1 of `grid` from the initial buffers `inputs` ({binding: bytes});
    return what the range wrote: for a plain binding the runs of bytes it changed, for an atomic
    one its final contents; the out-of-bounds sites it met; or the error that stopped it."""
    from .. import jit
    from ..api import Buffer, bind
    dev, pipe = _worker_pipeline(spec, key)
    bufs = {k: Buffer(len(v), np.asarray(v)) for k, v in inputs.items()}
    t0 = time.perf_counter()
    try:
        regions = bind(pipe.pipeline.module, pipe.pipeline.entry, bufs)
        with jit.notice.for_profile(dev.profile.name):
            pipe.pipeline.dispatch(tuple(grid), regions, (first, end))
    except EmuError as e:
        return {"error": e, "seconds": time.perf_counter() - t0}
    out = {}
    for k, mode in modes.items():
        final, init = bufs[k].data[: bufs[k].size], np.asarray(inputs[k])
        if mode[0] == "atomic":
            out[k] = final.copy()
            continue
        out[k] = changed_runs(final, init)
    sites = list(pipe.pipeline.bounds_log.sites.values())
    return {"written": out, "sites": sites, "seconds": time.perf_counter() - t0}


def changed_runs(final: np.ndarray, init: np.ndarray):
    """(starts, ends, bytes) of the runs of bytes that differ between `final` and `init`."""
    changed = final != init
    if changed.size % 2 == 0:
        # whole 2-byte units (f16, the smallest element a shader stores): an unchanged byte inside
        # a written value (a float's zero low byte) then splits no run, and the runs stay few
        changed = np.repeat(changed.reshape(-1, 2).any(axis=1), 2)
    edges = np.flatnonzero(np.diff(np.concatenate(([False], changed, [False])).astype(np.int8)))
    return edges[0::2], edges[1::2], final[changed]


# -- on the client --------------------------------------------------------------------------------

def ranges(total: int, shards: int) -> list[tuple[int, int]]:
    shards = max(1, min(total, shards))
    return [(total * s // shards, total * (s + 1) // shards) for s in range(shards)]


def dispatch(cluster, device, pipeline, bindings: dict, groups, *, shards=None) -> list:
    """Notes first (why it ran in one process, a race), then the run's warnings."""
    notes = []
    return notes + _dispatch(cluster, device, pipeline, bindings, groups, shards, notes)


def _dispatch(cluster, device, pipeline, bindings, groups, shards, notes) -> list:
    from ..api import as_buffers, bind, dispatch_args
    pipe, groups, sources = dispatch_args(pipeline, groups)
    total = groups[0] * groups[1] * groups[2]
    stats = cluster.last = {"shards": 0, "workgroups": total}

    def one_process(reason, loc=None):
        notes.append(EmuError(f"ran in one process, not split over the cluster: {reason}", loc, severity="note"))
        notes[-1].sources = sources
        return device.dispatch(pipeline, bindings, groups)

    with device._errors(sources):
        buffers, arrays = as_buffers(pipe.module, bindings)
        if total == 0:
            return []
        pipe.check_limits(groups)
        p = plan(pipe)
        if p.reason is not None:
            return one_process(p.reason, p.loc)
        if device.options.tracer is not None:
            return one_process("a tracer observes the dispatch, and it watches one process")
        written = [buffers[k] for k in p.writes if k in buffers]
        if any(b is o for b in written for k, o in buffers.items() if k not in p.writes) or \
                len({id(b) for b in written}) < len(written):
            return one_process("one buffer is bound to two bindings, one of them written")
        if profile_ref(device.profile) is None:
            return one_process(f"profile '{device.profile.name}' was made in Python, and the workers "
                               f"load a profile by name or from its file")
        if total < 2:
            return one_process("the dispatch has one workgroup")
        bind(pipe.module, pipe.entry, buffers)       # the sizes checked (and rows padded) as for one process
        names = {(g.group, g.binding): g for g in pipe.module.globals if g.group is not None}
        used = {(g.group, g.binding) for g in _used(pipe)}
        inputs = {k: b.data[: b.size] for k, b in buffers.items() if k in used}
        spec = pipeline_spec(device, pipeline)
        key = spec_key(spec)
        parts = ranges(total, shards or cluster.threads())
        stats["shards"] = len(parts)
        t0 = time.perf_counter()
        results = _run(cluster, spec, key, groups, parts, inputs, p.writes)
        t1 = time.perf_counter()
        err = next((r["error"] for r in results if "error" in r), None)
        if err is not None:
            raise err
        merged, race = _merge(results, parts, inputs, p.writes, names, groups)
        t2 = time.perf_counter()
        stats.update(run_s=t1 - t0, merge_s=t2 - t1, worker_s=[r["seconds"] for r in results])
        if race is not None:
            race.sources = sources
            notes.append(race)
            return device.dispatch(pipeline, bindings, groups)
        for k, out in merged.items():
            buffers[k].data[: buffers[k].size] = out
        for key_, arr in arrays.items():
            arr.reshape(-1).view(np.uint8)[:] = buffers[key_].data[: arr.nbytes]
        from ..memory.bounds import BoundsLog
        log = BoundsLog()
        for r in results:                          # in workgroup order: the first range's place first
            for s in r["sites"]:
                k = (s.loc, s.what, s.kind)
                if k in log.sites:
                    log.sites[k].count += s.count
                else:
                    log.sites[k] = s
        warned = log.warnings()
        for w in warned:
            w.sources = sources
        return warned


def _used(pipe):
    from ..isa.ir import used_globals
    return [g for g in used_globals(pipe.module, pipe.entry) if g.space in ("storage", "uniform")]


def _run(cluster, spec, key, grid, parts, inputs, modes) -> list:
    """Submit one task per range and wait for all; a worker that dies has its tasks run again
    elsewhere (Dask does); the scheduler going away is one message."""
    client = cluster.client
    try:
        # a list, not the dict: scatter names a dict's data by its keys, and (0, 1) is every dispatch's
        keys = list(inputs)
        shared = dict(zip(keys, client.scatter([inputs[k] for k in keys], broadcast=True, hash=False)))
        futures = [client.submit(run_shard, spec, key, tuple(grid), a, z, shared, modes, pure=False,
                                 key=f"emu-shard-{key}-{a}-{z}-{time.monotonic_ns()}")
                   for a, z in parts]
        return client.gather(futures)
    except Exception as e:
        from .engine import gone
        if type(e).__name__ == "KilledWorker":
            raise HostError(f"workers of the cluster ({cluster.spec}) died running one range of workgroups, "
                            f"again and again ({e})", hint="give the workers more memory, use more --shards, "
                                                          "or run without --cluster") from None
        if not gone(e):
            raise
        raise HostError(f"the cluster's scheduler ({cluster.spec}) went away during the dispatch "
                        f"({type(e).__name__})", hint="start it again, or run without --cluster") from None


def _merge(results, parts, inputs, modes, names, grid):
    """({binding: merged bytes}, None), or (None, a warning) where two ranges wrote one byte."""
    merged = {}
    for k, mode in modes.items():
        if k not in inputs:
            continue
        init = np.asarray(inputs[k])
        if mode[0] == "atomic":
            merged[k] = _combine(mode[1], mode[2], init, [r["written"][k] for r in results])
            continue
        runs = [r["written"][k] for r in results]
        clash = _overlap(runs)
        if clash is not None:
            at, first, second = clash
            g = names[k]
            return None, EmuError(
                f"data race between workgroups: workgroups {_wg(parts[first][0], grid)}..{_wg(parts[first][1] - 1, grid)} "
                f"and {_wg(parts[second][0], grid)}..{_wg(parts[second][1] - 1, grid)} both wrote byte {at} of "
                f"'{g.name}' (@group({g.group}) @binding({g.binding})) without atomics; the dispatch ran again in "
                f"one process, whose result is one order of many the device may choose",
                g.loc, severity="warning",
                hint="let one workgroup write each element, or use atomics for shared counters")
        out = init.copy()
        for starts, ends, data in runs:
            if starts.size <= 4096:             # few runs (contiguous tiles): copy slice by slice
                at = 0
                for a, z in zip(starts.tolist(), ends.tolist()):
                    out[a:z] = data[at:at + z - a]
                    at += z - a
            else:                               # many: a mask of the run's bytes
                delta = np.zeros(init.size + 1, np.int8)
                delta[starts] = 1               # runs are maximal: no start is another run's end
                delta[ends] = -1
                out[np.cumsum(delta[:-1], dtype=np.int8).astype(bool)] = data
        merged[k] = out
    return merged, None


def _overlap(runs: list):
    """(byte, first range, second range) where runs of two ranges overlap, else None; each range's
    runs are sorted and disjoint, so only runs of different ranges can meet."""
    if sum(r[0].size for r in runs) == 0:
        return None
    starts = np.concatenate([r[0] for r in runs])
    ends = np.concatenate([r[1] for r in runs])
    who = np.concatenate([np.full(r[0].size, i) for i, r in enumerate(runs)])
    order = np.argsort(starts, kind="stable")
    starts, ends, who = starts[order], ends[order], who[order]
    reach = np.maximum.accumulate(ends)
    hit = np.flatnonzero(reach[:-1] > starts[1:])
    if not hit.size:
        return None
    i = int(hit[0]) + 1
    at = int(starts[i])
    j = int(np.flatnonzero(ends[:i] > at)[0])        # the earlier run that covers it
    first, second = sorted((int(who[j]), int(who[i])))
    return at, first, second


def _combine(kind: str, dtype: str, init: np.ndarray, finals: list) -> np.ndarray:
    """Commutative atomics' effects, combined as one process would have (in words of `dtype`:
    i32, u32, i64 or u64)."""
    dt = np.dtype({"i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64}[dtype])
    u = np.dtype(f"u{dt.itemsize}")
    n = init.size // dt.itemsize * dt.itemsize
    i = init[:n].view(dt)
    fs = [f[:n].view(dt) for f in finals]
    if kind == "add":
        acc = i.view(u).copy()
        for f in fs:
            acc += f.view(u) - i.view(u)      # wraps as the device's integers do
        res = acc.view(dt)
    elif kind in ("min", "max"):
        res = (np.minimum if kind == "min" else np.maximum).reduce(np.stack(fs), axis=0)
    elif kind == "and":
        res = np.bitwise_and.reduce(np.stack(fs), axis=0)
    elif kind == "or":
        res = np.bitwise_or.reduce(np.stack(fs), axis=0)
    else:
        acc = i.copy()
        for f in fs:
            acc ^= f ^ i
        res = acc
    out = init.copy()
    out[:n] = res.view(np.uint8)
    return out


def _wg(flat: int, grid) -> str:
    gx, gy, _ = grid
    return f"({flat % gx}, {flat // gx % gy}, {flat // (gx * gy)})"
