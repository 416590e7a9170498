"""Run one WGSL compute shader on a real WebGPU adapter and return its buffers.

This is the one entry to real hardware for the tests, the benchmarks and ``emu diff``::

    out = run_on_adapter(src, dispatch=(n // 256, 1, 1),
                         buffers={(0, 0): a, (0, 1): b, (0, 2): np.zeros_like(a)})
    c = np.frombuffer(out[(0, 2)], dtype=np.float32)

Buffers are bound by (group, binding). Whether a binding is a storage buffer (read-only or
read_write) or a uniform buffer is read from its declaration in the WGSL source
(``@group(G) @binding(B) var<storage, read_write> name : T;``). The bind group layouts are
built from those declarations rather than with ``layout="auto"``: an auto layout leaves out every
binding the entry point does not use, so a buffer given for such a binding (common in a file
with several entry points) would make bind-group creation fail; an explicit layout is otherwise
the same. The binding-specific parts (wgpu-py on wgpu-native, or on Dawn) live in
``emu.hw.adapters``.
"""
from __future__ import annotations

import re
import statistics
import time
from dataclasses import dataclass

import numpy as np

from . import adapters
from .adapters import HwError, HwUnavailable  # noqa: F401  (re-exported for callers)

__all__ = ["run_on_adapter", "timed_dispatch", "available_adapter", "parse_bindings",
           "compute_entry_points", "Binding", "HwTexture", "HwError", "HwUnavailable"]


# ---------------------------------------------------------------------------------------------
# Reading the WGSL source (a few regexes; the real front end is emu/frontend/wgsl)

@dataclass(frozen=True)
class Binding:
    group: int
    binding: int
    name: str
    space: str       # "storage", "uniform", or "handle" (textures, samplers)
    access: str      # "read", "read_write" for storage; "read" for uniform; "" for handles
    type: str        # the declared type, as written

    @property
    def layout_type(self) -> str:
        if self.space == "uniform":
            return "uniform"
        return "storage" if self.access == "read_write" else "read-only-storage"


@dataclass(frozen=True)
class HwTexture:
    """A texture to create on the adapter: `levels[l]` is mip level l's texels, tightly packed
    (rows of width * texel bytes, then rows_per_image = height, then the next layer or slice)."""
    format: str
    size: tuple              # (width, height, depth or array layers)
    levels: tuple            # bytes per level
    dimension: str = "2d"    # the texture's: 1d 2d 3d
    view: str | None = None  # the view's dimension (2d, 2d-array, cube, cube-array, 3d, 1d): the shader's


def to_emu(dev, t: HwTexture):
    """The same texture on the emulator (an emu.Device): levels written, viewed as the shader's."""
    tex = dev.create_texture(t.size, t.format, dimension=t.dimension, mip_level_count=len(t.levels))
    for lv, data in enumerate(t.levels):
        dev.write_texture(tex, np.frombuffer(data, np.uint8), level=lv)
    return tex.create_view(dimension=t.view) if t.view else tex


def from_emu(tex, view: str | None = None) -> HwTexture:
    """An emulator texture (emu/memory/textures.py) as the texture to create on an adapter."""
    return HwTexture(tex.format.name, tex.size, tuple(np.ascontiguousarray(lv).tobytes() for lv in tex.levels),
                     tex.dimension, view)


_TEX_RE = re.compile(r"texture_(storage_|depth_|multisampled_|depth_multisampled_)?"
                     r"(1d|2d_array|2d|3d|cube_array|cube)\s*(?:<\s*([^>]*)>)?")


def texture_layout(typ: str, fmt: str, filterable: bool) -> tuple[str, dict]:
    """The bind group layout entry ('texture' or 'storage_texture', its fields) of a WGSL texture type."""
    m = _TEX_RE.fullmatch(typ.strip())
    if m is None:
        raise HwError(f"'{typ}' is not a texture type this runner binds")
    kind, dim, args = m.group(1) or "", m.group(2), [a.strip() for a in (m.group(3) or "").split(",") if a.strip()]
    view = dim.replace("_", "-")
    if kind == "storage_":
        access = {"write": "write-only", "read": "read-only", "read_write": "read-write"}[args[1]]
        return "storage_texture", {"access": access, "format": args[0], "view_dimension": view}
    if kind.startswith("depth"):
        sample = "depth"
    else:
        sample = {"f32": "float" if filterable else "unfilterable-float", "i32": "sint", "u32": "uint"}[args[0]]
    return "texture", {"sample_type": sample, "view_dimension": view, "multisampled": "multisampled" in kind}


