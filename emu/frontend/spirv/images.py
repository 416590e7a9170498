"""SPIR-V images and samplers -> the IR's `texture` op (the one the WGSL front end lowers
textureLoad/Store/SampleLevel/... to), so the executor, emu/memory/textures.py and the texture
numerics of emu/numerics run Vulkan compute shaders' images as they run WebGPU's textures.

Mapping:
- OpTypeImage Sampled=1 (GLSL texture2D / sampler2D) -> texture_<dim><f32|i32|u32>; one that a
  Dref instruction reads -> texture_depth_<dim> (SPIR-V's Depth operand is only a hint); MS ->
  texture_multisampled_2d. Sampled=2 (image2D) -> texture_storage_<dim><format, access>: access
  from NonReadable / NonWritable, format from the Image Format (Unknown: the bound texture's,
  StorageImageRead/WriteWithoutFormat).
- A UniformConstant variable of an image or a sampler is a handle global at its DescriptorSet and
  Binding; a combined image sampler (sampler2D) is two: the texture NAME and the sampler
  NAME_sampler, at one (group, binding) (the host binds a texture and a sampler there:
  --texture G:B=... --sampler G:B=...). A sampler that a Dref instruction uses is a comparison one.
- OpImageFetch / OpImageRead -> load, OpImageWrite -> store, OpImageSampleExplicitLod -> sample_level
  (Lod) or sample_grad (Grad), OpImageSampleDrefExplicitLod -> sample_compare_level (its Lod unless 0),
  OpImageGather -> gather, OpImageDrefGather -> gather_compare, OpImageQuerySize(Lod) -> dimensions
  (+ num_layers for arrayed images), OpImageQueryLevels -> num_levels, OpImageQuerySamples ->
  num_samples.

Vulkan's rules where they differ from WebGPU's: a sampled array layer is the coordinate rounded to
nearest even, then clamped (the IR's array index, clamped by the executor); a cube array's layer
count is of cubes; integer coordinates are signed or unsigned as the shader gives them;
OpImageQuerySize returns the array layers as its last component. Out-of-bounds OpImageFetch /
OpImageRead (coordinate, layer, level or sample) are undefined in Vulkan without robustness; emu
follows robustImageAccess2 (which emu diff --backend vulkan enables where offered, and lavapipe
has): the zero texel, 1 in the components the format lacks; an out-of-bounds OpImageWrite is
dropped. Each site is reported as WebGPU's are (or stops the run with --bounds strict).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...isa.ir import Global
from ...isa.types import (F32, I32, U32, SamplerType, ScalarType, TextureType, VectorType,
                          scalar_of, width)
from ...numerics.texels import FORMATS
from ..capabilities import SPIRV_IMAGE_CAPABILITIES as CAPABILITIES  # noqa: F401  (module.py allows them beside its own)

DREF = {"OpImageSampleDrefExplicitLod", "OpImageSampleDrefImplicitLod", "OpImageDrefGather",
        "OpImageSampleProjDrefExplicitLod", "OpImageSampleProjDrefImplicitLod"}
IMPLICIT = {"OpImageSampleImplicitLod", "OpImageSampleDrefImplicitLod", "OpImageSampleProjImplicitLod",
            "OpImageSampleProjDrefImplicitLod", "OpImageQueryLod"}
IMPLICIT_HINT = ("compute shaders have no derivatives (SPIR-V allows implicit LOD there only with the "
                 "DerivativeGroup*KHR/NV execution modes, which emu does not model): give the level, "
                 "textureLod(s, uv, 0.0) or textureGrad(s, uv, dPdx, dPdy)")


def _format_names() -> dict:
    """SPIR-V Image Format -> the texel format of emu/numerics/texels.py."""
    out = {"R11fG11fB10f": "rg11b10ufloat", "Rgb10A2": "rgb10a2unorm", "Rgb10a2ui": "rgb10a2uint"}
    for ch in ("Rgba", "Rg", "R"):
        for bits in (8, 16, 32):
            for suffix, kind in (("f", "float"), ("", "unorm"), ("Snorm", "snorm"), ("i", "sint"), ("ui", "uint")):
                out[f"{ch}{bits}{suffix}"] = f"{ch.lower()}{bits}{kind}"
    return {k: v for k, v in out.items() if v in FORMATS}


SPIRV_FORMATS = _format_names()


@dataclass(frozen=True)
class ImageDesc:
    """An OpTypeImage's operands."""
    sampled_type: ScalarType
    dim: str
    depth: int
    arrayed: bool
    ms: bool
    sampled: int
    format: str


