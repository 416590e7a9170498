"""Texel formats: what a texel of each WebGPU format holds and how its bytes become the numbers a
shader sees (and back), bit exact.

A format is its channels (in memory order), the kind of each channel's number and its width. The
shader always sees four components (vec4 of f32, i32 or u32; missing channels read as 0, alpha as
1); the rules are WebGPU's (and Vulkan's, which it follows):
- unorm: x / (2^n - 1) on reading; on writing, clamp to [0, 1], scale by 2^n - 1 and round to
  nearest, ties to even (Vulkan's "round to nearest" for unorm conversions);
- snorm: max(x / (2^(n-1) - 1), -1) on reading (both -2^(n-1) and -2^(n-1)+1 give -1); writing
  clamps to [-1, 1] and rounds as unorm does;
- uint/sint: the integer, on writing truncated to the channel's width (WebGPU leaves values out of
  range to the implementation: the low bits are what Vulkan drivers store);
- float: f32 as is; f16 by round to nearest even (f32 -> f16);
- ufloat (rg11b10ufloat): unsigned 11- and 10-bit floats (5-bit exponent, no sign);
- srgb: the sRGB transfer function on the colour channels, then unorm.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TexelFormat:
    name: str
    channels: str            # memory order, e.g. "rgba", "bgra", "rg"
    kind: str                # unorm snorm uint sint float ufloat
    bits: tuple[int, ...]    # per channel, in memory order
    srgb: bool = False
    depth: bool = False

    @property
    def bytes(self) -> int:
        return sum(self.bits) // 8

    @property
    def sampled(self) -> str:
        """The shader's component type: f32, i32 or u32."""
        return {"uint": "u32", "sint": "i32"}.get(self.kind, "f32")

    @property
    def filterable(self) -> bool:
        return self.kind in ("unorm", "snorm", "ufloat") or (self.kind == "float" and max(self.bits) <= 16)


def _fmt(name, channels, kind, bits, **kw):
    return TexelFormat(name, channels, kind, (bits,) * len(channels) if isinstance(bits, int) else bits, **kw)


_ALL = [
    _fmt("r8unorm", "r", "unorm", 8), _fmt("r8snorm", "r", "snorm", 8),
    _fmt("r8uint", "r", "uint", 8), _fmt("r8sint", "r", "sint", 8),
    _fmt("rg8unorm", "rg", "unorm", 8), _fmt("rg8snorm", "rg", "snorm", 8),
    _fmt("rg8uint", "rg", "uint", 8), _fmt("rg8sint", "rg", "sint", 8),
    _fmt("rgba8unorm", "rgba", "unorm", 8), _fmt("rgba8unorm-srgb", "rgba", "unorm", 8, srgb=True),
    _fmt("rgba8snorm", "rgba", "snorm", 8), _fmt("rgba8uint", "rgba", "uint", 8),
    _fmt("rgba8sint", "rgba", "sint", 8),
    _fmt("bgra8unorm", "bgra", "unorm", 8), _fmt("bgra8unorm-srgb", "bgra", "unorm", 8, srgb=True),
    _fmt("r16unorm", "r", "unorm", 16), _fmt("r16snorm", "r", "snorm", 16),
    _fmt("r16uint", "r", "uint", 16), _fmt("r16sint", "r", "sint", 16), _fmt("r16float", "r", "float", 16),
    _fmt("rg16unorm", "rg", "unorm", 16), _fmt("rg16snorm", "rg", "snorm", 16),
    _fmt("rg16uint", "rg", "uint", 16), _fmt("rg16sint", "rg", "sint", 16),
    _fmt("rg16float", "rg", "float", 16),
    _fmt("rgba16unorm", "rgba", "unorm", 16), _fmt("rgba16snorm", "rgba", "snorm", 16),
    _fmt("rgba16uint", "rgba", "uint", 16), _fmt("rgba16sint", "rgba", "sint", 16),
    _fmt("rgba16float", "rgba", "float", 16),
    _fmt("r32uint", "r", "uint", 32), _fmt("r32sint", "r", "sint", 32), _fmt("r32float", "r", "float", 32),
    _fmt("rg32uint", "rg", "uint", 32), _fmt("rg32sint", "rg", "sint", 32),
    _fmt("rg32float", "rg", "float", 32),
    _fmt("rgba32uint", "rgba", "uint", 32), _fmt("rgba32sint", "rgba", "sint", 32),
    _fmt("rgba32float", "rgba", "float", 32),
    _fmt("rgb10a2uint", "rgba", "uint", (10, 10, 10, 2)), _fmt("rgb10a2unorm", "rgba", "unorm", (10, 10, 10, 2)),
    _fmt("rg11b10ufloat", "rgb", "ufloat", (11, 11, 10)),
    _fmt("depth32float", "r", "float", 32, depth=True), _fmt("depth16unorm", "r", "unorm", 16, depth=True),
]
FORMATS: dict[str, TexelFormat] = {f.name: f for f in _ALL}

# The formats WGSL's texture_storage_* may name (WGSL's texel formats: the core set, bgra8unorm
# with the bgra8unorm-storage feature, the rest with texture-formats-tier1).
STORAGE_FORMATS = tuple(n for n, f in FORMATS.items() if not f.srgb and not f.depth)
