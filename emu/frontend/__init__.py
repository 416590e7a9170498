"""The front ends, each source text -> the cooperative IR: WGSL (emu.frontend.wgsl) and SPIR-V,
its assembly and GLSL (emu.frontend.spirv). Which one a file goes to is decided here, without
importing either."""
from __future__ import annotations

SPIRV_SUFFIXES = (".spv", ".spvasm", ".comp", ".glsl")


def is_spirv_file(file: str) -> bool:
    return file.lower().endswith(SPIRV_SUFFIXES)