@dataclass(frozen=True)
class SamplerDesc:
    pass


@dataclass(frozen=True)
class SampledImageDesc:
    image: ImageDesc


@dataclass(frozen=True)
class HandleArray:
    """An array of images or samplers (a descriptor array): refused at its variable."""
    inst: object


HANDLE_DESCS = (ImageDesc, SamplerDesc, SampledImageDesc)


def is_handle_desc(t) -> bool:
    return isinstance(t, HANDLE_DESCS)


def handle_type(info, i):
    """OpTypeImage / OpTypeSampler / OpTypeSampledImage -> their description (the IR type is
    chosen per variable: see declare)."""
    o = i.ops
    if i.opname == "OpTypeSampler":
        return SamplerDesc()
    if i.opname == "OpTypeSampledImage":
        img = info.types.get(o[0])
        if not isinstance(img, ImageDesc):
            info.fail(i, "OpTypeSampledImage needs an image type")
        return SampledImageDesc(img)
    s = info.type(o[0], i)
    dim = o[1]
    if dim in ("Buffer",):
        info.fail(i, "texel buffers (samplerBuffer / imageBuffer, Dim Buffer) are not supported by emu",
                  hint="read and write the data through a storage buffer")
    if dim not in ("1D", "2D", "3D", "Cube"):
        info.fail(i, f"images of Dim {dim} are not supported in compute shaders (1D, 2D, 3D and Cube are)")
    if not isinstance(s, ScalarType) or s not in (F32, I32, U32):
        info.fail(i, f"an image of {s} texels: emu's images hold 32-bit float, int or uint texels",
                  hint="declare it with float, int or uint components (image2D, iimage2D, uimage2D)")
    return ImageDesc(s, dim, o[2], bool(o[3]), bool(o[4]), o[5], o[6])


def _texture_type(info, var, d: ImageDesc, compare: bool) -> TextureType:
    """The IR type of an image variable (`compare`: a Dref instruction reads it)."""
    decos = info.decos.get(var.result, {})
    name = info.names.get(var.result, f"%{var.result}")
    dim = {"1D": "1d", "2D": "2d", "3D": "3d", "Cube": "cube"}[d.dim]
    if d.arrayed:
        if dim in ("1d", "3d"):
            info.fail(var, f"'{name}': arrayed {d.dim} images are not supported by emu"
                      + (" (WebGPU has no 1d arrays)" if dim == "1d" else ""),
                      hint="use a 2D array image (sampler2DArray / image2DArray)")
        dim += "_array"
    if d.sampled == 2:
        if d.ms or dim.startswith("cube"):
            info.fail(var, f"'{name}': {'multisampled' if d.ms else 'cube'} storage images are not supported by emu",
                      hint="use a 2D array storage image and index the faces as layers" if not d.ms else None)
        if d.format == "Unknown":
            fmt = None
        elif d.format in SPIRV_FORMATS:
            fmt = SPIRV_FORMATS[d.format]
        else:
            info.fail(var, f"'{name}': storage image format {d.format} is not supported by emu",
                      hint="one of " + ", ".join(SPIRV_FORMATS))
        if fmt is not None and FORMATS[fmt].sampled != d.sampled_type.name:
            info.fail(var, f"'{name}': a {d.format} image holds {FORMATS[fmt].sampled} texels, not {d.sampled_type}")
        access = "read" if "NonWritable" in decos else "write" if "NonReadable" in decos else "read_write"
        if "NonWritable" in decos and "NonReadable" in decos:
            info.fail(var, f"'{name}' is decorated both NonReadable and NonWritable")
        return TextureType("storage", dim, d.sampled_type if fmt is None else None, fmt, access)
    if d.ms:
        if dim != "2d":
            info.fail(var, f"'{name}': multisampled images are 2D and not arrayed in emu (WebGPU's rule)")
        return TextureType("depth_multisampled" if compare else "multisampled", "2d",
                           None if compare else d.sampled_type)
    if compare:
        if dim not in ("2d", "2d_array", "cube", "cube_array") or d.sampled_type != F32:
            info.fail(var, f"'{name}': depth comparisons read 2D, 2D array, cube or cube array float images")
        return TextureType("depth", dim)
    return TextureType("sampled", dim, d.sampled_type)


