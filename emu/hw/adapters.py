"""The two Python bindings of WebGPU, behind one small interface.

``wgpu``  is wgpu-py on wgpu-native (wgpu-core + naga), PyPI package ``wgpu``.
``dawn``  is the same wgpu-py API on Google's Dawn (Tint), PyPI package ``wgpudawn``.

Everything that differs between the two lives here, so that ``emu.hw.runner`` is written once:

- how the module is imported and the instance configured (Dawn's toggles go to
  ``extras.set_instance_extras`` before the first adapter is requested);
- feature names (wgpu-native says ``subgroup``, Dawn and the WebGPU spec ``subgroups``);
- the WGSL dialect: naga rejects ``enable subgroups;`` (it enables subgroup builtins from the
  device feature), Tint requires it; the directive is dropped for ``wgpu``;
- the adapter's subgroup sizes: wgpu-py fills ``adapter.info`` from misspelled struct fields
  (``stackgroup_min_size``: always the spec's 4 and 128); the real numbers are read here from the
  C struct (Dawn reports them; wgpu-native leaves them 0, so they are left out).

Adapter choice: ``EMU_HW_ADAPTER`` (a case-insensitive substring of the adapter's device,
vendor, description or backend type, e.g. ``llvmpipe`` or ``opengl``) picks one; otherwise
Vulkan, Metal or D3D12 (never wgpu-native's OpenGL fallback), a discrete or integrated GPU before
a CPU adapter (lavapipe). ``EMU_DAWN_TOGGLES`` adds Dawn instance toggles (comma separated) to
``allow_unsafe_apis``.

``load``, ``get_adapter``, ``adapter_info`` and ``get_device`` raise ``HwUnavailable`` (a
``HwError``) saying what is missing and how to install it; ``available`` returns that reason
instead of raising.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import re
import threading

from ..errors import HwError, InvalidArgument  # HwError: the error tree is in emu/errors.py

BACKENDS = ("wgpu", "dawn")

INSTALL_HINT = (
    "install mesa-vulkan-drivers (lavapipe, a Vulkan driver on the CPU) and libvulkan1: on Debian "
    "bookworm, as root, add 'deb http://deb.debian.org/debian bookworm-backports main' to "
    "/etc/apt/sources.list.d/, then apt-get update && apt-get install -t bookworm-backports "
    "mesa-vulkan-drivers libvulkan1 (or run .ci/run)"
)
PIP_HINT = {"wgpu": "pip install wgpu==0.32.0",
            "dawn": "pip install wgpudawn==0.32.0.4"}

_PACKAGES = {"wgpu": "wgpu", "dawn": "wgpudawn"}
# feature names as each binding spells them, keyed by the WebGPU spec's name
_FEATURE_ALIASES = {"wgpu": {"subgroups": "subgroup"}, "dawn": {"subgroup": "subgroups"}}
# limits raised to what the adapter supports (the WebGPU defaults are small: 128 MiB per
# storage binding, 256 invocations and 16 KiB of workgroup memory per workgroup)
_RAISED_LIMITS = (
    "max-buffer-size", "max-storage-buffer-binding-size", "max-uniform-buffer-binding-size",
    "max-storage-buffers-per-shader-stage", "max-uniform-buffers-per-shader-stage",
    "max-bind-groups", "max-bindings-per-bind-group",
    "max-compute-workgroup-storage-size", "max-compute-invocations-per-workgroup",
    "max-compute-workgroup-size-x", "max-compute-workgroup-size-y", "max-compute-workgroup-size-z",
    "max-compute-workgroups-per-dimension",
)


class HwUnavailable(HwError):
    """No package or no adapter for a backend; ``str()`` says which and how to install."""


# wgpu-native falls back to OpenGL(ES) (llvmpipe's GL on a machine without a Vulkan driver):
# another compiler path (naga to GLSL) that is not what the profiles claim; used only on request
_SECONDARY_BACKENDS = ("OpenGL", "OpenGLES", "D3D11")

_lock = threading.RLock()
_modules: dict[str, object] = {}
_adapters: dict[str, object] = {}
_devices: dict[tuple, object] = {}
_failures: dict[str, str] = {}


def check_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise InvalidArgument(f"unknown WebGPU backend {backend!r}: expected one of {BACKENDS}")
    return backend


def package_installed(backend: str) -> bool:
    """Whether the binding's package can be found (without importing it)."""
    try:
        return importlib.util.find_spec(_PACKAGES[check_backend(backend)]) is not None
    except (ImportError, ValueError):
        return False


