"""WGSL's texture and sampler types and the texture builtins that compute shaders may call,
typed by WGSL's overloads and lowered to the IR's one `texture` op (its `operands` attribute says
what each operand is). textureSample, textureSampleBias and textureSampleCompare take implicit
derivatives, which only fragment shaders have: refused, as WGSL does."""
from __future__ import annotations

from ...isa.types import (F32, I32, U32, SamplerType, ScalarType, TEXTURE_NAMES, TextureType,
                          VectorType, STORAGE_ACCESS, VOID)
from ...numerics.texels import STORAGE_FORMATS
from .names import TEXTURE_FNS
from .types import ABSTRACT_FLOAT, ABSTRACT_INT
from .values import Const, Val, _name, _scalar_or_none, _tn

IMPLICIT_LOD = {"textureSample": "textureSampleLevel(t, s, coords, 0.0)",
                "textureSampleBias": "textureSampleLevel(t, s, coords, level)",
                "textureSampleCompare": "textureSampleCompareLevel(t, s, coords, depth_ref)"}


def texture_type(lw, te) -> TextureType | SamplerType:
    """The type a texture_*, sampler or sampler_comparison name spells."""
    name, args = te.name, te.args
    if name in ("sampler", "sampler_comparison"):
        if args:
            lw.err(te, f"'{name}' takes no template arguments")
        return SamplerType(name == "sampler_comparison")
    if name == "texture_external":
        lw.err(te, "texture_external (video frames imported into WebGPU) is not supported by emu",
               hint="copy the frame into a texture_2d<f32> and read it with textureLoad or "
                    "textureSampleBaseClampToEdge")
    if name not in TEXTURE_NAMES:
        lw.err(te, f"unknown texture type '{name}'",
               hint="one of " + ", ".join(TEXTURE_NAMES) + ", sampler, sampler_comparison")
    kind, dim = TEXTURE_NAMES[name]
    if kind == "storage":
        if len(args) != 2:
            lw.err(te, f"'{name}' takes a texel format and an access mode",
                   hint=f"write {name}<rgba8unorm, write>")
        fmt, access = _name(args[0]), _name(args[1])
        if fmt not in STORAGE_FORMATS:
            lw.err(args[0], f"'{fmt}' is not a storage texel format",
                   hint="one of " + ", ".join(STORAGE_FORMATS))
        if access not in STORAGE_ACCESS:
            lw.err(args[1], f"'{access}' is not an access mode of storage textures",
                   hint="write read, write or read_write")
        return TextureType(kind, dim, None, fmt, access)
    if kind in ("depth", "depth_multisampled"):
        if args:
            lw.err(te, f"'{name}' takes no template arguments (depth textures hold f32)")
        return TextureType(kind, dim)
    if len(args) != 1:
        lw.err(te, f"'{name}' needs its sampled type", hint=f"write {name}<f32> (or i32, u32)")
    s = lw.type(args[0])
    if s not in (F32, I32, U32):
        lw.err(args[0], f"a texture's sampled type is f32, i32 or u32, not {_tn(s)}")
    return TextureType(kind, dim, s)


def lower_texture(lw, e, statement: bool):
    name = e.name
    if name in IMPLICIT_LOD:
        lw.err(e, f"{name} needs implicit derivatives, which only fragment shaders have; WGSL "
                  f"refuses it in a compute shader", hint=f"give the level explicitly: {IMPLICIT_LOD[name]}")
    return _Call(lw, e).lower(TEXTURE_FNS[name])


