"""Compiled kernels called without numba: a function numba compiled (or loaded from its cache) once
is saved as the machine code of that compilation, and a later process loads it with llvmlite's C
library (called through ctypes: _Direct; llvmlite.binding where that cannot be) and calls it
through ctypes, never importing numba. Importing numba and setting up its typing and
target registries to load a cached kernel takes ~0.4 s of a warm `emu run`; this takes ~0.02 s.

What is saved, per function and argument types: the object code numba built for its library (the
function and everything it inlined or calls), the function's symbol in numba's calling
convention (status = fn(&ret, &excinfo, args flattened: an array is meminfo, parent, size,
itemsize, data, shape, strides), the types it was compiled for, and the C symbols the code needs
from outside (numba's runtime and helpers, Python's C API). Loading resolves those symbols the
way numba does: its helper and runtime modules are loaded by path, without the numba package.

The machine code is numba's own, so the bits are numba's. A file is used only where everything
matches: the numba, llvmlite and Python versions and the host CPU (the key of its name), every
argument's type at every call (else that call goes to numba, which compiles as before), every
symbol found. Files live in the JIT's private cache folder (emu/jit/fuse.py: _cache_dir), beside
the generated sources whose kernels they hold. EMU_NATIVE=0 turns this off.
"""
from __future__ import annotations

import ctypes
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np

_HOST: list = []
_LOADED: dict = {}       # file -> Native (loaded once per process)
_HELPERS: list = []      # numba's C helper dicts: (_helperlib, _dynfunc, _nrt_python)
_STATUS_OK = (0, -2)     # numba's RETCODE_OK, RETCODE_NONE


def enabled() -> bool:
    return os.environ.get("EMU_NATIVE", "1") != "0"


def _host() -> str:
    """What the machine code depends on: numba's, llvmlite's and Python's versions, the CPU."""
    if not _HOST:
        import llvmlite
        cpu, features = _llvm().host_cpu()
        numba_version = (_numba_dir() / "_version.py").read_bytes()     # (importlib.metadata: 25 ms)
        key = [numba_version, llvmlite.__version__, sys.version, cpu, features,
               os.environ.get("NUMBA_CPU_NAME", ""), os.environ.get("NUMBA_CPU_FEATURES", "")]
        _HOST.append(hashlib.sha256(repr(key).encode()).hexdigest()[:16])
    return _HOST[0]


# ------------------------------------------------------------------------------ LLVM

class _Binding:
    """The LLVM calls loading needs, through llvmlite.binding."""

    def host_cpu(self) -> tuple[str, str]:
        import llvmlite.binding as ll
        return ll.get_host_cpu_name(), ll.get_host_cpu_features().flatten()

    def load_object(self, obj: bytes, symbols: dict, name: str):
        """(what keeps the code mapped, the address of `name`) for object code `obj`."""
        import llvmlite.binding as ll
        ll.initialize_native_target()
        ll.initialize_native_asmprinter()
        for s, a in symbols.items():
            ll.add_symbol(s, a)
        tm = ll.Target.from_default_triple().create_target_machine(jit=True)
        engine = ll.create_mcjit_compiler(ll.parse_assembly(""), tm)
        engine.add_object_file(ll.ObjectFileRef.from_data(obj))
        engine.finalize_object()
        return engine, engine.get_function_address(name)


