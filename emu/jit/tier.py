"""Which tier runs a dispatch whose compiled kernel is not built yet: the interpreter (the reference
executor, which starts at once) or the compiler (seconds of numba before the first workgroup, then
tens to hundreds of times faster). A new or edited shader's kernel is such a kernel.

The executor interprets a first small batch of workgroups and measures it (CPU time of its
thread, so that other work on the machine does not count); from then on, before each batch, it
asks `go_on`: keep interpreting while this kernel's interpreted time so far (in this process and
in earlier ones, kept in the cache folder) plus the projected time of the rest of the dispatch
stays below the cost of compiling it. Past that point the kernel is compiled and runs the rest.
This is the rent-or-buy rule: a kernel is never interpreted for more than its compile time before
it is compiled, so a dispatch costs at most about twice what the better choice would have cost,
while a small dispatch of a new shader answers in milliseconds instead of seconds.

The compile cost is learned: each compile of a kernel kind ('fusion' or 'cooperative') records its
CPU seconds, and its seconds per line of generated source, in the cache folder; a kernel's estimate
is the median of the last few per-line costs times its lines (numba's time grows with the source: a
shader of llama.cpp's unrolled into 13,000 lines takes minutes, a 60-line one half a second), or
before any, the median of the last few compiles (DEFAULT_S before any) scaled up past LARGE_LINES. A kernel already in the cache (machine code or numba's cache) is not pending: it loads in
~0.02-0.3 s and runs compiled as before.

A kernel's rent is a small file in the cache folder, tier/HASH.rent. It is removed when the kernel
is compiled (from then on it loads from the cache and pays no rent), and at most KEEP_RENTS are
kept: writing a new one removes the least recently written beyond that (kernels interpreted once
and never again, such as every edit of a shader), and leftover temporary files of processes that
died while writing. A kernel whose rent was dropped starts again from zero, which at worst
interprets it once more for up to its compile time.

A kernel with a function longer than MAX_FUNCTION_LINES (EMU_JIT_MAX_LINES) lines is never
compiled here: numba's time grows faster than the lines of one function (its analyses iterate
over every block and variable: minutes, and gigabytes, for ten thousand lines), past what any
dispatch would pay back, and a process killed for its memory is worse than a slow one. Such a
kernel runs interpreted, said once per process on stderr.

Memory can veto a compile: numba (LLVM) needs memory in proportion to the function it compiles,
about COMPILE_BYTES_PER_LINE a line (llama.cpp's rms_norm, unrolled by the fusion JIT into one
function of 13,136 lines, was killed by the OOM killer at 18.5 GiB of anonymous memory, still
compiling: 1.5 MiB a line), and a little for each function it compiled before (a long
workgroup-mode kernel is cut into functions: emu/jit/outline.py).
Where the estimate exceeds MEMORY_SHARE of the memory available when the rule would compile (MemAvailable, or the
cgroup's limit less its use), the kernel keeps being interpreted, said once per kernel: slower, but
the host program lives.

EMU_JIT=1 compiles every kernel the fast paths take at once (the tests that compare the compiled
path with the interpreter), EMU_JIT=0 never compiles; unset or `auto`, this module decides.
The results are the same bits either way: the compiled kernels are exact against the reference
(tests/perf), and the workgroups a dispatch interprets first write what the reference writes.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

DEFAULT_S = {"fusion": 1.5, "cooperative": 5.0}   # CPU seconds to compile, until measured here
KEEP = 5                # compile times kept per kind
LOAD_S = 0.1            # loading a compiled kernel from the cache: interpreting less is no rent
PROBE_LANES = 4096      # the first interpreted batch, in lanes (whole workgroups)
LARGE_LINES = 500       # without per-line samples, a kernel longer than this costs proportionally more
KEEP_RENTS = 256        # rent files kept in tier/ (one per kernel interpreted and not compiled yet)
STALE_TMP_S = 3600      # a temporary file this old was left by a process that died while writing
MAX_FUNCTION_LINES = 3000   # longer functions are not compiled in the automatic mode (see above)
COMPILE_BYTES_PER_LINE = 3 << 19    # numba's memory while compiling, per line of one function (above)
KEPT_BYTES_PER_LINE = 1 << 16       # and per line of the functions it compiled before (rms_norm cut into
                                    # 51 functions, emu/jit/outline.py: 1.4 GiB at most for 9,569 lines)
MEMORY_SHARE = 0.5      # a compile may take at most this share of the memory available


def mode() -> str:
    """'auto' (this module decides), 'always' (EMU_JIT=1) or 'never' (EMU_JIT=0)."""
    v = os.environ.get("EMU_JIT", "auto").strip().lower()
    return {"0": "never", "1": "always"}.get(v, "auto")


def _samples(cache: Path, key: str) -> list[float]:
    try:
        times = json.loads((cache / "tier" / "compile_times.json").read_text()).get(key) or []
        return [float(t) for t in times if float(t) > 0]
    except (OSError, ValueError, TypeError, AttributeError):
        return []


def compile_estimate(kind: str, cache: Path, lines: int | None = None) -> float:
    """CPU seconds one compile of a kernel of this kind (of `lines` lines of generated source, if
    given) is expected to take here (`cache`: the JIT's cache folder, emu/jit/fuse.py's _cache_dir)."""
    per_line = _samples(cache, f"{kind}/line")
    if lines and per_line:
        return statistics.median(per_line) * lines
    times = _samples(cache, kind)
    base = statistics.median(times) if times else DEFAULT_S[kind]
    return base * max(1.0, (lines or 0) / LARGE_LINES)


def available_memory() -> int | None:
    """Bytes this process can still allocate without the system's OOM killer: the smaller of
    /proc/meminfo's MemAvailable and the cgroup's memory.max less memory.current; None where
    neither can be read (not Linux)."""
    found = []
    try:
        for ln in Path("/proc/meminfo").read_text().splitlines():
            if ln.startswith("MemAvailable:"):
                found.append(int(ln.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        cg = Path("/sys/fs/cgroup")
        limit = (cg / "memory.max").read_text().strip()
        if limit != "max":
            found.append(int(limit) - int((cg / "memory.current").read_text()))
    except (OSError, ValueError):
        pass
    return max(0, min(found)) if found else None


def compile_need(lines: int | None, longest: int | None = None) -> int:
    """Bytes numba is expected to take to compile a kernel of `lines` lines whose longest function
    has `longest`: numba compiles one function at a time (COMPILE_BYTES_PER_LINE a line of it)
    and keeps what each built (KEPT_BYTES_PER_LINE a line of the whole)."""
    lines = lines or 0
    longest = lines if longest is None else min(longest, lines)
    return longest * COMPILE_BYTES_PER_LINE + (lines - longest) * KEPT_BYTES_PER_LINE


def compile_fits(lines: int | None, longest: int | None = None) -> str:
    """'' where compiling a kernel of `lines` lines (its longest function `longest`) fits in memory
    now, else why not (one line)."""
    need = compile_need(lines, longest)
    have = available_memory()
    if have is None or need <= MEMORY_SHARE * have:
        return ""
    return (f"compiling its {lines:,} lines would take ~{need / 2**30:.1f} GiB, more than "
            f"{MEMORY_SHARE:.0%} of the {have / 2**30:.1f} GiB available")


def record_compile(kind: str, seconds: float, cache: Path, lines: int | None = None) -> None:
    """Keep the CPU seconds of a compile that just happened (the estimate's samples), and its
    seconds per line of a kernel of `lines` lines."""
    path = cache / "tier" / "compile_times.json"
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            data = json.loads(path.read_text())
            data = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            data = {}
        for key, value in ((kind, round(seconds, 3)),
                           (f"{kind}/line", round(seconds / lines, 6) if lines else None)):
            if value is not None:
                times = [t for t in data.get(key, []) if isinstance(t, (int, float))][-(KEEP - 1):]
                data[key] = times + [value]
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)
    except OSError:         # a read-only cache folder: the default estimate stays
        pass


class Tier:
    """The interpreting side of one pending kernel: `go_on` decides batch by batch, `ran` adds the
    interpreted seconds to the kernel's rent (kept across processes under its hash)."""
    PROBE_LANES = PROBE_LANES

    def __init__(self, kind: str, key: str, what: str, cache: Path, lines: int | None = None,
                 longest: int | None = None):
        self.kind, self.key, self.what, self.cache, self.lines = kind, key, what, cache, lines
        self.longest = longest
        self.compile_s = compile_estimate(kind, cache, lines)
        budget = max_function_lines()
        if longest is not None and longest > budget:
            self.compile_s = float("inf")       # never pays back: interpreted, said once
            _say_once(key, f"emu JIT: {what} runs interpreted: a function of {longest} generated "
                           f"lines, more than EMU_JIT_MAX_LINES={budget} (numba's time and memory grow "
                           f"faster than that; EMU_JIT=1 compiles it anyway)")
        self.rent_file = cache / "tier" / f"{key}.rent"
        try:
            self.rent = float(self.rent_file.read_text())
        except (OSError, ValueError):
            self.rent = 0.0
        self.why = ""

    def hot(self) -> bool:
        """Already interpreted for as long as a compile takes: compile before interpreting more."""
        if self.rent >= self.compile_s and self._fits():
            self.why = (f"interpreted for {self.rent:.1f} s CPU in earlier dispatches, more than the "
                        f"~{self.compile_s:.1f} s a compile takes here")
            return True
        return False

    def _fits(self) -> bool:
        """Whether a compile fits in memory now (compile_fits); where not, say so once."""
        why = compile_fits(self.lines, self.longest)
        if why:
            _say_once(f"{self.key}/memory", f"emu JIT: {self.what} stays in the interpreter: {why} "
                                            f"(EMU_JIT=1 compiles it anyway)")
        return not why

    def go_on(self, spent: float, last_s: float, last_wgs: int, done: int, left: int) -> bool:
        """Interpret the next batch? `spent`: seconds interpreted in this dispatch, `last_s` the
        last batch's, of `last_wgs` workgroups; `done` workgroups ran, `left` remain."""
        projected = last_s / max(1, last_wgs) * left
        if self.rent + max(0.0, spent - LOAD_S) + projected < self.compile_s or not self._fits():
            return True
        self.why = (f"a dispatch of {done + left} workgroups: ~{spent + projected:.1f} s interpreted "
                    f"against ~{self.compile_s:.1f} s to compile")
        return False

    def ran(self, spent: float) -> None:
        """Count `spent` interpreted seconds (those past a cached kernel's load) against the kernel."""
        add = max(0.0, spent - LOAD_S)
        if add <= 0:
            return
        self.rent += add
        try:
            self.rent_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            new = not self.rent_file.exists()
            tmp = self.rent_file.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(f"{self.rent:.4f}")
            os.replace(tmp, self.rent_file)
        except OSError:
            return
        if new:
            prune_rents(self.rent_file.parent)

    def paid(self) -> None:
        """The kernel is compiled (and kept in the cache): its rent is no longer needed."""
        try:
            self.rent_file.unlink(missing_ok=True)
        except OSError:
            pass


def max_function_lines() -> int:
    try:
        return int(os.environ.get("EMU_JIT_MAX_LINES", MAX_FUNCTION_LINES))
    except ValueError:
        return MAX_FUNCTION_LINES


def longest_function(source: str) -> int:
    """Lines of the longest function of a generated module (numba compiles each on its own)."""
    longest = count = 0
    for line in source.splitlines():
        if line.startswith("def "):
            count = 0
        count += 1
        longest = max(longest, count)
    return longest


_SAID: set = set()


def _say_once(key: str, line: str) -> None:
    if key not in _SAID:
        _SAID.add(key)
        print(line, file=sys.stderr, flush=True)


def prune_rents(folder: Path, keep: int = KEEP_RENTS) -> int:
    """Remove all but the `keep` most recently written rent files of `folder` (and temporary files
    older than STALE_TMP_S); returns how many went. Called when a new rent file is written, so
    the folder holds at most `keep` of them."""
    def mtime(p):
        try:
            return p.stat().st_mtime
        except OSError:             # removed meanwhile (another process pruning)
            return None
    try:
        rents = [(t, p) for p in folder.glob("*.rent") if (t := mtime(p)) is not None]
        now = time.time()
        stale = [p for p in folder.glob("*.tmp") if (t := mtime(p)) is not None and now - t > STALE_TMP_S]
    except OSError:
        return 0
    rents.sort(key=lambda tp: tp[0], reverse=True)
    gone = 0
    for p in [p for _, p in rents[keep:]] + stale:
        try:
            p.unlink()
            gone += 1
        except OSError:
            pass
    return gone


def pending(kernel, kind: str, source_hash: str, cache: Path) -> Tier | None:
    """A Tier for `kernel` (fuse.Kernel or coop_kernel.Kernel) while the interpreter may run its
    dispatches instead of a compile; None where it runs compiled now (built or in the cache, or
    EMU_JIT=1)."""
    if kernel.mod is not None or mode() != "auto":
        return None
    tier = getattr(kernel, "_tier", None)
    if tier is not None:
        return tier
    if in_cache(source_hash, cache):
        return None
    entry = kernel.pipe.entry
    where = f" ({entry.loc.file})" if getattr(entry, "loc", None) is not None and entry.loc.file else ""
    kernel._tier = Tier(kind, source_hash, f"the {kind} kernel of '{entry.name}'{where}", cache,
                        kernel.source.count("\n") + 1, longest_function(kernel.source))
    return kernel._tier


def in_cache(source_hash: str, folder: Path) -> bool:
    """Whether the generated module of this hash has machine code saved or numba's cache entry."""
    from . import native
    name = f"emu_jit_{source_hash}"
    if native.enabled() and native.path(folder, f"{name}.run").exists():
        return True
    return name in _numba_indexed(folder / "__pycache__")


_INDEXED: dict = {}     # numba's cache folder -> (its modification time, the modules it has an index of)


def _numba_indexed(folder: Path) -> set:
    """The modules numba's cache folder holds an index of (MODULE.FUNCTION-LINE.pyXY.nbi), read
    again only when the folder changed: globbing its thousands of files for each kernel took ~10 ms."""
    try:
        mtime = folder.stat().st_mtime_ns
    except OSError:
        return set()
    got = _INDEXED.get(folder)
    if got is None or got[0] != mtime:
        names = {f.split(".", 1)[0] for f in os.listdir(folder) if f.endswith(".nbi") and ".run-" in f}
        got = _INDEXED[folder] = (mtime, names)
    return got[1]


def timed_compile(kernel, kind: str, build) -> None:
    """Run build() (the first call of a kernel: a compile unless it loads from a cache), naming it
    in the compile notice with why, and record its CPU time when the kernel was pending."""
    from . import notice
    tier = getattr(kernel, "_tier", None)
    entry = kernel.pipe.entry
    what = tier.what if tier is not None else f"the {kind} kernel of '{entry.name}'"
    why = (tier.why if tier is not None and tier.why else
           "EMU_JIT=1" if mode() == "always" else "not in the cache")
    kernel.why = why            # (tests; the line says it only past a second of compiling)
    if tier is None:            # loaded (or EMU_JIT=1): nothing to learn from it
        with notice.compiling(what, f"{why}; kept in the cache for later runs"):
            build()
        return
    from numba.core import event        # (numba compiles it now: imported anyway)
    t0 = time.process_time()
    with notice.compiling(what, f"{why}; kept in the cache for later runs"), \
            event.install_recorder("numba:compile") as rec:
        build()
    seconds = time.process_time() - t0
    kernel._tier = None
    tier.paid()
    # a sample only where the kernel alone compiled: emu's own kernels compiled on the way (once
    # per machine and emu version) would make every later estimate too high
    if not any(_emus_own(e) for _, e in rec.buffer):
        record_compile(kind, seconds, tier.cache, tier.lines)


def _emus_own(ev) -> bool:
    """A compile of one of emu's kernels (emu.numerics, emu.jit), not the generated one's or the
    numpy overloads numba compiles for it each time."""
    fn = getattr(ev.data.get("dispatcher"), "py_func", None) if isinstance(ev.data, dict) else None
    return (getattr(fn, "__module__", None) or "").startswith("emu.")