def _strip_comments(src: str) -> str:
    out, i, n, depth = [], 0, len(src), 0
    while i < n:
        two = src[i:i + 2]
        if depth == 0 and two == "//":
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif two == "/*":
            depth, i = depth + 1, i + 2
        elif depth and two == "*/":
            depth, i = depth - 1, i + 2
            out.append(" ")
        elif depth:
            i += 1
        else:
            out.append(src[i])
            i += 1
    return "".join(out)


_ATTR = r"@\s*[A-Za-z_]\w*\s*(?:\((?:[^()]|\([^()]*\))*\))?\s*"
_VAR_RE = re.compile(rf"((?:{_ATTR})+)var\s*(?:<([^>]*)>)?\s*([A-Za-z_]\w*)\s*:\s*([^;=]+)[;=]")
_FN_RE = re.compile(rf"((?:{_ATTR})+)fn\s+([A-Za-z_]\w*)")


def _int_literal(text: str) -> int:
    return int(re.sub(r"[iu]$", "", text.strip()), 0)


def parse_bindings(source: str) -> dict[tuple[int, int], Binding]:
    """Every ``@group @binding var`` declaration of a WGSL source, by (group, binding)."""
    found = {}
    for m in _VAR_RE.finditer(_strip_comments(source)):
        attrs, space_access, name, typ = m.groups()
        g = re.search(r"@\s*group\s*\(\s*([^)]+)\)", attrs)
        b = re.search(r"@\s*binding\s*\(\s*([^)]+)\)", attrs)
        if not (g and b):
            continue
        try:
            key = (_int_literal(g.group(1)), _int_literal(b.group(1)))
        except ValueError:
            raise HwError(f"binding of '{name}': @group/@binding must be integer literals here "
                          f"(got @group({g.group(1)}) @binding({b.group(1)}))") from None
        parts = [p.strip() for p in (space_access or "").split(",") if p.strip()]
        if not parts:
            space, access = "handle", ""
        elif parts[0] == "uniform":
            space, access = "uniform", "read"
        elif parts[0] == "storage":
            space, access = "storage", (parts[1] if len(parts) > 1 else "read")
        else:
            space, access = parts[0], (parts[1] if len(parts) > 1 else "")
        found[key] = Binding(key[0], key[1], name, space, access, typ.strip())
    return found


def compute_entry_points(source: str) -> list[str]:
    """The names of the ``@compute`` functions of a WGSL source, in order."""
    return [m.group(2) for m in _FN_RE.finditer(_strip_comments(source))
            if re.search(r"@\s*compute\b", m.group(1))]


# ---------------------------------------------------------------------------------------------
# Host-side preparation, shared by run_on_adapter and timed_dispatch

def _as_bytes(value, key) -> bytes:
    if isinstance(value, (bool, np.bool_)):
        raise HwError(f"buffer {key}: expected an array, bytes or a byte count, got a bool")
    if isinstance(value, (int, np.integer)):
        if value < 0:
            raise HwError(f"buffer {key}: a negative size ({value})")
        return bytes(int(value))
    if isinstance(value, np.ndarray):
        return np.ascontiguousarray(value).tobytes()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise HwError(f"buffer {key}: expected a numpy array, bytes or a byte count, "
                  f"got {type(value).__name__}")


def _dispatch3(dispatch) -> tuple[int, int, int]:
    d = (dispatch,) if isinstance(dispatch, (int, np.integer)) else tuple(dispatch)
    if not 1 <= len(d) <= 3 or any(int(x) < 0 for x in d):
        raise HwError(f"dispatch must be 1 to 3 non-negative workgroup counts, got {dispatch!r}")
    return tuple(int(x) for x in d) + (1,) * (3 - len(d))


def _constants(overrides) -> dict[str, float]:
    out = {}
    for k, v in (overrides or {}).items():
        if isinstance(v, (bool, np.bool_)):
            out[str(k)] = 1.0 if v else 0.0
        elif isinstance(v, (int, float, np.integer, np.floating)):
            out[str(k)] = float(v)
        else:
            raise HwError(f"override {k!r}: expected a number or a bool, got {type(v).__name__}")
    return out


