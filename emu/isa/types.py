"""Types of the cooperative IR.

Every type is a frozen, hashable value with a canonical text form (`str(t)`), which the printer
writes and the IR parser reads back. Host-shareable layout (size, alignment, array stride and
struct member offsets) follows WGSL's rules, because storage/uniform/workgroup memory is bytes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property


def round_up(align: int, n: int) -> int:
    return (n + align - 1) // align * align


class Type:
    """Base of all IR types."""

    @property
    def size(self) -> int:
        raise TypeError(f"{self} has no host-shareable size")

    @property
    def align(self) -> int:
        raise TypeError(f"{self} has no host-shareable alignment")

    @property
    def is_scalar(self) -> bool:
        return isinstance(self, ScalarType)


@dataclass(frozen=True)
class ScalarType(Type):
    name: str            # bool i32 u32 f32 f16 bf16 i8 u8 i16 u16 i64 u64 f64
    kind: str            # 'bool' | 'sint' | 'uint' | 'float'
    bits: int

    def __str__(self) -> str:
        return self.name

    @property
    def size(self) -> int:
        # a 4-bit float is held in one byte (SPIR-V keeps it out of host-visible memory)
        return 4 if self.kind == "bool" else max(1, self.bits // 8)

    @property
    def align(self) -> int:
        return self.size

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind in ("sint", "uint")

    @property
    def is_signed(self) -> bool:
        return self.kind in ("sint", "float")


BOOL = ScalarType("bool", "bool", 1)
I32 = ScalarType("i32", "sint", 32)
U32 = ScalarType("u32", "uint", 32)
F32 = ScalarType("f32", "float", 32)
F16 = ScalarType("f16", "float", 16)
BF16 = ScalarType("bf16", "float", 16)
I8 = ScalarType("i8", "sint", 8)
U8 = ScalarType("u8", "uint", 8)
I16 = ScalarType("i16", "sint", 16)        # SPIR-V's Int16 (GLSL's int16_t); WGSL has none
U16 = ScalarType("u16", "uint", 16)
I64 = ScalarType("i64", "sint", 64)        # naga's (wgpu's SHADER_INT64); Tint has none
U64 = ScalarType("u64", "uint", 64)
F64 = ScalarType("f64", "float", 64)       # naga's (wgpu's SHADER_F64); Tint has none
# SPIR-V's 8- and 4-bit floats, no arithmetic of their own: SPV_EXT_float8's OCP E4M3 and E5M2
# (Float8E4M3EXT, Float8E5M2EXT: storage, conversions both ways, cooperative matrices) and
# SPV_EXT_ocp_microscaling_types' FP4 E2M1 (storage, bitcasts, conversions to wider types)
E4M3 = ScalarType("e4m3", "float", 8)
E5M2 = ScalarType("e5m2", "float", 8)
E2M1 = ScalarType("e2m1", "float", 4)
FP8 = (E4M3, E5M2)
MINIFLOATS = (E4M3, E5M2, E2M1)
SCALARS = {t.name: t for t in (BOOL, I32, U32, F32, F16, BF16, I8, U8, I16, U16, I64, U64, F64, *MINIFLOATS)}
# Element types that only live in storage or inside cooperative matrices, never in WGSL registers.
STORAGE_ONLY = (BF16, I8, U8, I16, U16, *MINIFLOATS)


@dataclass(frozen=True)
class VectorType(Type):
    elem: ScalarType
    n: int

    def __str__(self) -> str:
        return f"vec{self.n}<{self.elem}>"

    @property
    def size(self) -> int:
        return self.elem.size * self.n

    @property
    def align(self) -> int:
        return self.elem.size * (4 if self.n == 3 else self.n)


@dataclass(frozen=True)
class MatrixType(Type):
    """WGSL matCxR<T>: `cols` column vectors of `rows` elements."""
    cols: int
    rows: int
    elem: ScalarType

    def __str__(self) -> str:
        return f"mat{self.cols}x{self.rows}<{self.elem}>"

    @property
    def column(self) -> VectorType:
        return VectorType(self.elem, self.rows)

    @property
    def size(self) -> int:
        return self.cols * round_up(self.column.align, self.column.size)

    @property
    def align(self) -> int:
        return self.column.align


@dataclass(frozen=True)
class ArrayType(Type):
    elem: Type
    count: int | None    # None: runtime-sized (only as the last thing in a storage buffer)

    def __str__(self) -> str:
        return f"array<{self.elem}>" if self.count is None else f"array<{self.elem}, {self.count}>"

    @property
    def stride(self) -> int:
        return round_up(self.elem.align, self.elem.size)

    @property
    def size(self) -> int:
        if self.count is None:
            raise TypeError(f"{self} is runtime-sized")
        return self.count * self.stride

    @property
    def align(self) -> int:
        return self.elem.align


@dataclass(frozen=True)
class Member:
    name: str
    type: Type
    align_attr: int | None = None   # @align(n)
    size_attr: int | None = None    # @size(n)


@dataclass(frozen=True)
class StructType(Type):
    name: str
    members: tuple[Member, ...] = field(compare=True)

    def __str__(self) -> str:
        return f"struct.{self.name}"

    def member_index(self, name: str) -> int | None:
        for i, m in enumerate(self.members):
            if m.name == name:
                return i
        return None

    @cached_property
    def offsets(self) -> tuple[int, ...]:
        offs, at = [], 0
        for m in self.members:
            at = round_up(m.align_attr or m.type.align, at)
            offs.append(at)
            at += m.size_attr or _member_size(m.type)
        return tuple(offs)

    @property
    def align(self) -> int:
        return max(m.align_attr or m.type.align for m in self.members)

    @property
    def size(self) -> int:
        last = self.members[-1]
        return round_up(self.align, self.offsets[-1] + (last.size_attr or _member_size(last.type)))

    @property
    def runtime_array(self) -> ArrayType | None:
        t = self.members[-1].type
        return t if isinstance(t, ArrayType) and t.count is None else None


def _member_size(t: Type) -> int:
    # A runtime-sized array as the last member contributes no fixed size.
    if isinstance(t, ArrayType) and t.count is None:
        return 0
    return t.size


@dataclass(frozen=True)
class AtomicType(Type):
    elem: "ScalarType | VectorType"   # i32 or u32 (naga: also i64, u64; WGSL's atomic_vec2u_min_max: vec2<u32>)

    def __str__(self) -> str:
        return f"atomic<{self.elem}>"

    @property
    def size(self) -> int:
        return self.elem.size

    @property
    def align(self) -> int:
        return self.elem.size

    @property
    def is_vec2u(self) -> bool:
        """atomic<vec2<u32>>: one 64-bit unsigned value (.x the low word, .y the high word) that only
        atomicStoreMax/atomicStoreMin touch (WGSL's atomic_vec2u_min_max extension)."""
        return isinstance(self.elem, VectorType)


# Address spaces and what a pointer into them may do.
SPACES = ("function", "private", "workgroup", "uniform", "storage")
ACCESS = ("read", "write", "read_write")


@dataclass(frozen=True)
class PointerType(Type):
    space: str
    pointee: Type
    access: str = "read_write"

    def __str__(self) -> str:
        return f"ptr<{self.space}, {self.pointee}, {self.access}>"


# Roles of a cooperative matrix: A is M x K (left), B is K x N (right), C is M x N (accumulator/result).
ROLES = ("A", "B", "C")


@dataclass(frozen=True)
class CoopMatrixType(Type):
    """A matrix distributed over the lanes of a subgroup: `rows` x `cols` of `elem`, used as `role`;
    of `scope` "workgroup" (VK_NV_cooperative_matrix2), held by the whole workgroup."""
    rows: int
    cols: int
    elem: ScalarType
    role: str
    scope: str = "subgroup"

    def __str__(self) -> str:
        scope = ", workgroup" if self.scope == "workgroup" else ""
        return f"coopmat<{self.elem}, {self.rows}x{self.cols}, {self.role}{scope}>"


# Textures and samplers (WGSL's handle types): opaque values that name a bound resource.
TEXTURE_DIMS = ("1d", "2d", "2d_array", "3d", "cube", "cube_array")
TEXTURE_KINDS = ("sampled", "multisampled", "depth", "depth_multisampled", "storage")
STORAGE_ACCESS = ("read", "write", "read_write")
# WGSL's texture type names -> (kind, dimension)
TEXTURE_NAMES = {
    **{f"texture_{d}": ("sampled", d) for d in TEXTURE_DIMS},
    "texture_multisampled_2d": ("multisampled", "2d"),
    **{f"texture_depth_{d}": ("depth", d) for d in ("2d", "2d_array", "cube", "cube_array")},
    "texture_depth_multisampled_2d": ("depth_multisampled", "2d"),
    **{f"texture_storage_{d}": ("storage", d) for d in ("1d", "2d", "2d_array", "3d")},
}


@dataclass(frozen=True)
class TextureType(Type):
    """A texture binding: `sampled` is the component type of sampled and multisampled textures
    (f32, i32, u32); storage textures have a texel `format` and an `access` mode (a SPIR-V
    storage image of format Unknown: format None, `sampled` its component type, the host's
    texture giving the format)."""
    kind: str
    dim: str
    sampled: ScalarType | None = None
    format: str | None = None
    access: str | None = None

    def __str__(self) -> str:
        name = next(n for n, kd in TEXTURE_NAMES.items() if kd == (self.kind, self.dim))
        if self.kind == "storage":
            return f"{name}<{self.format or 'unknown_' + str(self.sampled)}, {self.access}>"
        return f"{name}<{self.sampled}>" if self.sampled is not None else name

    @property
    def texel(self) -> ScalarType:
        """The component type of the vec4 (or the f32 of a depth texture) that reads give."""
        if self.kind == "storage" and self.format is not None:
            from ..numerics.texels import FORMATS
            return SCALARS[FORMATS[self.format].sampled]
        return self.sampled if self.sampled is not None else F32

    @property
    def depth(self) -> bool:
        return self.kind in ("depth", "depth_multisampled")

    @property
    def arrayed(self) -> bool:
        return self.dim.endswith("_array")

    @property
    def cube(self) -> bool:
        return self.dim.startswith("cube")

    @property
    def multisampled(self) -> bool:
        return self.kind in ("multisampled", "depth_multisampled")

    @property
    def coords(self) -> int:
        """Components of a texel coordinate (a cube's: a direction of 3)."""
        return {"1d": 1, "3d": 3}.get(self.dim, 3 if self.cube else 2)

    @property
    def size_components(self) -> int:
        """Components of textureDimensions' result."""
        return {"1d": 1, "3d": 3}.get(self.dim, 2)


def texture_result(fn: str, t: TextureType) -> Type:
    """The type a texture builtin gives for texture `t` (VOID: textureStore)."""
    if fn in ("num_layers", "num_levels", "num_samples"):
        return U32
    if fn == "dimensions":
        return U32 if t.size_components == 1 else VectorType(U32, t.size_components)
    if fn == "store":
        return VOID
    if fn in ("load", "sample_level", "sample_compare_level") and t.depth or fn == "sample_compare_level":
        return F32
    if fn in ("gather_compare", "sample_grad", "sample_base_clamp_to_edge"):
        return VectorType(F32, 4)
    return VectorType(t.texel, 4)


@dataclass(frozen=True)
class SamplerType(Type):
    comparison: bool = False

    def __str__(self) -> str:
        return "sampler_comparison" if self.comparison else "sampler"


def is_handle(t: Type) -> bool:
    return isinstance(t, (TextureType, SamplerType))


@dataclass(frozen=True)
class VoidType(Type):
    def __str__(self) -> str:
        return "void"


VOID = VoidType()


class TupleType(StructType):
    """Result of builtins that return several values (frexp, modf, atomicCompareExchangeWeak): a
    struct WGSL names but a shader cannot spell, so it is laid out, stored and copied as a struct
    (variables and constants hold it) and declared apart in the IR text."""

    def __init__(self, name: str, fields: tuple[tuple[str, Type], ...]):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "members", tuple(Member(n, t) for n, t in fields))

    @property
    def fields(self) -> tuple[tuple[str, Type], ...]:
        return tuple((m.name, m.type) for m in self.members)

    def field_index(self, name: str) -> int | None:
        return self.member_index(name)


