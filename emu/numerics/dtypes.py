"""Scalar type names of the project and their numpy representations.

Every scalar type is named by a short string used across emu:
'bool', 'i32', 'u32', 'f32', 'f16', 'bf16', 'i8', 'u8', 'i16', 'u16' (SPIR-V's Int16),
'i64', 'u64' (naga's 64-bit integers), 'f64' (naga's IEEE binary64), 'e4m3', 'e5m2' (the OCP 8-bit
floats of SPV_EXT_float8: ml_dtypes' float8_e4m3fn and float8_e5m2), 'e2m1' (the OCP FP4 of
SPV_EXT_ocp_microscaling_types: ml_dtypes' float4_e2m1fn, one byte a value, its code in the low 4 bits).
'bf16', 'i8', 'u8', 'i16' and 'u16' are not WGSL scalar types; they exist as component types of
cooperative matrices and SPIR-V values and follow the same rules as their WGSL relatives
(bf16 like f16/f32, i8/u8/i16/u16 like i32/u32 at 8 and 16 bits). 'e4m3', 'e5m2' and 'e2m1' are
storage formats only: SPIR-V allows them in conversions, bit casts and (the 8-bit ones) cooperative
matrices, not in arithmetic, so they are in MINIFLOATS, not in FLOATS.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidArgument

NAMES = ('bool', 'i32', 'u32', 'f32', 'f16', 'bf16', 'i8', 'u8', 'i16', 'u16', 'i64', 'u64', 'f64',
         'e4m3', 'e5m2', 'e2m1')

class LazyTable(dict):
    """A dict some of whose entries are made on first use by `load(key)`, which raises KeyError
    for a key it does not know: the entries that need ml_dtypes (bfloat16), whose import takes
    ~0.5 s that every emu command paid. `pending` names the keys known before they are made
    ('bf16' of a name table): `in` sees them without making them, and iterating, len and copies
    ({**table}) see them too, and so make them. A key known only when it comes (a dtype, of the
    first bfloat16 array) is made by a lookup or `in`."""

    def __init__(self, entries: dict, load, pending=()):
        super().__init__(entries)
        self._load, self._pending = load, tuple(pending)

    def __missing__(self, key):
        value = self[key] = self._load(key)
        return value

    def __contains__(self, key):
        if dict.__contains__(self, key) or key in self._pending:
            return True
        try:
            self[key]
        except (KeyError, TypeError):
            return False
        return True

    def get(self, key, default=None):
        return self[key] if key in self else default

    def _waiting(self) -> list:
        return [k for k in self._pending if not dict.__contains__(self, k)]

    def __iter__(self):
        yield from dict.__iter__(self)
        yield from self._waiting()

    def __len__(self):
        return dict.__len__(self) + len(self._waiting())

    def keys(self):
        return list(self)

    def items(self):
        return [(k, self[k]) for k in self]

    def values(self):
        return [self[k] for k in self]

    def plain(self) -> dict:
        """The entries made so far, making none."""
        return dict(dict.items(self))


# the types whose numpy dtype comes from ml_dtypes, by emu name and ml_dtypes name (loaded on first use)
_ML_DTYPES = {'bf16': 'bfloat16', 'e4m3': 'float8_e4m3fn', 'e5m2': 'float8_e5m2', 'e2m1': 'float4_e2m1fn'}


def _bf16_dtype(name: str):
    if name not in _ML_DTYPES:
        raise KeyError(name)
    import ml_dtypes
    return np.dtype(getattr(ml_dtypes, _ML_DTYPES[name]))


def _bf16_name(dt) -> str:
    """'bf16', 'e4m3', 'e5m2' for ml_dtypes' bfloat16, float8_e4m3fn, float8_e5m2 (no other dtype
    is named so; none exists before ml_dtypes)."""
    for name, ml in _ML_DTYPES.items():
        if getattr(dt, "name", None) == ml and dt == NP[name]:
            return name
    raise KeyError(dt)


# name -> dtype, 'bf16' (ml_dtypes' bfloat16) made on first use
NP = LazyTable({
    'bool': np.dtype(np.bool_),
    'i32': np.dtype(np.int32),
    'u32': np.dtype(np.uint32),
    'f32': np.dtype(np.float32),
    'f16': np.dtype(np.float16),
    'i8': np.dtype(np.int8),
    'u8': np.dtype(np.uint8),
    'i16': np.dtype(np.int16),
    'u16': np.dtype(np.uint16),
    'i64': np.dtype(np.int64),
    'u64': np.dtype(np.uint64),
    'f64': np.dtype(np.float64),
}, _bf16_dtype, pending=tuple(_ML_DTYPES))

# float dtype -> name: the inverse of NP for the matrix unit's input formats
FLOAT_NAMES = LazyTable({np.dtype(np.float16): 'f16', np.dtype(np.float32): 'f32'}, _bf16_name)

# Unsigned integer dtype of the same width, for bit views (bool is one byte in numpy).
BITS = {
    'bool': np.dtype(np.uint8),
    'i32': np.dtype(np.uint32),
    'u32': np.dtype(np.uint32),
    'f32': np.dtype(np.uint32),
    'f16': np.dtype(np.uint16),
    'bf16': np.dtype(np.uint16),
    'i8': np.dtype(np.uint8),
    'u8': np.dtype(np.uint8),
    'i16': np.dtype(np.uint16),
    'u16': np.dtype(np.uint16),
    'i64': np.dtype(np.uint64),
    'u64': np.dtype(np.uint64),
    'f64': np.dtype(np.uint64),
    'e4m3': np.dtype(np.uint8),
    'e5m2': np.dtype(np.uint8),
    'e2m1': np.dtype(np.uint8),          # one byte a value: its code in the low 4 bits (as ml_dtypes)
}

SIZE = {name: BITS[name].itemsize for name in NAMES}

FLOATS = frozenset({'f32', 'f16', 'bf16', 'f64'})
# SPIR-V's 8- and 4-bit floats: no arithmetic of their own, only constants, bitcasts and
# conversions (see the module doc); FP8 are the ones with conversions to them and matrices
FP8 = frozenset({'e4m3', 'e5m2'})
MINIFLOATS = FP8 | {'e2m1'}
INTS = frozenset({'i32', 'u32', 'i8', 'u8', 'i16', 'u16', 'i64', 'u64'})
SIGNED = frozenset({'i32', 'i8', 'i16', 'i64'})
UNSIGNED = frozenset({'u32', 'u8', 'u16', 'u64'})

# Bit width of the integer types.
WIDTH = {'i32': 32, 'u32': 32, 'i8': 8, 'u8': 8, 'i16': 16, 'u16': 16, 'i64': 64, 'u64': 64}
INT_MIN = {'i32': -2**31, 'u32': 0, 'i8': -128, 'u8': 0, 'i16': -2**15, 'u16': 0, 'i64': -2**63, 'u64': 0}
INT_MAX = {'i32': 2**31 - 1, 'u32': 2**32 - 1, 'i8': 127, 'u8': 255, 'i16': 2**15 - 1, 'u16': 2**16 - 1,
           'i64': 2**63 - 1, 'u64': 2**64 - 1}


@dataclass(frozen=True)
class FloatFormat:
    """An IEEE-754 style binary format: `precision` significand bits (hidden bit
    included), exponent bits, and derived limits."""
    precision: int
    exp_bits: int

    @property
    def bias(self) -> int:
        return (1 << (self.exp_bits - 1)) - 1

    @property
    def emin(self) -> int:          # exponent of the smallest normal number
        return 1 - self.bias

    @property
    def emax(self) -> int:          # exponent of the largest finite number
        return self.bias

    @property
    def frac_bits(self) -> int:
        return self.precision - 1

    @property
    def max_value(self) -> float:   # largest finite value, exact as a Python float
        return float((2 - 2.0 ** (1 - self.precision)) * 2.0 ** self.emax)

    @property
    def min_subnormal(self) -> float:
        return float(2.0 ** (self.emin - self.frac_bits))


FORMAT = {
    'f32': FloatFormat(24, 8),
    'f16': FloatFormat(11, 5),
    'bf16': FloatFormat(8, 8),
}
F64 = FloatFormat(53, 11)   # AbstractFloat, and naga's f64
FORMAT['f64'] = F64


def is_float(ty: str) -> bool:
    return ty in FLOATS


def is_int(ty: str) -> bool:
    return ty in INTS


def check(ty: str) -> str:
    """Return `ty` if it is a known scalar type name, else raise InvalidArgument (a ValueError)."""
    if ty not in NP:
        raise InvalidArgument(f"unknown scalar type {ty!r}; expected one of {', '.join(NAMES)}")
    return ty