class _Call:
    """One texture builtin call: its arguments taken in order, each checked and converted."""

    def __init__(self, lw, e):
        self.lw, self.e = lw, e
        self.args = list(e.args)
        self.pos = 0
        self.seen: dict = {}        # position -> value, for an argument looked at before it is taken
        self.vals: list = []
        self.roles: list[str] = []

    def fail(self, msg, node=None, hint=None):
        self.lw.err(node if node is not None else self.e, f"{self.e.name}: {msg}", hint=hint)

    def more(self) -> bool:
        return self.pos < len(self.args)

    def next_node(self, what: str):
        if not self.more():
            self.fail(f"missing the {what} argument", hint=self.usage)
        n = self.args[self.pos]
        self.pos += 1
        return n

    def value(self, what: str):
        at = self.pos
        node = self.next_node(what)
        return node, self.seen.pop(at, None) or self.lw.value(self.lw.expr(node))

    def peek(self):
        """The next argument's value, without taking it."""
        if self.pos not in self.seen:
            self.seen[self.pos] = self.lw.value(self.lw.expr(self.args[self.pos]))
        return self.seen[self.pos]

    def add(self, role: str, v):
        self.roles.append(role)
        self.vals.append(v)

    # -- arguments ---------------------------------------------------------------------------
    def texture(self) -> TextureType:
        node, v = self.value("texture")
        if not isinstance(v.type, TextureType):
            self.fail(f"the texture argument is {_tn(v.type)}, not a texture", node)
        self.add("texture", v.v)
        return v.type

    def sampler(self, comparison: bool):
        node, v = self.value("sampler")
        want = SamplerType(comparison)
        if v.type != want:
            self.fail(f"needs a {want}, not {_tn(v.type)}", node)
        self.add("sampler", v.v)

    def integer(self, role: str, n: int = 1, constant: bool = False):
        """An i32 or u32 scalar (n == 1) or vecN<i32|u32>; abstract integers become i32."""
        node, v = self.value(role.replace("_", " "))
        s = _scalar_or_none(v.type)
        shape_ok = isinstance(v.type, ScalarType) if n == 1 else \
            isinstance(v.type, VectorType) and v.type.n == n
        if not shape_ok or s not in (I32, U32, ABSTRACT_INT):
            want = "i32 or u32" if n == 1 else f"vec{n}<i32> or vec{n}<u32>"
            self.fail(f"the {role.replace('_', ' ')} must be {want}, not {_tn(v.type)}", node)
        if constant and not isinstance(v, Const):
            self.fail(f"the {role.replace('_', ' ')} must be a constant expression", node)
        t = (I32 if s is ABSTRACT_INT else s) if n == 1 else VectorType(I32 if s is ABSTRACT_INT else s, n)
        self.add(role, self.lw.coerce(v, t, node))
        return v

    def floats(self, role: str, n: int = 1):
        node, v = self.value(role.replace("_", " "))
        t = F32 if n == 1 else VectorType(F32, n)
        s = _scalar_or_none(v.type)
        same_shape = isinstance(v.type, ScalarType) if n == 1 else \
            isinstance(v.type, VectorType) and v.type.n == n
        if not same_shape or s not in (F32, ABSTRACT_FLOAT, ABSTRACT_INT):
            self.fail(f"the {role.replace('_', ' ')} must be {t}, not {_tn(v.type)}", node)
        self.add(role, self.lw.coerce(v, t, node))

    def offset(self, t: TextureType):
        """The optional constant texel offset of 2d, 2d_array and 3d sampling: each in -8..7."""
        if not self.more():
            return
        if t.dim not in ("2d", "2d_array", "3d"):
            self.fail(f"takes no offset for a {t}", self.args[self.pos])
        node = self.args[self.pos]
        v = self.integer("offset", t.coords, constant=True)
        if isinstance(v, Const) and (_scalar_or_none(v.type) is U32 or
                                     any(not -8 <= int(x) <= 7 for x in v.value)):
            self.fail("each offset component must be an i32 from -8 to 7", node)

    def done(self):
        if self.more():
            self.fail(f"too many arguments ({len(self.args)})", self.args[self.pos], hint=self.usage)

    @property
    def usage(self) -> str:
        return USAGE.get(self.e.name, "")

    # -- overloads ---------------------------------------------------------------------------
    def lower(self, fn: str):
        lw = self.lw
        rt = getattr(self, "fn_" + fn)()
        self.done()
        inst = lw.b.emit("texture", self.vals, rt if rt is not None else VOID, fn=fn, operands=self.roles)
        return None if rt is None else Val(inst.result)

    def coords_index(self, t: TextureType, sampled: bool):
        if sampled:
            self.floats("coords", t.coords)
        else:
            self.integer("coords", t.coords)
        if t.arrayed:
            self.integer("array_index")

    def fn_dimensions(self):
        t = self.texture()
        if self.more():
            if t.kind not in ("sampled", "depth"):
                self.fail(f"takes no level for a {t}", self.args[self.pos])
            self.integer("level")
        return U32 if t.size_components == 1 else VectorType(U32, t.size_components)

    def fn_num_layers(self):
        t = self.texture()
        if not t.arrayed:
            self.fail(f"needs an arrayed texture, not {t}")
        return U32

    def fn_num_levels(self):
        t = self.texture()
        if t.kind not in ("sampled", "depth"):
            self.fail(f"needs a sampled or depth texture, not {t}")
        return U32

    def fn_num_samples(self):
        t = self.texture()
        if not t.multisampled:
            self.fail(f"needs a multisampled texture, not {t}")
        return U32

    def fn_load(self):
        t = self.texture()
        if t.cube:
            self.fail(f"cannot load from a {t}", hint="cube textures are read with textureSampleLevel or textureGather")
        if t.kind == "storage" and t.access == "write":
            self.fail(f"cannot read a write-only {t}", hint="declare it with access read or read_write")
        self.coords_index(t, sampled=False)
        if t.multisampled:
            self.integer("sample_index")
        elif t.kind != "storage":
            self.integer("level")
        return F32 if t.depth else VectorType(t.texel, 4)

    def fn_store(self):
        t = self.texture()
        if t.kind != "storage" or t.access == "read":
            self.fail(f"needs a storage texture with access write or read_write, not {t}")
        self.coords_index(t, sampled=False)
        node, v = self.value("value")
        want = VectorType(t.texel, 4)
        self.add("value", self.lw.coerce(v, want, node))
        return None

    def sampled_f32(self, t: TextureType, depth_ok: bool):
        ok = t.kind == "sampled" and t.sampled == F32 or depth_ok and t.kind == "depth"
        if not ok or t.dim == "1d" and self.e.name != "textureSampleLevel":
            self.fail(f"cannot sample a {t}", hint="sample texture_2d<f32> (2d_array, 3d, cube, cube_array)"
                                                  + (" or texture_depth_*" if depth_ok else ""))

    def fn_sample_level(self):
        t = self.texture()
        self.sampled_f32(t, depth_ok=True)
        self.sampler(False)
        self.coords_index(t, sampled=True)
        if t.depth:
            self.integer("level")
        else:
            self.floats("level")
        self.offset(t)
        return F32 if t.depth else VectorType(F32, 4)

    def fn_sample_grad(self):
        t = self.texture()
        self.sampled_f32(t, depth_ok=False)
        self.sampler(False)
        self.coords_index(t, sampled=True)
        self.floats("ddx", t.coords)
        self.floats("ddy", t.coords)
        self.offset(t)
        return VectorType(F32, 4)

    def depth_texture(self):
        t = self.texture()
        if t.kind != "depth":
            self.fail(f"needs a depth texture (texture_depth_2d, _2d_array, _cube, _cube_array), not {t}")
        return t

    def fn_sample_compare_level(self):
        t = self.depth_texture()
        self.sampler(True)
        self.coords_index(t, sampled=True)
        self.floats("depth_ref")
        self.offset(t)
        return F32

    def fn_gather(self):
        first = self.args[0] if self.args else None
        comp = None
        if first is not None and not isinstance(self.peek().type, TextureType):
            comp = self.integer("component", constant=True)
            if isinstance(comp, Const) and not 0 <= int(comp.value) <= 3:
                self.fail(f"the component must be 0, 1, 2 or 3, not {comp.value}", first)
        t = self.texture()
        if t.kind not in ("sampled", "depth") or t.dim not in ("2d", "2d_array", "cube", "cube_array"):
            self.fail(f"cannot gather from a {t}", hint="gather from a 2d, 2d_array, cube or cube_array texture")
        if (comp is None) != t.depth:
            self.fail("takes the component first for a colour texture, and none for a depth texture",
                      hint=USAGE["textureGather"])
        self.sampler(False)
        self.coords_index(t, sampled=True)
        self.offset(t)
        return VectorType(t.texel, 4)

    def fn_gather_compare(self):
        t = self.depth_texture()
        self.sampler(True)
        self.coords_index(t, sampled=True)
        self.floats("depth_ref")
        self.offset(t)
        return VectorType(F32, 4)

    def fn_sample_base_clamp_to_edge(self):
        t = self.texture()
        if t != TextureType("sampled", "2d", F32):
            self.fail(f"needs a texture_2d<f32>, not {t}")
        self.sampler(False)
        self.floats("coords", 2)
        return VectorType(F32, 4)


USAGE = {
    "textureLoad": "textureLoad(t, coords[, array_index], level | sample_index) (storage textures: no level)",
    "textureStore": "textureStore(t, coords[, array_index], value)",
    "textureSampleLevel": "textureSampleLevel(t, s, coords[, array_index], level[, offset])",
    "textureSampleGrad": "textureSampleGrad(t, s, coords[, array_index], ddx, ddy[, offset])",
    "textureSampleCompareLevel": "textureSampleCompareLevel(t, s, coords[, array_index], depth_ref[, offset])",
    "textureGather": "textureGather(component, t, s, coords[, array_index][, offset]) "
                     "(a depth texture: no component)",
    "textureGatherCompare": "textureGatherCompare(t, s, coords[, array_index], depth_ref[, offset])",
}
