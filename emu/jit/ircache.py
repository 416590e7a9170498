"""The IR of a shader kept between processes, as the device runs it: for `emu run` (parsing and
lowering a GEMM takes ~4 ms, but importing the WGSL front end to do it ~50 ms of every run) and
for Vulkan programs through the ICD, which make the same pipelines each run (lowering one of
llama.cpp's matrix-vector shaders and running the device's compiler passes over it takes seconds;
a driver keeps its compiled shaders in a disk cache for the same reason). A hit loads the IR
module and its warnings with pickle and never imports the front end.

An entry is the (module, warnings) pair emu.api.compile_wgsl returns: the front end's
module after the compiler stack's passes (each load gives fresh objects). Its name is a hash of the
source, the file name (messages and locations name it), every argument of the compile (the stack
and the specialization constants among them), Python's version and the stamp of emu's own
files (path, size and modification time of each, as Python's bytecode cache checks its sources):
changing any file of emu gives a new stamp, so IR lowered by other code is never used. Only
successful compiles are kept: an error is reported from the source each time.

Entries live in the JIT's private cache folder (fuse._cache_dir: the same trust as the machine
code kept there), one folder per stamp; a new stamp removes all but the newest few folders.
EMU_IR_CACHE=0 turns this off."""
from __future__ import annotations

import gc
import hashlib
import os
import pickle
from pathlib import Path

KEEP_STAMPS = 8             # folders of other stamps kept (other checkouts sharing the cache)


def enabled() -> bool:
    return os.environ.get("EMU_IR_CACHE", "1") != "0"


def _stamp() -> str:
    from ..startup import files_stamp
    return files_stamp()


def _entry(source: str, file: str, args: dict) -> Path:
    from .fuse import _cache_dir
    key = hashlib.sha256(repr((file, sorted(args.items(), key=repr))).encode() + b"\0" + source.encode("utf-8", "surrogateescape"))
    return _cache_dir() / "ir" / _stamp() / f"{key.hexdigest()[:32]}.pickle"


def compile_cached(compile_fn, source: str, file: str, **args):
    """compile_fn(source, file, **args) -> (module, warnings), from the cache where it holds them."""
    if not enabled():
        return compile_fn(source, file, **args)
    path = None
    try:
        path = _entry(source, file, args)
        found = _load(path)
        if found is not None:
            return found
    except Exception:       # none yet, or unreadable (a partial file, classes changed): compile it
        pass
    result = compile_fn(source, file, **args)
    if path is not None and _save(path, result):
        result[0]._ircache_entry = path
    return result


def loads(data: bytes):
    """pickle.loads with the cyclic garbage collector paused: an IR module is tens of thousands of
    new container objects, whose allocation would run the collector hundreds of times (and the
    full collection, over every object of the process, once or twice per module) while it can
    find no garbage among them: ~30-40% of each load."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(data)
    finally:
        if paused:
            gc.enable()


def _load(path: Path):
    found = loads(path.read_bytes())
    if not (isinstance(found, tuple) and len(found) == 2):
        return None
    found[0]._ircache_entry = path          # what checked()/mark_checked() note beside
    return found


# ------------------------------------------------------------------ without loading the IR
# A pipeline of a SPIR-V module with specialization constants lowers the module again with its
# values; the module's own IR is read only for what its overrides are. A hit can give that
# summary (a small file beside the entry) and load the IR itself only if asked: a Vulkan program
# that makes twelve pipelines then reads twelve IRs, not twenty-four (~35 ms each for ggml's
# matrix-vector shaders).
SUMMARY_FIELDS = ("overrides", "needs_constants", "unset_overrides")


def summary(compile_fn, source: str, file: str, **args):
    """(summary, entry, load) for a cached entry: summary a namespace of SUMMARY_FIELDS, entry its
    path (for checked()), load() -> (module, warnings), compiled again where the entry went
    meanwhile; None where the cache has no such entry (compile_cached then)."""
    if not enabled():
        return None
    try:
        path = _entry(source, file, args)
        found = loads(path.with_suffix(".summary").read_bytes())
    except Exception:
        return None
    if not path.exists():
        return None

    def load():
        got = None
        try:
            got = _load(path)
        except Exception:     # removed or damaged since: compiled again (and kept again)
            pass
        return got if got is not None else compile_cached(compile_fn, source, file, **args)
    return found, path, load


def _save(path: Path, result) -> bool:
    folder = path.parent
    try:
        new = not folder.is_dir()
        folder.mkdir(parents=True, exist_ok=True)
        _write(path, pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        from types import SimpleNamespace
        about = SimpleNamespace(**{k: getattr(result[0], k) for k in SUMMARY_FIELDS})
        _write(path.with_suffix(".summary"), pickle.dumps(about, protocol=pickle.HIGHEST_PROTOCOL))
        if new:
            _prune(folder.parent, keep=folder)
    except Exception:       # not picklable, a full disk, a folder removed meanwhile: compiled next time
        return False
    return True


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# ------------------------------------------------------------------ checks done once
# Whether a device can run a module (emu.isa.verify) depends only on the module, the device's
# profile, the subgroup size and the entry point: a module from the cache that passed once for
# them passes again (the verifier is among emu's files, in the stamp). Only passes are noted.
def _mark(entry: Path, what: str) -> Path:
    return entry.with_name(f"{entry.stem}.{hashlib.sha256(what.encode()).hexdigest()[:16]}.checked")


def checked(module_or_entry, what: str) -> bool:
    """Whether `what` (a description of a check, its every input but the module) passed for this
    cached module (or the entry's path) before."""
    entry = module_or_entry if isinstance(module_or_entry, Path) else getattr(module_or_entry, "_ircache_entry", None)
    return entry is not None and _mark(entry, what).exists()


def mark_checked(module_or_entry, what: str) -> None:
    entry = module_or_entry if isinstance(module_or_entry, Path) else getattr(module_or_entry, "_ircache_entry", None)
    if entry is None:
        return
    try:
        _mark(entry, what).touch()
    except OSError:         # checked again next time
        pass


def _prune(root: Path, keep: Path) -> None:
    """Remove the entries of all but the KEEP_STAMPS stamps most recently written to."""
    import shutil
    olds = sorted((p for p in root.iterdir() if p.is_dir() and p != keep),
                  key=lambda p: p.stat().st_mtime, reverse=True)
    for p in olds[KEEP_STAMPS - 1:]:
        shutil.rmtree(p, ignore_errors=True)


def content_text(obj, skip=("_cache",)) -> str | None:
    """A dataclass's every field as text (a profile, a pipeline's options): the key of what was
    made from it; None where the text is not the content (an object shown as its address)."""
    import dataclasses
    import re
    text = "|".join(f"{f.name}={getattr(obj, f.name)!r}" for f in dataclasses.fields(obj) if f.name not in skip)
    return None if re.search(r" at 0x[0-9a-f]+", text) else text
