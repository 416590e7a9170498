"""Shader modules and their compilation info."""
from __future__ import annotations

from ._compat import binding_bases
from ._common import GPUObjectBase
from ._promise import GPUPromise


class GPUCompilationMessage(*binding_bases("GPUCompilationMessage")):
    def __init__(self, message, type, line_num, line_pos, offset=0, length=0):
        self._m = (message, type, line_num, line_pos, offset, length)

    message = property(lambda self: self._m[0])
    type = property(lambda self: self._m[1])
    line_num = property(lambda self: self._m[2])
    line_pos = property(lambda self: self._m[3])
    offset = property(lambda self: self._m[4])
    length = property(lambda self: self._m[5])

    def __repr__(self):
        return f"<GPUCompilationMessage {self.type} {self.line_num}:{self.line_pos} {self.message!r}>"


class GPUCompilationInfo(*binding_bases("GPUCompilationInfo")):
    def __init__(self, messages):
        self._messages = list(messages)

    @property
    def messages(self) -> list:
        return self._messages


class GPUShaderModule(GPUObjectBase, *binding_bases("GPUShaderModule")):
    """A WGSL module compiled by emu's front end (either cooperative-matrix dialect)."""

    def __init__(self, label, device, emu_module, code: str, file: str):
        super().__init__(label, device)
        self._emu, self._code, self._file = emu_module, code, file

    def get_compilation_info_sync(self) -> GPUCompilationInfo:
        msgs = []
        for w in self._emu.warnings:
            loc = w.loc
            line = getattr(loc, "line", 0) or 0
            col = getattr(loc, "col", 0) or 0
            msgs.append(GPUCompilationMessage(w.message, "warning", line, col))
        return GPUCompilationInfo(msgs)

    def get_compilation_info_async(self) -> GPUPromise:
        return GPUPromise.run("get_compilation_info", self.get_compilation_info_sync)

    @property
    def emu_module(self):
        """The emu ShaderModule (its ``ir`` is the cooperative IR; emu extension)."""
        return self._emu


# wgpu-py's deprecated name for get_compilation_info_sync
GPUShaderModule.get_compilation_info = GPUShaderModule.get_compilation_info_sync