class _Direct:
    """The same calls made straight to llvmlite's C library through ctypes, with the arguments
    llvmlite.binding passes (its defaults: opt 2, reloc and code model 'default'/'jitdefault',
    no LLVM memory manager off ARM): importing llvmlite.binding itself (its wrappers and
    llvmlite.ir) costs ~25-60 ms of a warm run, the library ~20 ms. Used only for the llvmlite
    versions whose C signatures these are (DIRECT_VERSIONS, read from its binding modules), and
    only while llvmlite.binding is not imported (its calls hold its lock; numba's then go through
    it): otherwise _Binding."""
    DIRECT_VERSIONS = ("0.50.",)

    def __init__(self, lib):
        c, P = ctypes, ctypes.POINTER(ctypes.c_char_p)
        self.lib = lib
        for fn, res, args in (
                ("GetHostCPUName", None, [P]), ("GetHostCPUFeatures", c.c_int, [P]),
                ("DisposeString", None, [c.c_char_p]), ("GetDefaultTargetTriple", None, [P]),
                ("InitializeNativeTarget", None, []), ("InitializeNativeAsmPrinter", None, []),
                ("AddSymbol", None, [c.c_char_p, c.c_void_p]),
                ("GetTargetFromTriple", c.c_void_p, [c.c_char_p, P]),
                ("CreateTargetMachine", c.c_void_p, [c.c_void_p, c.c_char_p, c.c_char_p, c.c_char_p, c.c_int,
                                                     c.c_char_p, c.c_char_p, c.c_int, c.c_int, c.c_char_p]),
                ("GetGlobalContext", c.c_void_p, []),
                ("ParseAssembly", c.c_void_p, [c.c_void_p, c.c_char_p, P]),
                ("CreateMCJITCompiler", c.c_void_p, [c.c_void_p, c.c_void_p, c.c_bool, P]),
                ("CreateObjectFile", c.c_void_p, [c.c_char_p, c.c_size_t]),
                ("MCJITAddObjectFile", None, [c.c_void_p, c.c_void_p]),
                ("DisposeObjectFile", None, [c.c_void_p]),
                ("FinalizeObject", None, [c.c_void_p]),
                ("GetFunctionAddress", c.c_uint64, [c.c_void_p, c.c_char_p])):
            f = getattr(lib, "LLVMPY_" + fn)
            f.restype, f.argtypes = res, args
            setattr(self, fn, f)

    @classmethod
    def open(cls):
        """None where llvmlite's version is not one of DIRECT_VERSIONS or its library is not found."""
        if "llvmlite.binding" in sys.modules:
            return None
        import llvmlite
        if not llvmlite.__version__.startswith(cls.DIRECT_VERSIONS) or os.name != "posix" \
                or sys.platform == "darwin":
            return None
        lib = Path(llvmlite.__file__).parent / "binding" / "libllvmlite.so"
        return cls(ctypes.CDLL(str(lib))) if lib.is_file() else None

    def _string(self, call, *args):
        out = ctypes.c_char_p(None)
        r = call(*args, ctypes.byref(out))
        text = (out.value or b"").decode()
        if out.value is not None:
            self.DisposeString(out)
        return r, text

    def host_cpu(self) -> tuple[str, str]:
        name = self._string(self.GetHostCPUName)[1]
        ok, raw = self._string(self.GetHostCPUFeatures)
        features = {f[1:]: f[0] for f in raw.split(",") if f} if ok else {}
        return name, ",".join(f"{v}{k}" for k, v in sorted(features.items()))    # FeatureMap.flatten()

    def load_object(self, obj: bytes, symbols: dict, name: str):
        self.InitializeNativeTarget()
        self.InitializeNativeAsmPrinter()
        for s, a in symbols.items():
            self.AddSymbol(s.encode(), a)
        _, triple = self._string(self.GetDefaultTargetTriple)
        target, err = self._string(self.GetTargetFromTriple, triple.encode())
        if not target:
            raise RuntimeError(err)
        tm = self.CreateTargetMachine(target, triple.encode(), b"", b"", 2, b"default", b"jitdefault", 0, 1, b"")
        module, err = self._string(self.ParseAssembly, self.GetGlobalContext(), b"")
        if not tm or not module or err:
            raise RuntimeError(err or "cannot create a target machine")
        import platform
        engine, err = self._string(self.CreateMCJITCompiler, module, tm,
                                   platform.machine().lower() in ("arm64", "aarch64"))
        if not engine:
            raise RuntimeError(err)
        objfile = self.CreateObjectFile(obj, len(obj))
        self.MCJITAddObjectFile(engine, objfile)        # takes the object's code, as llvmlite's
        self.DisposeObjectFile(objfile)                 # ObjectFileRef then frees the rest
        self.FinalizeObject(engine)
        return engine, self.GetFunctionAddress(engine, name.encode())


_LL: list = []


def _llvm():
    if not _LL:
        try:
            direct = _Direct.open()
        except (OSError, AttributeError):        # no such library or symbol: llvmlite.binding says why
            direct = None
        _LL.append(direct or _Binding())
    return _LL[0]


def path(folder: Path, key: str) -> Path:
    return folder / f"{key}.{_host()}.native"


# ------------------------------------------------------------------------------ types

def _spec(t):
    """A numba argument type as saved ('a', dtype, ndim, writeable) / ('i',) / ('b',), or None."""
    from numba.core import types
    from numba.np.numpy_support import as_dtype
    if isinstance(t, types.Array) and t.layout == "C" and t.aligned:
        return ["a", as_dtype(t.dtype).name, t.ndim, bool(t.mutable)]
    if isinstance(t, types.Integer) and t.bitwidth == 64 and t.signed and not isinstance(t, types.Literal):
        return ["i"]
    if isinstance(t, types.Boolean) and not isinstance(t, types.Literal):
        return ["b"]
    if t == types.none:                 # (a kernel's variant switch: branches on `is None` pruned)
        return ["n"]
    return None