def load(backend: str):
    """The binding's module (``wgpu`` or ``wgpudawn``), configured; raises HwUnavailable."""
    check_backend(backend)
    with _lock:
        if backend in _modules:
            return _modules[backend]
        pkg = _PACKAGES[backend]
        try:
            mod = importlib.import_module(pkg)
        except Exception as e:  # ImportError, or a native library that fails to load
            raise HwUnavailable(f"{backend}: cannot import the package {pkg!r} ({type(e).__name__}: "
                                f"{e}); {PIP_HINT[backend]}") from None
        if backend == "dawn":
            toggles = ["allow_unsafe_apis"] + [t for t in os.environ.get("EMU_DAWN_TOGGLES", "").split(",") if t]
            try:
                extras = importlib.import_module("wgpudawn.backends.dawn.extras")
                extras.set_instance_extras(backends=["Vulkan"], enable_toggles=toggles)
            except Exception:
                # the instance exists already (someone requested an adapter first): use it as it is
                pass
        _modules[backend] = mod
        return mod


def _adapter_rank(info: dict) -> tuple:
    backend_rank = 0 if info.get("backend_type") == "Vulkan" else 1
    type_rank = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3}.get(info.get("adapter_type"), 4)
    return (backend_rank, type_rank)


def _select_adapter(backend: str):
    """Enumerate the backend's adapters and pick one (see the module doc); raises HwUnavailable."""
    mod = load(backend)
    try:
        adapters = list(mod.gpu.enumerate_adapters_sync())
    except Exception as e:
        adapters, err = [], f"{type(e).__name__}: {e}"
    else:
        err = ""
    want = os.environ.get("EMU_HW_ADAPTER", "").strip().lower()
    skipped = []
    if want:
        adapters = [a for a in adapters if any(want in str(a.info.get(k, "")).lower()
                                               for k in ("device", "vendor", "description", "backend_type"))]
    else:
        skipped = [a for a in adapters if a.info.get("backend_type") in _SECONDARY_BACKENDS]
        adapters = [a for a in adapters if a.info.get("backend_type") not in _SECONDARY_BACKENDS]
    if not adapters:
        others = "; ".join(f"{a.info.get('device', '?')} ({a.info.get('backend_type')})" for a in skipped)
        raise HwUnavailable(f"{backend}: no WebGPU adapter"
                            + (f" matching EMU_HW_ADAPTER={want!r}" if want else "")
                            + (f" ({err})" if err else "")
                            + (f" on Vulkan/Metal/D3D12, only {others} (EMU_HW_ADAPTER=opengl uses it)"
                               if skipped else "")
                            + f"; {INSTALL_HINT}")
    return min(adapters, key=lambda a: _adapter_rank(dict(a.info)))


def get_adapter(backend: str):
    """The chosen adapter of a backend, for its info (cached); raises HwUnavailable.

    Devices are not requested from it: Dawn's adapters are "consumed" by their first device,
    so ``get_device`` enumerates afresh for each device it creates."""
    load(backend)
    with _lock:
        if backend in _adapters:
            return _adapters[backend]
        if backend in _failures:
            raise HwUnavailable(_failures[backend])
        try:
            adapter = _select_adapter(backend)
        except HwUnavailable as e:
            _failures[backend] = str(e)
            raise
        _adapters[backend] = adapter
        return adapter


def _raw_subgroup_sizes(backend: str, adapter) -> tuple[int, int] | None:
    """(min, max) subgroup size from the C struct, where the implementation fills it."""
    try:
        if backend == "wgpu":
            from wgpu.backends.wgpu_native._api import ffi, libf
        else:
            from wgpudawn.backends.dawn._api import ffi, libf
        c_info = ffi.new("WGPUAdapterInfo *")
        libf.wgpuAdapterGetInfo(adapter._internal, c_info)
        lo, hi = int(c_info.subgroupMinSize), int(c_info.subgroupMaxSize)
        return (lo, hi) if lo and hi else None
    except Exception:
        return None


def adapter_info(backend: str) -> dict:
    """A plain dict describing the adapter: wgpu-py's ``adapter.info`` (without its misspelled
    subgroup keys), the binding, its version, the features and limits; raises HwUnavailable."""
    adapter = get_adapter(backend)
    mod = load(backend)
    info = {k: v for k, v in dict(adapter.info).items() if not k.startswith("stackgroup_")}
    sizes = _raw_subgroup_sizes(backend, adapter)
    if sizes:
        info["subgroup_min_size"], info["subgroup_max_size"] = sizes
    info["binding"] = backend
    info["binding_version"] = getattr(mod, "__version__", "?")
    info["features"] = sorted(str(f) for f in adapter.features)
    info["limits"] = dict(adapter.limits)
    info["quirks"] = known_quirks(backend, info)
    return info


# Known deviations of an adapter from the WebGPU spec, by name: what a diff against the emulator
# must expect. Measured on lavapipe (Mesa 25.0.7), see tests/hw/test_runner.py.
QUIRKS = {
    "workgroup-memory-not-zeroed": (
        "var<workgroup> memory is not zero-initialised at the start of a workgroup: it holds what "
        "an earlier workgroup left (wgpu-native leaves the zeroing to Vulkan's "
        "shaderZeroInitializeWorkgroupMemory, which lavapipe advertises but does not honour; "
        "Dawn zeroes it itself)"),
}


