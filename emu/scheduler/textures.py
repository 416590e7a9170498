"""Executor handler of the `texture` op (textures and samplers bound to the pipeline)."""
from __future__ import annotations

from ..errors import EmuError
from .registry import handler


@handler("texture")
def h_texture(ex, inst, mask, frame):
    raise EmuError(f"'{inst.attrs['fn']}' of a texture: emu lowers and checks texture builtins but does "
                   f"not execute them yet", inst.loc,
                   hint="emu ir and emu check take the shader; run it on a real GPU (emu diff) for now")