def _llvm_args(spec) -> list:
    if spec[0] == "a":
        return ["ptr", "ptr", "i64", "i64", "ptr"] + ["i64"] * (2 * spec[2])
    return {"i": ["i64"], "b": ["i8"], "n": ["ptr"]}[spec[0]]


def _matches(spec, x, dtype) -> bool:
    """x fits the saved type spec (an array: of `dtype`, np.dtype(spec[1]), given to spare the
    ~3 us of dtype.name per array and call)."""
    if spec[0] == "a":
        return (type(x) is np.ndarray and x.dtype == dtype and x.ndim == spec[2]
                and x.flags.c_contiguous and x.flags.aligned and x.flags.writeable == spec[3])
    if spec[0] == "i":
        return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))
    if spec[0] == "n":
        return x is None
    return isinstance(x, (bool, np.bool_))


def _flat(spec, x) -> list:
    """x as numba's calling convention passes it: an array as meminfo, parent, size, itemsize,
    data, shape, strides."""
    if spec[0] == "a":
        return [None, None, x.size, x.itemsize, x.ctypes.data, *x.shape, *x.strides]
    return [None] if spec[0] == "n" else [int(x)]


# ------------------------------------------------------------------------------ save

def save(file: Path, dispatcher, args) -> bool:
    """Save the machine code numba has for `dispatcher` called with `args` (after such a call);
    False where it cannot be (a type this module does not pass, no such overload)."""
    try:
        sig = tuple(dispatcher.typeof_pyval(a) for a in args)
        cres = dispatcher.overloads.get(sig)
        specs = [_spec(t) for t in sig]
        ret = _ret_spec(cres.signature.return_type) if cres is not None else None
        if cres is None or None in specs or ret is None:
            return False
        lib = cres.library
        mod = lib._get_module_for_linking()
        name = cres.fndesc.llvm_func_name
        got = [str(a.type) for a in mod.get_function(name).arguments]
        want = ["ptr", "ptr"] + [x for s in specs for x in _llvm_args(s)]
        if got != want:
            return False
        undef = sorted({f.name for f in mod.functions if f.is_declaration and not f.name.startswith("llvm.")}
                       | {g.name for g in mod.global_variables if g.is_declaration})
        # the object code numba made of this library where it keeps it (a compile, not a load from
        # its cache): the same machine code, not built a second time (~0.2 s a kernel)
        obj = getattr(lib, "_compiled_object", None) or lib._codegen._tm.emit_object(mod)
        head = json.dumps({"name": name, "args": specs, "ret": ret, "symbols": undef}).encode()
        tmp = file.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(head + b"\n" + obj)
        os.replace(tmp, file)
        return True
    except Exception:           # an internal of numba moved: numba keeps running it
        return False


def _ret_spec(t):
    from numba.core import types
    if t == types.none:
        return "none"
    if isinstance(t, types.Boolean):
        return "b"
    if isinstance(t, types.Integer) and t.bitwidth == 64 and t.signed:
        return "i"
    return None


# ------------------------------------------------------------------------------ load

def _numba_dir() -> Path:
    """numba's package folder, found without importing it."""
    return Path(importlib.util.find_spec("numba").submodule_search_locations[0])


def _ext(rel: str):
    """numba's C extension module `rel` (under the numba package) loaded by path, not by package,
    or the one numba's import loaded."""
    full = "numba." + rel.replace("/", ".")
    if full in sys.modules:
        return sys.modules[full]
    root = _numba_dir()
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        p = root / (rel + suffix)
        if p.exists():
            # the last part of the name must be the module's own (its PyInit_ function)
            s = importlib.util.spec_from_file_location(f"_emu_native.{rel.split('/')[-1]}", p)
            m = importlib.util.module_from_spec(s)
            s.loader.exec_module(m)
            return m
    raise ImportError(rel)


def _symbol(name: str):
    """The address numba gives the C symbol `name` (numba.core.base._load_global_helpers,
    numba.core.runtime.nrt, externals), or the process's own."""
    import builtins
    if not _HELPERS:
        _HELPERS.extend((_ext("_helperlib").c_helpers, _ext("_dynfunc").c_helpers,
                         _ext("core/runtime/_nrt_python").c_helpers))
    helper, dynfunc, nrt = _HELPERS
    if name == "_Py_NoneStruct":
        return id(None)
    if name.startswith("PyExc_"):
        obj = getattr(builtins, name[6:], None)
        return id(obj) if isinstance(obj, type) and issubclass(obj, BaseException) else None
    if name.startswith("NRT_") and name[4:] in nrt:
        return nrt[name[4:]]
    if name.startswith("_nrt_") and name in nrt:
        return nrt[name]
    if name.startswith("numba_"):
        for h in (helper, dynfunc):
            if name[6:] in h:
                return h[name[6:]]
    if name in helper:                      # the C math functions numba binds to its helpers'
        return helper[name]
    try:
        return ctypes.cast(getattr(ctypes.CDLL(None), name), ctypes.c_void_p).value
    except AttributeError:
        return None