def scalar_of(t: Type) -> ScalarType:
    """The scalar element type of a scalar, vector, matrix, atomic or cooperative matrix."""
    if isinstance(t, ScalarType):
        return t
    if isinstance(t, AtomicType):
        return scalar_of(t.elem)
    if isinstance(t, (VectorType, MatrixType, CoopMatrixType)):
        return t.elem
    raise NoScalarType(f"{t} has no scalar element type")


class NoScalarType(TypeError):
    """scalar_of of an array, struct or pointer: a front end says which argument was wrong."""


def width(t: Type) -> int:
    """Number of components: 1 for a scalar, n for a vector."""
    return t.n if isinstance(t, VectorType) else 1


def with_scalar(t: Type, s: ScalarType) -> Type:
    """The same shape as `t` with element type `s` (vec3<f32> -> vec3<u32>)."""
    if isinstance(t, VectorType):
        return VectorType(s, t.n)
    if isinstance(t, MatrixType):
        return MatrixType(t.cols, t.rows, s)
    return s


def is_constructible(t: Type) -> bool:
    # Cooperative matrices are plain value types (Dawn's proposal: so that arrays and structs
    # can hold them); they have zero values and can be copied.
    if isinstance(t, (ScalarType, VectorType, MatrixType, CoopMatrixType)):
        return True
    if isinstance(t, ArrayType):
        return t.count is not None and is_constructible(t.elem)
    if isinstance(t, StructType):
        return all(is_constructible(m.type) for m in t.members)
    return False