def _round_up(n: int, m: int) -> int:
    return max(m, (n + m - 1) // m * m)


@dataclass
class _Prepared:
    backend: str
    mod: object
    device: object
    pipeline: object
    bind_groups: list
    buffers: dict          # key -> GPUBuffer
    sizes: dict            # key -> the byte length the caller gave (unpadded)
    outputs: list
    dispatch: tuple
    textures: dict = None  # key -> (the adapter's texture, HwTexture)

    def encode(self):
        try:
            enc = self.device.create_command_encoder()
            cp = enc.begin_compute_pass()
            cp.set_pipeline(self.pipeline)
            for i, bg in enumerate(self.bind_groups):
                cp.set_bind_group(i, bg)
            cp.dispatch_workgroups(*self.dispatch)
            cp.end()
            return enc.finish()
        except Exception as e:
            raise HwError(f"{self.backend}: the dispatch {self.dispatch} was refused:\n{e}") from None

    def read_outputs(self) -> dict[tuple[int, int], bytes]:
        out = {}
        for key in self.outputs:
            if key in (self.textures or {}):
                out[key] = self.read_texture(*self.textures[key])
                continue
            data = self.device.queue.read_buffer(self.buffers[key])
            out[key] = bytes(memoryview(data).cast("B")[: self.sizes[key]])
        return out

    def read_texture(self, tex, t: HwTexture) -> bytes:
        """Level 0's texels, tightly packed, through a buffer copy (rows padded to 256 bytes there)."""
        w, h, d = _extent(t, 0)
        row = w * _texel_bytes(t.format)
        pitch = _round_up(row, 256)
        BU = self.mod.BufferUsage
        buf = self.device.create_buffer(size=pitch * h * d, usage=BU.COPY_DST | BU.COPY_SRC)
        enc = self.device.create_command_encoder()
        enc.copy_texture_to_buffer({"texture": tex, "mip_level": 0, "origin": (0, 0, 0)},
                                   {"buffer": buf, "offset": 0, "bytes_per_row": pitch, "rows_per_image": h},
                                   (w, h, d))
        _submit_and_wait(self, enc.finish())
        raw = np.frombuffer(bytes(memoryview(self.device.queue.read_buffer(buf)).cast("B")), np.uint8)
        return raw.reshape(d * h, pitch)[:, :row].tobytes()

    def release(self):
        for b in self.buffers.values():
            try:
                b.destroy()
            except Exception:
                pass


def _who(backend: str, adapter) -> str:
    try:
        return f"{backend} on {adapter.info.get('device', '?')}"
    except Exception:
        return backend


def _prepare(source, entry, dispatch, buffers, outputs, overrides, backend, features, textures=None,
             samplers=None) -> _Prepared:
    adapters.check_backend(backend)
    if not isinstance(source, str):
        raise HwError(f"source must be WGSL text (str), got {type(source).__name__}")
    decls = parse_bindings(source)
    buffers = dict(buffers or {})
    for key in buffers:
        if not (isinstance(key, tuple) and len(key) == 2):
            raise HwError(f"buffers are keyed by (group, binding), got {key!r}")
        if key not in decls:
            have = ", ".join(f"{k}: {d.name}" for k, d in sorted(decls.items())) or "none"
            raise HwError(f"buffer {key}: the shader declares no @group({key[0]}) @binding({key[1]}) "
                          f"variable (declared: {have})")
        if decls[key].space not in ("storage", "uniform"):
            raise HwError(f"buffer {key}: '{decls[key].name}' is a {decls[key].space} binding "
                          f"({decls[key].type}); give textures in textures= and samplers in samplers=")
    textures, samplers = dict(textures or {}), dict(samplers or {})
    for key in list(textures) + list(samplers):
        if key not in decls or decls[key].space != "handle":
            raise HwError(f"texture or sampler {key}: the shader declares no texture or sampler there")
    if outputs is None:
        outputs = sorted(k for k in buffers if decls[k].space == "storage" and decls[k].access == "read_write")
        outputs += sorted(k for k in textures if "storage" in decls[k].type and "read>" not in decls[k].type.replace(" ", ""))
    else:
        outputs = [tuple(k) for k in outputs]
        for k in outputs:
            if k not in buffers and k not in textures:
                raise HwError(f"output {k}: no buffer or texture was given for it")
    entries_found = compute_entry_points(source)
    if entry is None:
        if len(entries_found) != 1:
            raise HwError(f"the shader has {len(entries_found)} @compute entry points "
                          f"({', '.join(entries_found) or 'none found'}): say which with entry=")
        entry = entries_found[0]
    constants = _constants(overrides)
    dispatch = _dispatch3(dispatch)

    feats = set(features) | adapters.features_for_source(source)
    mod, adapter, device = adapters.get_device(backend, feats)
    who = _who(backend, adapter)
    code = adapters.adapt_source(backend, source)
    try:
        module = device.create_shader_module(code=code)
    except Exception as e:
        raise HwError(f"{who} rejected the shader:\n{e}") from None

    BU = mod.BufferUsage
    gpu_buffers, sizes = {}, {}
    try:
        for key, value in sorted(buffers.items()):
            data = _as_bytes(value, key)
            sizes[key] = len(data)
            if decls[key].space == "uniform":
                usage, size = BU.UNIFORM | BU.COPY_DST | BU.COPY_SRC, _round_up(len(data), 16)
            else:
                usage, size = BU.STORAGE | BU.COPY_DST | BU.COPY_SRC, _round_up(len(data), 4)
            padded = data + bytes(size - len(data))
            gpu_buffers[key] = device.create_buffer_with_data(data=padded, usage=usage)
    except HwError:
        raise
    except Exception as e:
        raise HwError(f"{who}: could not create the buffers: {e}") from None

    handles, entries = {}, {}
    try:
        for key, t in sorted(textures.items()):
            handles[key], entries[key] = _make_texture(mod, device, t, decls[key], samplers)
        for key, desc in sorted(samplers.items()):
            handles[key] = device.create_sampler(**desc)
            kind = "comparison" if desc.get("compare") else \
                "filtering" if "linear" in (desc.get("mag_filter"), desc.get("min_filter"), desc.get("mipmap_filter")) \
                else "non-filtering"
            entries[key] = ("sampler", {"type": kind})
    except HwError:
        raise
    except Exception as e:
        raise HwError(f"{who}: could not create the textures and samplers: {e}") from None
    bound = sorted(set(buffers) | set(handles))
    n_groups = max([k[0] for k in bound] + [-1]) + 1
    SS = mod.ShaderStage
    try:
        layouts = [device.create_bind_group_layout(entries=[
            {"binding": k[1], "visibility": SS.COMPUTE, entries[k][0]: entries[k][1]} if k in entries else
            {"binding": k[1], "visibility": SS.COMPUTE, "buffer": {"type": decls[k].layout_type}}
            for k in bound if k[0] == g]) for g in range(n_groups)]
        pipeline_layout = device.create_pipeline_layout(bind_group_layouts=layouts)
    except Exception as e:
        raise HwError(f"{who}: could not create the bind group layouts: {e}") from None
    stage = {"module": module, "entry_point": entry}
    if constants:
        stage["constants"] = constants
    try:
        pipeline = device.create_compute_pipeline(layout=pipeline_layout, compute=stage)
    except Exception as e:
        missing = [f"{k}: {d.name}" for k, d in sorted(decls.items())
                   if k not in buffers and d.space in ("storage", "uniform")]
        hint = (f"\n(no buffer was given for the declared binding(s) {', '.join(missing)}: "
                f"give one for each binding that entry '{entry}' uses)" if missing else "")
        raise HwError(f"{who} could not create the compute pipeline for entry '{entry}':\n{e}{hint}") from None
    try:
        bind_groups = [device.create_bind_group(layout=layouts[g], entries=[
            {"binding": k[1], "resource": _view(handles[k], textures[k]) if k in textures else handles[k]}
            if k in handles else
            {"binding": k[1], "resource": {"buffer": gpu_buffers[k], "offset": 0, "size": gpu_buffers[k].size}}
            for k in bound if k[0] == g]) for g in range(n_groups)]
    except Exception as e:
        raise HwError(f"{who}: could not create the bind groups: {e}") from None
    return _Prepared(backend, mod, device, pipeline, bind_groups, gpu_buffers, sizes, outputs, dispatch,
                     {k: (handles[k], textures[k]) for k in textures})


def _texel_bytes(fmt: str) -> int:
    from ..numerics.texels import FORMATS
    if fmt not in FORMATS:
        raise HwError(f"texture format '{fmt}' is not one emu knows")
    return FORMATS[fmt].bytes


def _make_texture(mod, device, t: HwTexture, decl, samplers):
    """The adapter's texture for `t`, its levels written; and its bind group layout entry."""
    from ..numerics.texels import FORMATS
    TU = mod.TextureUsage
    storage = "storage" in decl.type
    filterable = FORMATS[t.format].filterable
    kind, entry = texture_layout(decl.type, t.format, filterable)
    usage = TU.COPY_DST | TU.COPY_SRC | (TU.STORAGE_BINDING if storage else TU.TEXTURE_BINDING)
    tex = device.create_texture(size=tuple(t.size), format=t.format, usage=usage, dimension=t.dimension,
                                mip_level_count=len(t.levels))
    bpp = _texel_bytes(t.format)
    for lv, data in enumerate(t.levels):
        w, h, d = _extent(t, lv)
        if len(data) != w * h * d * bpp:
            raise HwError(f"texture level {lv}: {len(data)} bytes for {w}x{h}x{d} {t.format} texels")
        device.queue.write_texture({"texture": tex, "mip_level": lv, "origin": (0, 0, 0)}, data,
                                   {"offset": 0, "bytes_per_row": w * bpp, "rows_per_image": h}, (w, h, d))
    return tex, (kind, entry)


def _extent(t: HwTexture, level: int) -> tuple[int, int, int]:
    w, h, d = t.size
    return max(1, w >> level), max(1, h >> level), (max(1, d >> level) if t.dimension == "3d" else d)


def _view(tex, t: HwTexture):
    return tex.create_view(dimension=t.view) if t.view else tex.create_view()


def _submit_and_wait(p: _Prepared, command_buffer) -> None:
    try:
        p.device.queue.submit([command_buffer])
        adapters.wait_idle(p.backend, p.device)
    except Exception as e:
        raise HwError(f"{p.backend}: the dispatch {p.dispatch} failed: {e}") from None


# ---------------------------------------------------------------------------------------------
# The API

def run_on_adapter(source: str, *, entry: str | None = None, dispatch=(1, 1, 1),
                   buffers: dict | None = None, outputs: list | None = None,
                   overrides: dict | None = None, backend: str = "wgpu",
                   features=(), textures: dict | None = None,
                   samplers: dict | None = None) -> dict[tuple[int, int], bytes]:
    """Run ``entry`` of a WGSL compute shader once on a real adapter; return buffers' bytes.

    source     WGSL text (either dialect; ``enable subgroups;`` is handled per backend).
    entry      the @compute function; may be left out when there is exactly one.
    dispatch   workgroup counts (x, y, z); an int or a shorter tuple is padded with 1s.
    buffers    {(group, binding): numpy array | bytes | int}: the initial contents of each bound
               buffer (an int gives that many zero bytes). Storage or uniform comes from the
               source's declaration; sizes are padded to 4 bytes (uniform: 16) with zeros.
    outputs    the (group, binding)s to read back; default: every read_write storage binding.
    overrides  pipeline-overridable constants, {name or id: number or bool}.
    backend    "wgpu" (wgpu-py on wgpu-native) or "dawn" (wgpudawn).
    features   extra device features (spec names, e.g. "subgroups", "shader-f16"); those that the
               source's ``enable`` directives need are added by themselves.
    textures   {(group, binding): HwTexture}: textures to create, fill and bind (a storage texture
               that the shader may write is an output: its level 0 comes back, tightly packed).
    samplers   {(group, binding): wgpu's create_sampler keywords}.

    Returns {(group, binding): bytes}, each exactly as long as the data that was given for it.
    Raises HwUnavailable when the backend has no package or adapter, HwError when the
    implementation refuses the shader or the request (its message is included).
    """
    p = _prepare(source, entry, dispatch, buffers, outputs, overrides, backend, features, textures, samplers)
    try:
        _submit_and_wait(p, p.encode())
        return p.read_outputs()
    finally:
        p.release()


def timed_dispatch(source: str, *, entry: str | None = None, dispatch=(1, 1, 1),
                   buffers: dict | None = None, outputs: list | None = None,
                   overrides: dict | None = None, backend: str = "wgpu", features=(),
                   runs: int = 5, warmup: int = 1) -> tuple[dict[tuple[int, int], bytes], float]:
    """Like ``run_on_adapter``, and time it: (outputs, median seconds of ``runs`` dispatches).

    The shader module, pipeline, buffers and bind groups are created once; each timed run
    encodes one dispatch (not timed), then times ``queue.submit`` plus waiting until the queue
    is idle. The outputs are read after the first (warm-up) dispatch, so they are what
    ``run_on_adapter`` returns even for shaders that update their buffers in place; the buffers
    are not reset between runs. ``warmup`` (at least 1) dispatches run before timing starts.
    """
    if runs < 1:
        raise HwError(f"timed_dispatch: runs must be at least 1, got {runs}")
    p = _prepare(source, entry, dispatch, buffers, outputs, overrides, backend, features)
    try:
        _submit_and_wait(p, p.encode())
        result = p.read_outputs()
        for _ in range(max(0, warmup - 1)):
            _submit_and_wait(p, p.encode())
        times = []
        for _ in range(runs):
            cb = p.encode()
            t0 = time.perf_counter()
            _submit_and_wait(p, cb)
            times.append(time.perf_counter() - t0)
        return result, statistics.median(times)
    finally:
        p.release()


def available_adapter(backend: str = "wgpu") -> tuple[dict | None, str]:
    """(adapter info dict, reason) for a backend, never raising; info is None when it cannot
    run, and the reason then says why and what to install."""
    return adapters.available(backend)
