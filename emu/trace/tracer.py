"""The tracer: turns executed IR instructions into trace records (emu/docs/trace-schema.md).

The executor calls `tracer.event(batch, inst, mask, frame)` after every instruction (before, for
control-flow ops) when `Options.tracer` is set, and the cooperative load/store handlers report the
byte addresses they used through `tracer.access(...)`. The tracer only reads: it copies what it
formats and never writes to a value, a buffer or a mask, so a traced run computes the same bits.

    tr = Tracer("run.jsonl")                       # or format="perfetto", or sink=MemorySink()
    dev = emu.Device("nvidia-h200", tracer=tr)
    ... dev.dispatch(...) ...
    tr.end()

Cooperative ops give one record per (instruction, subgroup); memory ops, barriers and the rest
one per (instruction, workgroup).
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import sys
from collections import OrderedDict

import numpy as np

from ..errors import HostError
from ..isa.ops import OP, OPS
from ..isa.types import CoopMatrixType, ScalarType, VectorType
from . import fmt
from .schema import SCHEMA_VERSION
from .select import Selection, category

SKIP, SUBGROUP, WORKGROUP = 0, 1, 2
_MMA = (OP.coop_mma, OP.coop_mul)
_RECENT = 8           # matrices remembered per subgroup for operand references


def config_name(cfg) -> str:
    """'f16xf16->f32:16x16x16' (M x N x K); '->R' when the result type differs from C, ':sat'."""
    s = f"{cfg.a_type}x{cfg.b_type}->{cfg.c_type}"
    if cfg.result_type != cfg.c_type:
        s += f"->{cfg.result_type}"
    s += f":{cfg.m}x{cfg.n}x{cfg.k}"
    if cfg.saturating_accumulation:
        s += ":sat"
    return s


# ---------------------------------------------------------------------------------- fragments

class _Layout:
    """Per lane map, what every record's fragments share: each lane's (row, col) of its valid
    elements and, where a lane has padding, which of its slots hold an element."""

    def __init__(self, lm):
        self.lm = lm
        self.coords = [[(r, c) for (r, c), ok in zip(co, va) if ok]
                       for co, va in zip(lm.coords.tolist(), lm.valid.tolist())]
        self.keep = [None if all(va) else [i for i, ok in enumerate(va) if ok] for va in lm.valid.tolist()]
        self.json_heads = [[f'{{"row":{r},"col":{c},"bits":' for r, c in co] for co in self.coords]


class Fragments:
    """A record's "fragments" kept as arrays (the subgroup's elements, the byte offsets) until a
    sink needs the schema's lists: building a dict per element costs ~100x more than the
    instruction being traced. `tolist()` gives exactly the list the schema describes."""
    __slots__ = ("layout", "raw", "tname", "lanes", "offsets")

    def __init__(self, layout, raw, tname, lanes, offsets):
        self.layout, self.raw, self.tname, self.lanes, self.offsets = layout, raw, tname, lanes, offsets

    def tolist(self) -> list:
        lay = self.layout
        bits = fmt.bits_list(self.raw, self.tname)
        vals = fmt.value_list(self.raw, self.tname)
        offs = self.offsets.tolist() if self.offsets is not None else None
        out = []
        for l in self.lanes:
            keep = lay.keep[l]
            b, v = bits[l], vals[l]
            o = offs[l] if offs is not None else None
            if keep is not None:
                b, v = [b[i] for i in keep], [v[i] for i in keep]
                o = [o[i] for i in keep] if o is not None else None
            entry = {"lane": l, "elements": [{"row": r, "col": c, "bits": x, "value": y}
                                             for (r, c), x, y in zip(lay.coords[l], b, v)]}
            if o is not None:
                entry["offsets"] = [x if x >= 0 else None for x in o]
            out.append(entry)
        return out

    def json(self) -> str:
        """The text `dumps(self.tolist())` gives, written without building the lists (a JSONL
        trace file of a 256^3 GEMM has 3.3 million elements)."""
        lay = self.layout
        table = fmt.element_texts(self.tname, dumps)
        if table is not None:                   # 8/16-bit elements: bits and value looked up
            tails = np.ascontiguousarray(self.raw).view(fmt.BITS_OF[self.tname]).tolist()
            tails = [list(map(table.__getitem__, t)) for t in tails]
        else:
            bits = fmt.bits_list(self.raw, self.tname, '"', '","value":')
            vals = dumps(fmt.value_list(self.raw, self.tname)).split("],[")     # every lane's at once
            tails = [list(map(str.__add__, b, v.strip("[]").split(","))) for b, v in zip(bits, vals)]
        offs = self.offsets.tolist() if self.offsets is not None else None
        lanes = []
        for l in self.lanes:
            keep = lay.keep[l]
            t, o = tails[l], offs[l] if offs is not None else None
            if keep is not None:
                t = [t[i] for i in keep]
                o = [o[i] for i in keep] if o is not None else None
            lanes.append((l, t, o))
        if offs is not None:
            otexts = dumps([[x if x >= 0 else None for x in o] for _, _, o in lanes]).split("],[")
        out = []
        for i, (l, t, o) in enumerate(lanes):
            els = "},".join(map(str.__add__, lay.json_heads[l], t)) + "}" if t else ""
            text = f'{{"lane":{l},"elements":[{els}]'
            if o is not None:
                text += ',"offsets":[' + otexts[i].strip("[]") + "]"
            out.append(text + "}")
        return "[" + ",".join(out) + "]"


def dumps_record(rec: dict) -> str:
    """`dumps(expand(rec))`, with each Fragments written by its own json() (rec is not changed)."""
    texts = []

    def hole(f):
        texts.append(f.json())
        return f"\0{len(texts) - 1}"
    r = rec
    if type(rec.get("fragments")) is Fragments:
        r = dict(rec, fragments=hole(rec["fragments"]))
    ops = rec.get("operands")
    if ops and any(type(o.get("fragments")) is Fragments for o in ops.values()):
        r = dict(r, operands={k: dict(o, fragments=hole(o["fragments"])) if type(o.get("fragments")) is Fragments
                              else o for k, o in ops.items()})
    text = dumps(r)
    for i, t in enumerate(texts):
        text = text.replace(f'"\\u0000{i}"', t, 1)
    return text


def expand(rec: dict) -> dict:
    """`rec` with its Fragments (its own and its operands') replaced by plain lists, in place."""
    f = rec.get("fragments")
    if type(f) is Fragments:
        rec["fragments"] = f.tolist()
    for o in rec.get("operands", {}).values():
        f = o.get("fragments")
        if type(f) is Fragments:
            o["fragments"] = f.tolist()
    return rec


@contextlib.contextmanager
def _no_gc():
    """Millions of small dicts and lists, none in a cycle: without this the collector's passes over
    the growing heap cost more than building them (3.3 us against 0.2 us per element at 256^3)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# ---------------------------------------------------------------------------------- sinks

class MemorySink:
    """Keeps the records in a list (tests, golden files, `emu run --explain`). Fragments stay
    arrays until `records` is first read after they were written."""
    compact = True

    def __init__(self):
        self._records: list[dict] = []
        self._plain = 0                      # records before this index hold plain lists only

    def write(self, rec: dict):
        self._records.append(rec)

    @property
    def records(self) -> list[dict]:
        recs = self._records
        if self._plain < len(recs):
            with _no_gc():
                for i in range(self._plain, len(recs)):
                    expand(recs[i])
            self._plain = len(recs)
        return recs

    def close(self):
        pass


_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def dumps(rec) -> str:
    """json.dumps(rec, separators=(",", ":"), allow_nan=False), without building an encoder per call."""
    return _ENCODER.encode(rec)


class JsonlSink:
    compact = True

    def __init__(self, f):
        self.f = f

    def write(self, rec: dict):
        self.f.write(dumps_record(rec) + "\n")

    def close(self):
        self.f.close()


class PerfettoSink:
    """Chrome trace-event JSON (object form): a process per workgroup, a thread (track) per
    subgroup plus one for workgroup-wide records, an 'X' slice per record at the tracer's
    instruction clock (1 instruction = 1 us)."""

    compact = True                           # it keeps no fragments

    def __init__(self, f):
        self.f = f
        self.first = True
        self.named: set = set()
        self.header: dict = {}
        self.f.write('{"displayTimeUnit":"ns","traceEvents":[\n')

    def _emit(self, ev: dict):
        self.f.write(("" if self.first else ",\n") + dumps(ev))
        self.first = False

    def write(self, rec: dict):
        kind = rec.get("record")
        if kind == "header":
            self.header = rec
            return
        if kind == "summary":
            self.summary = rec
            return
        grid = self.header.get("dispatch", [1, 1, 1])
        x, y, z = rec["workgroup"]
        pid = 1 + x + grid[0] * (y + grid[1] * z)
        sub = rec.get("subgroup")
        tid = 0 if sub is None else sub + 1
        if pid not in self.named:
            self.named.add(pid)
            self._emit({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                        "args": {"name": f"workgroup ({x}, {y}, {z})"}})
            self._emit({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                        "args": {"sort_index": pid}})
        if (pid, tid) not in self.named:
            self.named.add((pid, tid))
            self._emit({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                        "args": {"name": "workgroup-wide" if sub is None else f"subgroup {sub}"}})
            self._emit({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid,
                        "args": {"sort_index": tid}})
        args = {k: v for k, v in rec.items()
                if k not in ("record", "fragments", "lanes", "operands", "op", "workgroup", "subgroup")}
        if "operands" in rec:
            args["operands"] = {k: ({"id": o["id"], "ref": o["ref"]} if "ref" in o else {"id": o["id"]})
                                for k, o in rec["operands"].items()}
        name = rec["op"] if rec.get("id") is None else f"{rec['op']} %{rec['id']}"
        self._emit({"name": name, "cat": category(rec["op"]), "ph": "X", "ts": rec["clock"], "dur": 1,
                    "pid": pid, "tid": tid, "args": args})

    def close(self):
        other = dict(self.header)
        other.pop("record", None)
        summary = getattr(self, "summary", None)
        if summary:
            other["events"] = summary.get("events")
        self.f.write('\n],"otherData":' + dumps(other) + "}\n")
        self.f.close()


def human(n: float) -> str:
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"


class Limited:
    """The trace file, stopping the run once `limit` bytes would be passed."""

    def __init__(self, f, limit: int, path):
        self.f, self.limit, self.path, self.n = f, limit, path, 0
        self.over = False

    def write(self, s: str):
        self.n += len(s)
        if self.n > self.limit:
            self.over = True
            raise HostError(f"the trace passed --trace-limit {human(self.limit)} while writing "
                            f"'{self.path}'; the run stopped and the partial trace was removed",
                            hint=NARROW)
        self.f.write(s)

    def close(self):
        self.f.close()


NARROW = ("trace less: --trace-ops coop,barrier (or OP names) instead of all, --trace-workgroups "
          "\"0,0,0\", --trace-subgroups 0, --trace-lanes 0-7; or raise the limit with --trace-limit "
          "SIZE (e.g. 5G; none for no limit)")


def open_sink(path, format: str = "jsonl"):
    try:
        f = open(path, "w", encoding="utf-8")
    except OSError as e:
        raise HostError(f"cannot write the trace to '{path}': {e.strerror}",
                        hint="check that the folder exists and is writable") from None
    if format == "jsonl":
        return JsonlSink(f)
    if format == "perfetto":
        return PerfettoSink(f)
    f.close()
    raise HostError(f"unknown trace format {format!r}", hint="use jsonl or perfetto")


def compiler_stack(profile, file) -> dict | None:
    """The header's `compiler`: the stack of compilers the shader went through to the profile's
    device (emu/isa/compiler.py's stack_for), None where nothing contracts."""
    from ..frontend import is_spirv_file
    from ..isa.compiler import stack_for
    st = stack_for(profile, is_spirv_file(file or ""))
    if st is None:
        return None
    return {"translator": st.translator, "driver": "nvidia" if st.nvidia else "generic",
            "fused_types": [str(t) for t in st.types], "divide_as_rcp": st.divide}


# ---------------------------------------------------------------------------------- tracer

class Tracer:
    def __init__(self, path=None, *, format: str = "jsonl", selection: Selection | None = None,
                 sink=None, explain: tuple[int, int] | None = None, limit: int | None = None):
        self.path, self.format = path, format
        self.limit = limit                     # bytes the file may take (emu/trace/budget.py)
        self.sel = selection or Selection()
        self.sink = sink
        self.explain_at = explain
        self.seq = 0
        self.clock = 0
        self.header: dict | None = None
        self.captured: dict | None = None      # the last multiply-add of workgroup 0, subgroup 0
        self.failed = False
        self._kinds: dict = {}
        self._batch = None
        self._access = None
        self._recent: dict = {}
        self._maps: dict = {}
        self._layouts: dict = {}
        self._ended = False

    # -- life cycle -----------------------------------------------------------------------------
    def begin(self, device, module, pipeline, grid, args=None):
        """Write the header (called by `emu run` before the dispatch)."""
        pipe = pipeline.pipeline
        self._open(pipe, tuple(int(g) for g in grid),
                   source=getattr(module, "source", None), file=getattr(module, "file", None))

    def _open(self, pipe, grid, source=None, file=None):
        if self.header is not None:
            return
        from ..version import __version__
        prof = pipe.profile
        self.header = {
            "record": "header", "schema": SCHEMA_VERSION, "emu_version": __version__,
            "profile": prof.name, "subgroup_size": pipe.opts.subgroup_size,
            "dispatch": list(grid), "workgroup_size": [int(x) for x in pipe.layout.wg_size],
            "entry": pipe.entry.name,
            "shader": {"file": file or pipe.module.file,
                       "sha256": hashlib.sha256(source.encode("utf-8")).hexdigest() if source is not None else None},
            "overrides": {k: fmt.json_value(v) for k, v in sorted(pipe.overrides.items())},
            "selection": self.sel.describe(),
            "scalar": prof.scalar,
            "compiler": compiler_stack(prof, file or pipe.module.file),
        }
        if self.sink is None and self.path is not None:
            self.sink = open_sink(self.path, self.format)
            if self.limit is not None:
                self.sink.f = Limited(self.sink.f, self.limit, self.path)
        if self.sink is not None:
            self.sink.write(self.header)

    def end(self):
        """Finish the trace file (called by `emu run` after the dispatch, even when it failed)."""
        if self._ended:
            return
        self._ended = True
        self.failed = sys.exc_info()[0] is not None
        f = getattr(self.sink, "f", None)
        if getattr(f, "over", False):          # past --trace-limit: no partial file left behind
            f.close()
            import os
            os.unlink(self.path)
            return
        if self.sink is not None:
            if self.header is not None:
                self.sink.write({"record": "summary", "events": self.seq, "instructions": self.clock,
                                 "complete": not self.failed})
            self.sink.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.end()

    @property
    def records(self) -> list[dict]:
        return getattr(self.sink, "records", [])

    def _emit(self, rec):
        """A record with Fragments in it: sinks that take them (ours) expand them when the trace
        is read or written; any other sink gets the plain lists."""
        self.sink.write(rec if getattr(self.sink, "compact", False) else expand(rec))

    # -- hooks from the executor ----------------------------------------------------------------
    def access(self, batch, inst, subgroups, addr):
        """Cooperative load/store: byte address of every fragment element, (S, lanes, E), for the
        executing subgroups `subgroups` (-1: not accessed)."""
        self._access = (inst, subgroups, addr)

    def event(self, batch, inst, mask, frame):
        self.clock += 1
        kind = self._kinds.get(inst)
        if kind is None:
            kind = self._kinds[inst] = self._classify(inst)
        if kind == SKIP:
            return
        if batch is not self._batch:
            self._new_batch(batch)
        if kind == SUBGROUP:
            self._subgroup_events(batch, inst, mask, frame)
            return
        if inst.op in (OP.load, OP.store, OP.atomic):
            ptr = frame.vals[inst.args[0].id]
            if not self._wants_access(inst.op, ptr):
                return
            if isinstance(ptr, _cell_type()):          # a cooperative-matrix variable
                self._subgroup_events(batch, inst, mask, frame)
                return
        self._workgroup_events(batch, inst, mask, frame)

    def _wants_access(self, op, ptr) -> bool:
        """'memory' means buffers and workgroup memory; function and private variables (matrix
        variables too) only with 'all' or when the op is named."""
        if self.sel.explicit(op) or self.sel.everything:
            return True
        return getattr(getattr(ptr, "region", None), "space", None) in ("storage", "uniform", "workgroup")

    # -- classification -----------------------------------------------------------------------
    def _classify(self, inst) -> int:
        emit = self.sink is not None or self.path is not None
        wanted = emit and self.sel.wants_op(inst.op)
        if self.explain_at is not None and inst.op in _MMA:
            return SUBGROUP
        if not wanted:
            return SKIP
        return SUBGROUP if OPS[inst.op].cooperative else WORKGROUP

    def _new_batch(self, batch):
        if self.header is None:
            self._open(batch.pipe, batch.pipe.grid)
        self._batch = batch
        sg = batch.opts.subgroup_size
        gx, gy, _ = batch.pipe.grid
        wids = []
        for w in range(batch.nwg):
            lin = batch.first_wg + w
            wids.append((lin % gx, (lin // gx) % gy, lin // (gx * gy)))
        self._wids = wids
        self._wg_sel = np.array([self.sel.wants_workgroup(w) for w in wids], np.bool_)
        self._nsg = batch.wg_lanes // sg
        self._sg_sel = self.sel.subgroup_mask(self._nsg)
        self._lanes = self.sel.lane_list(sg)
        lane_ok = np.zeros(sg, np.bool_)
        lane_ok[self._lanes] = True
        self._wg_lane_sel = (np.repeat(self._sg_sel, sg) & np.tile(lane_ok, self._nsg))

    # -- records ------------------------------------------------------------------------------
    def _base(self, inst, w, scope):
        self.seq += 1
        x, y, z = self._wids[w]
        rec = {"record": "event", "seq": self.seq - 1, "clock": self.clock, "op": inst.op,
               "id": inst.result.id if inst.result is not None else None,
               "loc": str(inst.loc) if inst.loc is not None else None,
               "scope": scope, "workgroup": [x, y, z]}
        return rec

    def _lane_map(self, batch, t: CoopMatrixType):
        key = (id(batch.pipe.profile), t, batch.opts.subgroup_size)
        lm = self._maps.get(key)
        if lm is None:
            from ..scheduler.coop import lane_map
            lm = self._maps[key] = lane_map(batch, t)
        return lm

    def _matrix(self, lm, t: CoopMatrixType) -> dict:
        return {"role": t.role, "rows": t.rows, "cols": t.cols, "type": t.elem.name, "map": lm.name}

    def _fragments(self, lm, frag, tname, lanes, offsets=None) -> "Fragments":
        return Fragments(self._layout(lm), np.array(frag), tname, lanes,
                         None if offsets is None else np.array(offsets))

    def _layout(self, lm) -> "_Layout":
        lay = self._layouts.get(id(lm))
        if lay is None or lay.lm is not lm:
            lay = self._layouts[id(lm)] = _Layout(lm)
        return lay

    def _subgroup_events(self, batch, inst, mask, frame):
        sg = batch.opts.subgroup_size
        nsg = self._nsg
        m = mask.reshape(batch.nwg, nsg, sg)
        ran = m.any(axis=2)
        emit = self.sink is not None and (self.sel.wants_op(inst.op) or inst.op not in _MMA)
        on = ran & self._wg_sel[:, None] & self._sg_sel[None, :] if emit else np.zeros_like(ran)
        capture = (self.explain_at is not None and inst.op in _MMA and batch.first_wg == 0
                   and bool(ran[0, 0]))
        if not on.any() and not capture:
            return
        op = inst.op
        vals = frame.vals
        if op in (OP.coop_store, OP.store):
            vi = 2 if op == OP.coop_store else 1
            t, value = inst.args[vi].type, vals[inst.args[vi].id]
        else:
            t, value = inst.type, vals[inst.result.id]
        access = None
        if op in (OP.coop_load, OP.coop_store) and self._access is not None and self._access[0] is inst:
            access = self._access
        self._access = None
        first_seq = None
        for w, s in zip(*np.nonzero(on)):
            w, s = int(w), int(s)
            if w == 0 and s == 0 and batch.first_wg == 0:
                first_seq = self.seq
            base = w * batch.wg_lanes + s * sg
            rec = self._base(inst, w, "subgroup")
            rec["subgroup"] = s
            rec["mask"] = fmt.mask_hex(m[w, s])
            if op == OP.coop_length:
                rec["value"] = int(np.asarray(value)[base])
                self._emit(rec)
                continue
            lm = self._lane_map(batch, t)
            frag = value[base:base + sg]
            offsets = None
            if access is not None:
                _, subgroups, addr = access
                j = int(np.searchsorted(subgroups, base // sg))
                if j < len(subgroups) and subgroups[j] == base // sg:
                    offsets = addr[j]
            rec["matrix"] = self._matrix(lm, t)
            rec["fragments"] = self._fragments(lm, frag, t.elem.name, self._lanes, offsets)
            if op in (OP.coop_load, OP.coop_store):
                self._memory_info(rec, inst, vals, base, batch)
            elif op in _MMA:
                self._mma_info(rec, batch, inst, vals, base, (w, s), inline=False)
            elif op in (OP.coop_scalar, OP.coop_convert) and inst.attrs:
                rec["attrs"] = {k: fmt.json_value(v) for k, v in inst.attrs.items()}
            self._emit(rec)
            self._remember((w, s), t, frag, rec["seq"])
        if capture:
            self._capture(batch, inst, vals, mask, first_seq)

    def _memory_info(self, rec, inst, vals, base, batch):
        ptr = vals[inst.args[0].id]
        reg = ptr.region
        rec["buffer"] = {"name": reg.name, "space": reg.space,
                         "group": reg.binding[0] if reg.binding else None,
                         "binding": reg.binding[1] if reg.binding else None}
        rec["layout"] = inst.attrs.get("layout")
        off = vals[inst.args[1].id]
        st = vals[inst.args[3 if inst.op == OP.coop_store else 2].id]
        rec["offset"] = int(np.asarray(off).reshape(-1)[base]) if np.ndim(off) else int(off)
        rec["stride"] = int(np.asarray(st).reshape(-1)[base]) if np.ndim(st) else int(st)
        rec["size"] = (inst.args[2].type if inst.op == OP.coop_store else inst.type).elem.size

    def _remember(self, ws, t, frag, seq):
        if not self.sel.all_lanes:
            return
        d = self._recent.setdefault(ws, OrderedDict())
        k = (t, np.ascontiguousarray(frag).tobytes())
        d[k] = seq
        d.move_to_end(k)
        while len(d) > _RECENT:
            d.popitem(last=False)

    def _operand(self, batch, x, vals, base, ws, inline):
        sg = batch.opts.subgroup_size
        t = x.type
        frag = vals[x.id][base:base + sg]
        lm = self._lane_map(batch, t)
        out = {"id": x.id, "matrix": self._matrix(lm, t)}
        if not inline and self.sel.all_lanes:
            ref = self._recent.get(ws, {}).get((t, np.ascontiguousarray(frag).tobytes()))
            if ref is not None:
                out["ref"] = ref
                return out
        lanes = list(range(sg)) if inline else self._lanes
        out["fragments"] = self._fragments(lm, frag, t.elem.name, lanes)
        return out

    def _mma_info(self, rec, batch, inst, vals, base, ws, inline):
        prof = batch.pipe.profile
        ta = inst.args[0].type
        tc = inst.args[2].type if inst.op == OP.coop_mma else inst.type
        cfg = prof.find_config(ta.rows, tc.cols, ta.cols, ta.elem.name, tc.elem.name)
        rec["config"] = config_name(cfg) if cfg is not None else None
        rec["model"] = prof.model_for(cfg) if cfg is not None else None
        rec["saturate"] = bool(inst.attrs.get("saturate"))
        ops = {"A": self._operand(batch, inst.args[0], vals, base, ws, inline),
               "B": self._operand(batch, inst.args[1], vals, base, ws, inline)}
        if inst.op == OP.coop_mma:
            ops["C"] = self._operand(batch, inst.args[2], vals, base, ws, inline)
        rec["operands"] = ops

    def _capture(self, batch, inst, vals, mask, seq):
        """Keep the multiply-add of workgroup 0, subgroup 0 with every operand inline (explain)."""
        sg = batch.opts.subgroup_size
        t = inst.type
        lm = self._lane_map(batch, t)
        rec = {"record": "event", "seq": seq,
               "clock": self.clock, "op": inst.op, "id": inst.result.id,
               "loc": str(inst.loc) if inst.loc is not None else None, "scope": "subgroup",
               "workgroup": [0, 0, 0], "subgroup": 0, "mask": fmt.mask_hex(mask[:sg]),
               "matrix": self._matrix(lm, t),
               "fragments": self._fragments(lm, vals[inst.result.id][:sg], t.elem.name, range(sg))}
        self._mma_info(rec, batch, inst, vals, 0, (0, 0), inline=True)
        self.captured = expand(rec)

    def _workgroup_events(self, batch, inst, mask, frame):
        if self.sink is None:
            return
        wl = batch.wg_lanes
        m = mask.reshape(batch.nwg, wl)
        sel = m & self._wg_lane_sel[None, :]
        on = sel.any(axis=1) & self._wg_sel
        if not on.any():
            return
        op = inst.op
        vals = frame.vals
        ptr = vals[inst.args[0].id] if op in (OP.load, OP.store, OP.atomic) else None
        value, vtype = None, None
        if op == OP.store:
            value, vtype = vals[inst.args[1].id], inst.args[1].type
        elif inst.result is not None and not (inst.blocks or OPS[op].terminator):
            value, vtype = vals[inst.result.id], inst.type
        scalar = isinstance(vtype, (ScalarType, VectorType)) and isinstance(value, np.ndarray)
        if scalar:
            tname = vtype.name if isinstance(vtype, ScalarType) else vtype.elem.name
        # the compiler model's decision that formed this instruction (emu/isa/compiler.py): its
        # operands' values go with it, so that `emu explain` can redo the rounding from the trace
        decision = inst.attrs.get("contracted") if scalar else None
        operands = [(vals[a.id], _elem_name(a.type)) for a in inst.args] if decision is not None else ()
        offs = None
        if ptr is not None:
            offs = np.broadcast_to(np.asarray(ptr.offset, np.int64), (batch.lanes,))
        for w in np.flatnonzero(on).tolist():
            rec = self._base(inst, w, "workgroup")
            rec["mask"] = fmt.mask_hex(m[w])
            if op == OP.barrier:
                rec["kind"] = inst.attrs.get("kind")
            if ptr is not None:
                reg = ptr.region
                rec["buffer"] = {"name": reg.name, "space": reg.space,
                                 "group": reg.binding[0] if reg.binding else None,
                                 "binding": reg.binding[1] if reg.binding else None}
                rec["size"] = int(getattr(ptr.type, "size", 0) or 0)
            if vtype is not None:
                rec["type"] = str(vtype)
            if scalar and "fn" in inst.attrs:
                rec["attrs"] = {"fn": inst.attrs["fn"]}
            if decision is not None:
                rec["decision"] = decision
                rec["args"] = [a.id for a in inst.args]
            if ptr is not None or scalar:
                lanes = np.flatnonzero(sel[w]).tolist()
                g = [w * wl + l for l in lanes]
                entries = [{"lane": l} for l in lanes]
                if ptr is not None:
                    for e, o in zip(entries, offs[g].tolist()):
                        e["offsets"] = [o]
                if scalar:
                    vs = fmt.value_list(np.asarray(value)[g], tname)
                    for e, v in zip(entries, vs):
                        e["value"] = v
                if operands:
                    per_arg = [fmt.value_list(np.broadcast_to(v, (batch.lanes,) + np.shape(v)[1:])[g], t)
                               for v, t in operands]
                    for e, *vs in zip(entries, *per_arg):
                        e["args"] = vs
                rec["lanes"] = entries
            self.sink.write(rec)


def _elem_name(t) -> str:
    return t.name if isinstance(t, ScalarType) else t.elem.name


def _cell_type():
    from ..memory.memory import Cell
    return Cell