def _uses(info) -> tuple[dict, dict]:
    """Which variables each function's image values come from, and how they are used:
    ({variable id: {'compare', 'plain'}}, {value id: variable ids})."""
    origin: dict = {}
    use: dict = {}
    insts = [x for f in info.functions.values() for lbl in f.order for x in f.blocks[lbl]]
    for _ in range(2):          # a value may be defined in a later block than a use (two passes)
        for x in insts:
            if x.opname in ("OpLoad", "OpCopyObject", "OpImage") and x.ops:
                src = x.ops[0]
                if src in info.handle_vars:
                    origin[x.result] = {src}
                elif src in origin:
                    origin[x.result] = origin[src]
            elif x.opname == "OpSampledImage":
                origin[x.result] = origin.get(x.ops[0], set()) | origin.get(x.ops[1], set())
    for x in insts:
        if x.opname.startswith("OpImageSample") or x.opname in ("OpImageGather", "OpImageDrefGather"):
            how = "compare" if x.opname in DREF else "plain"
            for v in origin.get(x.ops[0], ()):
                use.setdefault(v, set()).add(how)
    return use, origin


def declare(info):
    """The handle globals of the module's image and sampler variables (after the whole module is
    read: a variable's IR type depends on the instructions that use it)."""
    if not info.handle_vars:
        return
    use, _ = _uses(info)
    for vid, var in info.handle_vars.items():
        desc = info.types[var.type_id][2]
        decos = info.decos.get(vid, {})
        name = info.names.get(vid, f"%{vid}")
        if "DescriptorSet" not in decos or "Binding" not in decos:
            info.fail(var, f"'{name}': an image or sampler variable needs DescriptorSet and Binding decorations")
        group, binding = decos["DescriptorSet"][0], decos["Binding"][0]
        how = use.get(vid, set())
        if how == {"compare", "plain"}:
            info.fail(var, f"'{name}' is used both by depth comparisons (Dref) and by plain sampling: emu "
                           f"types it one way, as WebGPU types a texture_depth and a sampler_comparison",
                      hint="bind the image (or the sampler) twice, at two bindings: one for each use")
        compare = how == {"compare"}
        base = info.name(vid, f"image{vid}")
        if isinstance(desc, SamplerDesc):
            info.add_global(vid, Global(_unique(info, base), "handle", SamplerType(compare), "read", group, binding,
                                        None, info.loc(var)))
            continue
        image = desc.image if isinstance(desc, SampledImageDesc) else desc
        t = _texture_type(info, var, image, compare)
        if isinstance(desc, SampledImageDesc):
            # the sampler half first: "last wins" tables keyed by (group, binding) find the texture
            smp = Global(_unique(info, base + "_sampler"), "handle", SamplerType(compare), "read", group, binding,
                         None, info.loc(var))
            info.add_global(("sampler", vid), smp)
            info.combined[vid] = smp
        info.add_global(vid, Global(_unique(info, base), "handle", t, "read", group, binding, None, info.loc(var)))


def _unique(info, base: str) -> str:
    name, n = base, 1
    while name in info.global_names:
        n += 1
        name = f"{base}_{n}"
    info.global_names.add(name)
    return name


class SampledImage:
    """An OpSampledImage / a loaded combined image sampler: the texture and sampler values."""

    def __init__(self, image, sampler):
        self.image, self.sampler = image, sampler


# image operand -> ids it takes (in the order of the bits, SPIR-V's order)
OPERAND_IDS = (("Bias", 1), ("Lod", 1), ("Grad", 2), ("ConstOffset", 1), ("Offset", 1), ("ConstOffsets", 1),
               ("Sample", 1), ("MinLod", 1), ("MakeTexelAvailable", 1), ("MakeTexelAvailableKHR", 1),
               ("MakeTexelVisible", 1), ("MakeTexelVisibleKHR", 1), ("NonPrivateTexel", 0),
               ("NonPrivateTexelKHR", 0), ("VolatileTexel", 0), ("VolatileTexelKHR", 0), ("SignExtend", 0),
               ("ZeroExtend", 0), ("Nontemporal", 0), ("Offsets", 1))


def image_operands(ops: list) -> dict:
    """The Image Operands after the fixed operands: {name: [ids]}."""
    if not ops:
        return {}
    flags = ops[0] if isinstance(ops[0], frozenset) else frozenset([ops[0]])
    rest, out = list(ops[1:]), {}
    for name, n in OPERAND_IDS:
        if name in flags:
            out[name], rest = rest[:n], rest[n:]
    for f in flags:
        out.setdefault(f, [])
    return out


