"""JSON-safe renderings of device values: raw bits as hex, values as JSON numbers (the exact
value of the element, widened to a double) or, where JSON has no number for it, the strings
"nan", "inf" and "-inf"."""
from __future__ import annotations

import numpy as np

from ..numerics.dtypes import BITS, FLOATS, MINIFLOATS, NP

HEX_DIGITS = {"f16": 4, "bf16": 4, "f32": 8, "i32": 8, "u32": 8, "i8": 2, "u8": 2, "i16": 4, "u16": 4,
              "e4m3": 2, "e5m2": 2, "e2m1": 1, "bool": 2}


def bits_fmt(tname: str) -> str:
    return f"0x{{:0{HEX_DIGITS[tname]}x}}"


_HEX_TABLES: dict = {}


def _hex_of(tname: str, before: str = "", after: str = ""):
    """The function from a raw bit pattern to its text; for 8- and 16-bit types a lookup in a
    table of every pattern, built once (traces format millions of them)."""
    digits = HEX_DIGITS[tname]
    text = before + bits_fmt(tname) + after
    if digits > 4:
        return text.format
    table = _HEX_TABLES.get(text)
    if table is None:
        table = _HEX_TABLES[text] = list(map(text.format, range(1 << 4 * digits)))
    return table.__getitem__


def bits_list(arr: np.ndarray, tname: str, before: str = "", after: str = ""):
    """Raw bit patterns of `arr` (elements of type `tname`) as nested lists of hex strings
    (each between `before` and `after`: the JSON writer's pieces)."""
    hex_of = _hex_of(tname, before, after)
    raw = np.ascontiguousarray(arr).view(BITS[tname])
    if raw.ndim == 2:
        return [list(map(hex_of, row)) for row in raw.tolist()]
    return _map_nested(raw.tolist(), hex_of)


def element_texts(tname: str, encode):
    """For 8- and 16-bit types, every bit pattern's `"bits":...,"value":...` tail of an element's
    JSON text (`encode`: the JSON encoder), indexed by the pattern; None for wider types."""
    if HEX_DIGITS[tname] > 4:
        return None
    key = ("element", tname)
    table = _HEX_TABLES.get(key)
    if table is None:
        n = 1 << 4 * HEX_DIGITS[tname]
        patterns = np.arange(n, dtype=np.uint64).astype(BITS[tname])
        arr = patterns.view(NP[tname]) if tname != "bool" else patterns.astype(bool)
        bits = bits_list(patterns, tname)
        with np.errstate(invalid="ignore"):          # the NaN patterns, widened
            vals = encode(value_list(arr, tname))[1:-1].split(",")
        table = _HEX_TABLES[key] = [f'"{b}","value":{v}' for b, v in zip(bits, vals)]
    return table


def value_list(arr: np.ndarray, tname: str):
    """Values of `arr` as nested lists of JSON-safe Python values."""
    arr = np.asarray(arr)
    if tname in FLOATS or tname in MINIFLOATS:
        wide = arr.astype(np.float64)
        out = wide.tolist()
        if not np.isfinite(wide).all():
            out = _map_nested(out, special)
        return out
    if tname == "bool":
        return arr.astype(bool).tolist()
    return arr.astype(np.int64).tolist()


def special(x):
    if x != x:
        return "nan"
    if x == float("inf"):
        return "inf"
    if x == float("-inf"):
        return "-inf"
    return x


def json_value(v):
    """A Python/numpy scalar or nested list as JSON-safe data."""
    if isinstance(v, (list, tuple)):
        return [json_value(x) for x in v]
    if isinstance(v, (np.floating, float)):
        return special(float(v))
    if isinstance(v, (np.integer, int)) and not isinstance(v, bool):
        return int(v)
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    return v


def _map_nested(x, fn):
    if isinstance(x, list):
        return [_map_nested(y, fn) for y in x]
    return fn(x)


def decode_bits(bits, tname: str) -> np.ndarray:
    """Hex strings (or ints) -> array of element type `tname` with exactly those bits."""
    ints = np.array([int(b, 16) if isinstance(b, str) else int(b) for b in np.ravel(bits)],
                    dtype=np.uint64)
    return ints.astype(BITS[tname]).view(NP[tname]).reshape(np.shape(bits))


def mask_hex(m: np.ndarray) -> str:
    """A lane mask (bool array, lane 0 first) as hex, bit i = lane i."""
    n = len(m)
    v = 0
    for i in np.flatnonzero(m).tolist():
        v |= 1 << i
    return f"0x{v:0{max(1, (n + 3) // 4)}x}"


def mask_lanes(text: str, n: int) -> list[int]:
    v = int(text, 16)
    return [i for i in range(n) if v >> i & 1]


BITS_OF = {k: v for k, v in BITS.items()}
