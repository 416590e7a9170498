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
        found = pickle.loads(path.read_bytes())
        if isinstance(found, tuple) and len(found) == 2:
            return found
    except Exception:       # none yet, or unreadable (a partial file, classes changed): compile it
        pass
    result = compile_fn(source, file, **args)
    if path is not None:
        _save(path, result)
    return result


def _save(path: Path, result) -> None:
    folder = path.parent
    try:
        new = not folder.is_dir()
        folder.mkdir(parents=True, exist_ok=True)
        data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        if new:
            _prune(folder.parent, keep=folder)
    except Exception:       # not picklable, a full disk, a folder removed meanwhile: compiled next time
        return


def _prune(root: Path, keep: Path) -> None:
    """Remove the entries of all but the KEEP_STAMPS stamps most recently written to."""
    import shutil
    olds = sorted((p for p in root.iterdir() if p.is_dir() and p != keep),
                  key=lambda p: p.stat().st_mtime, reverse=True)
    for p in olds[KEEP_STAMPS - 1:]:
        shutil.rmtree(p, ignore_errors=True)