class ImageLowering:
    """Mixin of FunctionLowerer: the image instructions."""

    # -- values -----------------------------------------------------------------------------
    def handle_var(self, id_):
        """The value of an image / sampler variable (a combined one: both halves)."""
        g = self.info.globals[id_]
        tex = self.b.op("global", [], g.type, name=g.name)
        if id_ in self.info.combined:
            s = self.info.combined[id_]
            return SampledImage(tex, self.b.op("global", [], s.type, name=s.name))
        return tex

    def op_Load(self, i):
        p = self.lookup(i.ops[0], i)
        if isinstance(p, SampledImage) or getattr(p, "type", None) is not None and \
                isinstance(p.type, (TextureType, SamplerType)):
            return p
        return super().op_Load(i)

    def op_FunctionCall(self, i):
        for x in i.ops[1:]:
            v = self.lookup(x, i)
            if isinstance(v, SampledImage) or isinstance(getattr(v, "type", None), (TextureType, SamplerType)):
                self.fail(i, "a function parameter holding an image or sampler is not supported by emu",
                          hint="use the image's variable inside the function (or write the code in main)")
        return super().op_FunctionCall(i)

    def op_SampledImage(self, i):
        img, smp = self.lookup(i.ops[0], i), self.lookup(i.ops[1], i)
        if not (isinstance(getattr(img, "type", None), TextureType) and isinstance(getattr(smp, "type", None), SamplerType)):
            self.fail(i, "OpSampledImage combines an image and a sampler loaded from their variables")
        return SampledImage(img, smp)

    def op_Image(self, i):
        return self.sampled_image(i, i.ops[0]).image

    def sampled_image(self, i, id_) -> SampledImage:
        v = self.lookup(id_, i)
        if not isinstance(v, SampledImage):
            self.fail(i, f"%{id_} is no sampled image (an OpSampledImage or a loaded combined image sampler)")
        return v

    def image(self, i, id_):
        v = self.lookup(id_, i)
        if isinstance(v, SampledImage):
            return v.image
        if not isinstance(getattr(v, "type", None), TextureType):
            self.fail(i, f"%{id_} is no image")
        return v

    # -- helpers ----------------------------------------------------------------------------
    def tex_op(self, fn, parts: list, rt):
        roles = [r for r, _ in parts]
        # Vulkan's out-of-bounds loads (robustImageAccess2): the zero texel, not a clamped one
        extra = {"out_of_bounds": "zero_texel"} if fn == "load" else {}
        return self.b.op("texture", [v for _, v in parts], rt, fn=fn, operands=roles, **extra) if rt is not None else \
            self.b.emit("texture", [v for _, v in parts], fn=fn, operands=roles)

    def components(self, v, n: int, first: int = 0):
        """Components first..first+n-1 of a scalar or vector (a scalar when n == 1)."""
        s = scalar_of(v.type)
        if isinstance(v.type, ScalarType):
            return v
        if n == 1:
            return self.b.op("extract", [v], s, path=[first])
        if first == 0 and v.type.n == n:
            return v
        return self.b.op("swizzle", [v], VectorType(s, n), components=list(range(first, first + n)))

    def coords(self, i, t: TextureType, id_, sampled: bool) -> list:
        """[("coords", v)] and, for arrayed images, [("array_index", i32)]: a sampled layer
        rounded to nearest even (Vulkan's rule), an integer one as given."""
        c = self.val(id_, i)
        s = scalar_of(c.type)
        n = t.coords
        if sampled != s.is_float or (not sampled and s not in (I32, U32)) or width(c.type) < n + t.arrayed:
            want = f"{n + t.arrayed} {'float' if sampled else 'integer'} components"
            self.fail(i, f"the coordinate of a {t} has {want}, not {c.type}")
        out = [("coords", self.components(c, n))]
        if t.arrayed:
            layer = self.components(c, 1, n)
            if sampled:
                layer = self.b.op("convert", [self.b.op("builtin", [layer], F32, fn="round")], I32)
            out.append(("array_index", layer))
        return out

    def fit(self, v, rt):
        """An IR texel result as the instruction's result type (fewer components, the other
        signedness, a depth value as (d, 0, 0, 1))."""
        if v.type == rt:
            return v
        s, want = scalar_of(v.type), scalar_of(rt)
        if isinstance(v.type, ScalarType) and isinstance(rt, VectorType):
            zero, one = (self.b.op("const", [], s, value=x) for x in (0.0, 1.0))
            v = self.b.op("construct", [v, zero, zero, one], VectorType(s, 4))
        if width(rt) < width(v.type):
            v = self.components(v, width(rt))
        if s != want:
            if s.is_float != want.is_float:
                self.fail(self.info.current, f"the result type {rt} does not match the image's {v.type} texels")
            v = self.b.op("bitcast", [v], rt)
        return v

    def lod_operand(self, i, ops: dict, t: TextureType, role="level"):
        v = self.val(ops["Lod"][0], i)
        return [(role, self.as_sign(v, "", None) if scalar_of(v.type).is_int else v)]

    def const_offset(self, i, ops: dict, t: TextureType) -> list:
        key = "ConstOffset" if "ConstOffset" in ops else "Offset" if "Offset" in ops else None
        if "ConstOffsets" in ops or "Offsets" in ops:
            self.fail(i, "four gather offsets (ConstOffsets / textureGatherOffsets) are not supported by emu",
                      hint="gather four times with one offset each")
        if key is None:
            return []
        if t.cube:
            self.fail(i, f"a {t} takes no offset")
        v = self.val(ops[key][0], i)
        if scalar_of(v.type) == U32:
            v = self.b.op("bitcast", [v], VectorType(I32, width(v.type)) if width(v.type) > 1 else I32)
        return [("offset", v)]

    def refuse_operands(self, i, ops: dict, allowed: set):
        extra = set(ops) - allowed - {"NonPrivateTexel", "NonPrivateTexelKHR", "VolatileTexel", "VolatileTexelKHR",
                                      "MakeTexelAvailable", "MakeTexelAvailableKHR", "MakeTexelVisible",
                                      "MakeTexelVisibleKHR", "SignExtend", "ZeroExtend", "Nontemporal"}
        if extra:
            self.fail(i, f"{i.opname} with the image operand{'s' if len(extra) > 1 else ''} "
                         f"{', '.join(sorted(extra))} is not supported by emu"
                      + (" (MinLod: the sampler's lod_min_clamp is)" if "MinLod" in extra else ""))

    def float_texture(self, i, t: TextureType):
        if t.kind == "storage" or t.multisampled:
            self.fail(i, f"{i.opname} samples a sampled image, not a {t}")
        if t.texel != F32:
            self.fail(i, f"{i.opname} of an integer image ({t}): emu samples float images",
                      hint="read integer texels with texelFetch (OpImageFetch)")

    # -- reads and writes -------------------------------------------------------------------
    def op_ImageFetch(self, i):
        t_v = self.image(i, i.ops[0])
        t = t_v.type
        ops = image_operands(i.ops[2:])
        self.refuse_operands(i, ops, {"Lod", "Sample", "ConstOffset", "Offset"})
        if t.kind == "storage" or t.cube:
            self.fail(i, f"OpImageFetch reads a sampled, non-cube image, not a {t}")
        parts = [("texture", t_v)] + self.coords(i, t, i.ops[1], sampled=False)
        if "ConstOffset" in ops or "Offset" in ops:          # texelFetchOffset: added to the coordinate
            off = self.val((ops.get("ConstOffset") or ops["Offset"])[0], i)
            c = parts[1][1]
            if off.type != c.type:
                off = self.b.op("bitcast", [off], c.type)
            parts[1] = ("coords", self.b.op("binary", [c, off], c.type, fn="add"))
        if t.multisampled:
            if "Sample" not in ops:
                self.fail(i, "OpImageFetch of a multisampled image needs its Sample operand")
            parts.append(("sample_index", self.val(ops["Sample"][0], i)))
        else:
            lod = self.val(ops["Lod"][0], i) if "Lod" in ops else self.b.op("const", [], I32, value=0)
            parts.append(("level", lod))
        return self.fit(self.tex_op("load", parts, F32 if t.depth else VectorType(t.texel, 4)), self.rtype(i))

    def op_ImageRead(self, i):
        t_v = self.image(i, i.ops[0])
        t = t_v.type
        ops = image_operands(i.ops[2:])
        self.refuse_operands(i, ops, set())
        if t.kind != "storage":
            self.fail(i, f"OpImageRead reads a storage image, not a {t}", hint="read sampled images with texelFetch")
        if t.access == "write":
            self.fail(i, f"OpImageRead of a NonReadable (writeonly) image", hint="remove writeonly")
        parts = [("texture", t_v)] + self.coords(i, t, i.ops[1], sampled=False)
        return self.fit(self.tex_op("load", parts, VectorType(t.texel, 4)), self.rtype(i))

    def op_ImageWrite(self, i):
        t_v = self.image(i, i.ops[0])
        t = t_v.type
        ops = image_operands(i.ops[3:])
        self.refuse_operands(i, ops, set())
        if t.kind != "storage" or t.access == "read":
            self.fail(i, f"OpImageWrite writes a storage image that is not NonWritable (readonly), not a {t}")
        v = self.val(i.ops[2], i)
        want = VectorType(t.texel, 4)
        if width(v.type) != 4:
            self.fail(i, f"OpImageWrite of a {v.type}: emu writes four components", hint="write a vec4")
        if v.type != want:
            if scalar_of(v.type).is_float != want.elem.is_float:
                self.fail(i, f"writing {v.type} to an image of {t.texel} texels")
            v = self.b.op("bitcast", [v], want)
        parts = [("texture", t_v)] + self.coords(i, t, i.ops[1], sampled=False) + [("value", v)]
        self.tex_op("store", parts, None)

    # -- sampling ---------------------------------------------------------------------------
    def op_ImageSampleExplicitLod(self, i):
        si = self.sampled_image(i, i.ops[0])
        t = si.image.type
        self.float_texture(i, t)
        ops = image_operands(i.ops[2:])
        self.refuse_operands(i, ops, {"Lod", "Grad", "ConstOffset", "Offset"})
        parts = [("texture", si.image), ("sampler", si.sampler)] + self.coords(i, t, i.ops[1], sampled=True)
        if "Grad" in ops:
            if t.depth:
                self.fail(i, "textureGrad of a depth image that is also compared: not supported by emu")
            for role, x in zip(("ddx", "ddy"), ops["Grad"]):
                parts.append((role, self.components(self.val(x, i), t.coords)))
            fn = "sample_grad"
        else:
            lod = self.val(ops["Lod"][0], i)
            if t.depth:         # WGSL's depth textureSampleLevel takes a whole level
                c = self.info.consts.get(ops["Lod"][0])
                if c is None or float(c[1]) != int(c[1]):
                    self.fail(i, "sampling a depth image without comparison at a level that is not a constant "
                                 "whole number: not supported by emu")
                lod = self.b.op("const", [], I32, value=int(c[1]))
            parts.append(("level", lod))
            fn = "sample_level"
        parts += self.const_offset(i, ops, t)
        rt = F32 if t.depth else VectorType(F32, 4)
        return self.fit(self.tex_op(fn, parts, rt), self.rtype(i))

    def op_ImageSampleDrefExplicitLod(self, i):
        si = self.sampled_image(i, i.ops[0])
        t = si.image.type
        ops = image_operands(i.ops[3:])
        self.refuse_operands(i, ops, {"Lod", "ConstOffset", "Offset"})
        if "Lod" not in ops:
            self.fail(i, "depth comparisons with gradients (textureGrad of a shadow sampler) are not supported by emu",
                      hint="give the level: textureLod(shadow, coords, lod)")
        parts = [("texture", si.image), ("sampler", si.sampler)] + self.coords(i, t, i.ops[1], sampled=True)
        parts.append(("depth_ref", self.val(i.ops[2], i)))
        c = self.info.consts.get(ops["Lod"][0])
        if c is None or float(c[1]) != 0.0:      # level 0 is WGSL's textureSampleCompareLevel's IR
            parts.append(("level", self.val(ops["Lod"][0], i)))
        parts += self.const_offset(i, ops, t)
        return self.fit(self.tex_op("sample_compare_level", parts, F32), self.rtype(i))

    def op_ImageGather(self, i):
        si = self.sampled_image(i, i.ops[0])
        t = si.image.type
        ops = image_operands(i.ops[3:])
        self.refuse_operands(i, ops, {"ConstOffset", "Offset"})
        if t.kind not in ("sampled", "depth") or t.dim not in ("2d", "2d_array", "cube", "cube_array"):
            self.fail(i, f"OpImageGather of a {t}: emu gathers from 2D, 2D array, cube and cube array images")
        c = self.info.consts.get(i.ops[2])
        if c is None or not 0 <= int(c[1]) <= 3:
            self.fail(i, "the gathered component must be a constant 0, 1, 2 or 3")
        parts = [("texture", si.image), ("sampler", si.sampler)]
        if t.depth:
            if int(c[1]) != 0:
                self.fail(i, "gathering component 1-3 of a depth image: not supported by emu (component 0 is)")
        else:
            parts.insert(0, ("component", self.b.op("const", [], I32, value=int(c[1]))))
        parts += self.coords(i, t, i.ops[1], sampled=True) + self.const_offset(i, ops, t)
        return self.fit(self.tex_op("gather", parts, VectorType(t.texel, 4)), self.rtype(i))

    def op_ImageDrefGather(self, i):
        si = self.sampled_image(i, i.ops[0])
        t = si.image.type
        ops = image_operands(i.ops[3:])
        self.refuse_operands(i, ops, {"ConstOffset", "Offset"})
        parts = [("texture", si.image), ("sampler", si.sampler)] + self.coords(i, t, i.ops[1], sampled=True)
        parts.append(("depth_ref", self.val(i.ops[2], i)))
        parts += self.const_offset(i, ops, t)
        return self.fit(self.tex_op("gather_compare", parts, VectorType(F32, 4)), self.rtype(i))

    # -- queries ----------------------------------------------------------------------------
    def size_query(self, i, lod_id):
        t_v = self.image(i, i.ops[0])
        t = t_v.type
        parts = [("texture", t_v)]
        if lod_id is not None:
            if t.kind == "storage" or t.multisampled:
                self.fail(i, f"OpImageQuerySizeLod of a {t}: use OpImageQuerySize (imageSize)")
            parts.append(("level", self.val(lod_id, i)))
        elif t.kind not in ("storage", "multisampled", "depth_multisampled"):
            self.fail(i, f"OpImageQuerySize of a {t} with mip levels: use OpImageQuerySizeLod (textureSize)")
        n = t.size_components
        dims = self.tex_op("dimensions", parts, U32 if n == 1 else VectorType(U32, n))
        comps = [dims] if n == 1 else [self.b.op("extract", [dims], U32, path=[k]) for k in range(n)]
        if t.arrayed:
            comps.append(self.tex_op("num_layers", [("texture", t_v)], U32))
        v = comps[0] if len(comps) == 1 else self.b.op("construct", comps, VectorType(U32, len(comps)))
        return self.fit(v, self.rtype(i))

    def op_ImageQuerySizeLod(self, i):
        return self.size_query(i, i.ops[1])

    def op_ImageQuerySize(self, i):
        return self.size_query(i, None)

    def op_ImageQueryLevels(self, i):
        t_v = self.image(i, i.ops[0])
        if t_v.type.kind not in ("sampled", "depth"):
            self.fail(i, f"OpImageQueryLevels of a {t_v.type}: sampled images have levels")
        return self.fit(self.tex_op("num_levels", [("texture", t_v)], U32), self.rtype(i))

    def op_ImageQuerySamples(self, i):
        t_v = self.image(i, i.ops[0])
        if not t_v.type.multisampled:
            self.fail(i, f"OpImageQuerySamples of a {t_v.type}: multisampled images have samples")
        return self.fit(self.tex_op("num_samples", [("texture", t_v)], U32), self.rtype(i))

    # -- refused ----------------------------------------------------------------------------
    def refuse_implicit(self, i):
        self.fail(i, f"{i.opname} takes implicit derivatives, which a compute shader does not have",
                  hint=IMPLICIT_HINT)

    op_ImageSampleImplicitLod = op_ImageSampleDrefImplicitLod = op_ImageSampleProjImplicitLod = \
        op_ImageSampleProjDrefImplicitLod = op_ImageQueryLod = refuse_implicit

    def refuse_proj(self, i):
        self.fail(i, f"{i.opname} (projective sampling, textureProj) is not supported by emu",
                  hint="divide the coordinate by its last component and sample with textureLod")

    op_ImageSampleProjExplicitLod = op_ImageSampleProjDrefExplicitLod = refuse_proj

    def op_ImageTexelPointer(self, i):
        self.fail(i, "atomics on storage images (imageAtomic*) are not supported by emu",
                  hint="keep the values in a storage buffer and use atomicAdd etc. on it")