def known_quirks(backend: str, info: dict) -> list[str]:
    quirks = []
    if backend == "wgpu" and info.get("vendor") == "llvmpipe" and info.get("backend_type") == "Vulkan":
        quirks.append("workgroup-memory-not-zeroed")
    return quirks


def available(backend: str) -> tuple[dict | None, str]:
    """(adapter info, reason) without raising: info is None when the backend cannot run."""
    try:
        check_backend(backend)
        info = adapter_info(backend)
    except HwUnavailable as e:
        return None, str(e)
    except Exception as e:  # a binding that crashes in a way we did not foresee
        return None, f"{backend}: {type(e).__name__}: {e}"
    return info, f"{backend}: {info.get('device', '?')} ({info.get('backend_type', '?')}, {info.get('description', '')})"


def feature_name(backend: str, name: str) -> str:
    return _FEATURE_ALIASES[backend].get(name, name)


def features_for_source(source: str) -> set[str]:
    """Device features that a shader needs (spec names): those of its WGSL ``enable`` directives,
    and naga's for its 64-bit types (they have no directive: wgpu's SHADER_F64 / SHADER_INT64)."""
    need = set()
    code = re.sub(r"//[^\n]*", "", source)
    if re.search(r"\bf64\b|[0-9.]lf\b", code):
        need.add("shader-f64")
    if re.search(r"\b[iu]64\b|[0-9]l[iu]\b", code):
        need.add("shader-int64")
    for m in re.finditer(r"^\s*enable\s+([^;]+);", source, re.M):
        for ext in (e.strip() for e in m.group(1).split(",")):
            if ext == "f16":
                need.add("shader-f16")
            elif ext == "subgroups":
                need.add("subgroups")
            elif ext == "chromium_experimental_subgroup_matrix":
                need.add("chromium-experimental-subgroup-matrix")
    return need


def adapt_source(backend: str, source: str) -> str:
    """The WGSL text as this backend's compiler wants it (see the module doc)."""
    if backend == "wgpu":
        def drop(m):
            exts = [e.strip() for e in m.group(2).split(",") if e.strip() and e.strip() != "subgroups"]
            return f"{m.group(1)}enable {', '.join(exts)};" if exts else m.group(1)
        source = re.sub(r"^(\s*)enable\s+([^;]+);", drop, source, flags=re.M)
    return source


def get_device(backend: str, features=()):
    """(module, adapter, device) for a backend and a set of features (spec or binding names),
    cached per set; limits raised to the adapter's. Raises HwUnavailable / HwError."""
    mod = load(backend)
    adapter = get_adapter(backend)
    feats = tuple(sorted({feature_name(backend, f) for f in features}))
    key = (backend, feats)
    with _lock:
        dev = _devices.get(key)
        if dev is not None:
            return mod, adapter, dev
        have = {str(f) for f in adapter.features}
        missing = [f for f in feats if f not in have]
        if missing:
            raise HwError(f"{backend}: the adapter {adapter.info.get('device', '?')!r} lacks the "
                          f"feature(s) {missing}; it has {sorted(have)}")
        limits = {}
        for k in _RAISED_LIMITS:
            try:
                limits[k] = adapter.limits[k]
            except Exception:
                pass
        try:
            dev = _select_adapter(backend).request_device_sync(required_features=list(feats),
                                                               required_limits=limits)
        except Exception as e:
            raise HwError(f"{backend}: could not create a device with features {list(feats)}: {e}") from None
        _devices[key] = dev
        return mod, adapter, dev


def forget_device(backend: str, features=()):
    """Drop a cached device (after a device loss), so the next call creates a new one."""
    feats = tuple(sorted({feature_name(backend, f) for f in features}))
    with _lock:
        _devices.pop((backend, feats), None)


def wait_idle(backend: str, device) -> None:
    """Block until all work submitted to the device's queue has finished.

    wgpu-py 0.32's ``queue.on_submitted_work_done_sync`` is broken on wgpu-native (its cffi
    callback lacks the message argument: "initializer for ctype ... must be a pointer to same
    type"), so for ``wgpu`` this polls the device with wait=true (``wgpuDevicePoll``), which
    returns when the queue is empty. Dawn's ``on_submitted_work_done_sync`` works."""
    if backend == "wgpu" and hasattr(device, "_poll_wait"):
        device._poll_wait()
        return
    try:
        device.queue.on_submitted_work_done_sync()
    except TypeError:
        # a binding whose callback is broken: a read-back waits for the queue as well
        mod = load(backend)
        buf = device.create_buffer(size=4, usage=mod.BufferUsage.COPY_SRC | mod.BufferUsage.STORAGE)
        device.queue.read_buffer(buf)
        buf.destroy()