def contains(t: Type, kind: type, test=None) -> bool:
    """Whether `t` is, or holds somewhere in its arrays and structs, a type of class `kind` (for
    which `test`, where given, is true)."""
    if isinstance(t, kind) and (test is None or test(t)):
        return True
    if isinstance(t, ArrayType):
        return contains(t.elem, kind, test)
    if isinstance(t, StructType):
        return any(contains(m.type, kind, test) for m in t.members)
    return False


def contains_atomic(t: Type) -> bool:
    return contains(t, AtomicType)


# Register values hold one numpy axis per level of arrays-in-structs, vectors and matrices, a nest
# of arrays sharing one (memory.nested_count): numpy allows 64 axes, the lane axis among them.
MAX_REGISTER_AXES = 60
# A value built by the front end (a constant, a zero value) is a Python list: at most this many bytes.
MAX_VALUE_BYTES = 1 << 20
# Function and private variables of one invocation, together (WGSL guarantees 8192 bytes of each).
MAX_INVOCATION_BYTES = 1 << 16


def register_axes(t: Type) -> int:
    """numpy axes, besides the lane axis, of a value of type `t` in register form."""
    if isinstance(t, ArrayType):
        while isinstance(t, ArrayType):
            t = t.elem
        return 1 + register_axes(t)
    if isinstance(t, StructType):
        return max((register_axes(m.type) for m in t.members), default=0)
    if isinstance(t, MatrixType):
        return 2
    if isinstance(t, (VectorType, CoopMatrixType)):
        return 1
    return 0
