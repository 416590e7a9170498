"""emu.wgpu's public names (emu/wgpu/__init__.py loads this module on first use).

A drop-in wgpu-py adapter: unchanged wgpu-py / wgpudawn host programs run on emu's virtual GPU.

Three ways in:

* ``python -m emu.wgpu program.py ARGS``  runs an unmodified program with emu's adapter (works
  without installing anything); ``--profile NAME`` or ``EMU_PROFILE`` picks the device profile.
* ``EMU_WGPU=1 python program.py``  does the same once the start-up hook is installed
  (``python -m emu.wgpu --install-hook``, which writes ``emu_wgpu.pth`` into site-packages), or,
  with nothing installed, ``EMU_WGPU=1 PYTHONPATH=$(python -m emu.wgpu --boot-dir) python program.py``.
* ``import emu.wgpu; emu.wgpu.install()``  in the program (or a conftest), before or after
  ``import wgpu`` / ``import wgpudawn``.

After installing, ``wgpu.gpu`` and ``wgpudawn.gpu`` hand out emu adapters (``adapter.info["vendor"]
== "emu"``, ``adapter.info["emu_profile"]`` names the profile); wgpudawn's
``extras.get_adapter_properties(adapter)`` returns the profile's ``subgroup_matrix_configs``.
``emu.wgpu`` itself is also usable as the module: ``import emu.wgpu as wgpu``.

Only the compute subset of the API is emulated (buffers, mapping, queue writes and reads, shader
modules, compute pipelines with overrides, bind groups and layouts, copies, clears, direct and
indirect dispatches); anything else raises ``emu.wgpu.NotSupportedError`` naming it.
"""
from __future__ import annotations

from ._compat import enums, flags, structs
from ._compat import GPUError, GPUValidationError, GPUOutOfMemoryError, GPUInternalError  # noqa: F401
from ._adapter import GPU, GPUAdapter, GPUAdapterInfo  # noqa: F401
from ._bindings import GPUBindGroupLayout, GPUPipelineLayout, GPUBindGroup  # noqa: F401
from ._buffer import GPUBuffer  # noqa: F401
from ._commands import GPUCommandEncoder, GPUComputePassEncoder, GPUCommandBuffer  # noqa: F401
from ._common import NotSupportedError, DEFAULT_LIMITS  # noqa: F401
from ._device import GPUDevice  # noqa: F401
from ._pipeline import GPUComputePipeline  # noqa: F401
from ._promise import GPUPromise  # noqa: F401
from ._queue import GPUQueue  # noqa: F401
from ._shader import GPUShaderModule, GPUCompilationInfo, GPUCompilationMessage  # noqa: F401
from ._install import adapter_properties, is_emu_adapter  # noqa: F401
from ._install import flavor_gpu

# the flags, enums and structs at the top level, as in wgpu-py (wgpu.BufferUsage, ...)
for _mod in (flags, enums, structs):
    for _name in getattr(_mod, "__all__", ()):
        globals().setdefault(_name, getattr(_mod, _name))
del _mod, _name

gpu = flavor_gpu("emu")
"""The entry point, like ``wgpu.gpu``: ``emu.wgpu.gpu.request_adapter_sync()``."""

__version__ = "0.32.0"

__all__ = [
    "gpu", "adapter_properties", "is_emu_adapter", "flags", "enums",
    "structs", "GPUError", "GPUValidationError", "GPUOutOfMemoryError", "GPUInternalError",
    "GPU", "GPUAdapter", "GPUAdapterInfo", "GPUDevice", "GPUQueue", "GPUBuffer", "GPUShaderModule",
    "GPUCompilationInfo", "GPUCompilationMessage", "GPUBindGroupLayout", "GPUPipelineLayout",
    "GPUBindGroup", "GPUComputePipeline", "GPUCommandEncoder", "GPUComputePassEncoder",
    "GPUCommandBuffer", "GPUPromise", "NotSupportedError", "DEFAULT_LIMITS",
]
__all__.extend(n for m in (flags, enums, structs) for n in getattr(m, "__all__", ()))       # the wgpu-py API version this adapter follows
