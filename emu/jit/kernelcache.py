"""A pipeline's compiled-kernel object (the fusion JIT's or the cooperative kernel's Kernel: its
generated source and what running it needs) kept between processes beside the pipeline's IR in
emu's IR cache (emu/jit/ircache.py), so that a program that makes the same pipelines each run (a
Vulkan program through the ICD) does not generate each kernel's source again to find its machine
code: generating ggml's matrix-vector kernels took ~40 ms each, more than loading them.

What a kernel is made from: the pipeline's IR (its cache entry, which names the source, the
constants and emu's files), the entry point, the override values, the profile's every field and
the executor's options; all of them are the key. A pipeline not from the cache, or whose options
or profile have no text of their content, is generated each time, as are kernels while
EMU_JIT_WHY=1 asks why one is declined (said when it is generated). A generator that declined a
pipeline is kept as such, so it is not asked again."""
from __future__ import annotations

import copy
import hashlib
import os
import pickle

from . import ircache

_DECLINED = "declined"


def _entry(pipe, kind: str):
    base = getattr(pipe.module, "_ircache_entry", None)
    if base is None or os.environ.get("EMU_JIT_WHY", "0") != "0":
        return None
    profile = ircache.content_text(pipe.profile)
    opts = ircache.content_text(pipe.opts, skip=("tracer", "progress"))
    if profile is None or opts is None:
        return None
    key = repr((kind, pipe.entry.name, sorted(pipe.overrides.items(), key=repr), profile, opts))
    return base.with_name(f"{base.stem}.{hashlib.sha256(key.encode()).hexdigest()[:16]}.{kind}.kernel")


def cached(pipe, kind: str, make):
    """make(pipe) -> a Kernel or None, from the cache where it holds the one made before."""
    path = _entry(pipe, kind)
    if path is not None:
        try:
            kept = ircache.loads(path.read_bytes())
            if kept == _DECLINED:
                return None
            kept.pipe = pipe
            return kept
        except Exception:       # none yet, unreadable, or of other classes: made again
            pass
    kernel = make(pipe)
    if path is not None:
        try:
            if kernel is None:
                data = pickle.dumps(_DECLINED)
            else:
                keep = copy.copy(kernel)
                keep.pipe = keep.mod = None
                data = pickle.dumps(keep, protocol=pickle.HIGHEST_PROTOCOL)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
        except Exception:       # not picklable, a full disk: made again next time
            pass
    return kernel