_CT = {"ptr": ctypes.c_void_p, "i64": ctypes.c_int64, "i8": ctypes.c_int8}


class Native:
    """A saved function, called like the numba function with arguments of the saved types."""

    def __init__(self, meta: dict, engine, address: int):
        self.specs = meta["args"]
        self.ret = meta["ret"]
        self.engine = engine                # keeps the code mapped
        argt = [ctypes.c_void_p, ctypes.c_void_p] + [_CT[x] for s in self.specs for x in _llvm_args(s)]
        self.fn = ctypes.CFUNCTYPE(ctypes.c_int32, *argt)(address)
        self.dtypes = [np.dtype(s[1]) if s[0] == "a" else None for s in self.specs]

    def accepts(self, args) -> bool:
        return len(args) == len(self.specs) and all(_matches(*x) for x in zip(self.specs, args, self.dtypes))

    def __call__(self, *args):
        return self.call_flat([x for s, a in zip(self.specs, args) for x in _flat(s, a)])

    def call_flat(self, flat: list):
        ret, exc = ctypes.c_int64(0), ctypes.c_void_p(0)
        status = self.fn(ctypes.addressof(ret), ctypes.addressof(exc), *flat)   # the GIL released
        if status not in _STATUS_OK:
            raise RuntimeError(f"emu JIT: a compiled kernel failed (numba status {status})")
        if self.ret == "b":
            return bool(ret.value & 0xFF)
        return int(ret.value) if self.ret == "i" else None


class Bound:
    """A saved function called many times with the same arguments but those at `vary` (the chunks
    of one dispatch, on several threads): the others checked and flattened once. Checking and
    flattening a kernel's ~27 arguments is ~50-150 us of Python a call, with the GIL held: at 16
    threads and 8 chunks each, milliseconds in which the other threads wait for the GIL."""

    def __init__(self, native: Native, args, vary):
        self.native, self.flat, at = native, [], []
        for s, a in zip(native.specs, args):
            at.append(len(self.flat))
            self.flat += _flat(s, a)
        self.vary = [(at[i], native.specs[i], native.dtypes[i]) for i in vary]

    def __call__(self, *values):
        flat = self.flat.copy()
        for (at, spec, dtype), v in zip(self.vary, values):
            if not _matches(spec, v, dtype):        # an array of the same rank keeps the layout
                raise TypeError(f"emu JIT: a bound argument of another type ({type(v).__name__})")
            x = _flat(spec, v)
            flat[at:at + len(x)] = x
        return self.native.call_flat(flat)


def load(file: Path) -> Native | None:
    """The function saved in `file`, or None (no file, another machine's, a symbol not found)."""
    fn = _LOADED.get(file)
    if fn is None and enabled() and file.exists():
        try:
            fn = _LOADED[file] = _load(file)
        except Exception:
            fn = None
    return fn


def _load(file: Path) -> Native | None:
    data = file.read_bytes()
    head, obj = data.split(b"\n", 1)
    meta = json.loads(head)
    addrs = {s: _symbol(s) for s in meta["symbols"]}
    if not all(addrs.values()):
        return None                         # an unresolved symbol would end the process
    engine, address = _llvm().load_object(obj, addrs, meta["name"])
    return Native(meta, engine, address) if address else None


class Function:
    """A numba function called natively where its code was saved, else through numba (imported,
    compiled or loaded from numba's cache on first need), saving its code for later processes.
    `dispatcher()` gives the numba function; `file` is where its code is saved."""

    def __init__(self, file: Path, dispatcher):
        self.file = file
        self._dispatcher = dispatcher
        self.native = load(file)
        self.numba = None
        self.saved = self.native is not None

    def __call__(self, *args):
        n = self.native
        if n is not None and n.accepts(args):
            return n(*args)
        if self.numba is None:
            self.numba = self._dispatcher()
        r = self.numba(*args)
        if not self.saved and enabled():
            self.saved = True                   # one try per process
            save(self.file, self.numba, args)
        return r

    def bind(self, args, vary):
        """call(*values): this function on `args` with those at the indices `vary` replaced by
        `values`; natively through a Bound where the saved code takes `args`."""
        n = self.native
        if n is not None and n.accepts(args):
            return Bound(n, args, vary)
        args = list(args)

        def call(*values):
            a = args.copy()
            for i, v in zip(vary, values):
                a[i] = v
            return self(*a)
        return call
