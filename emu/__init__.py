"""emu: a virtual GPU for WGSL compute shaders with cooperative matrices (tensor cores)."""
from .version import __version__  # noqa: F401

from .api import Buffer, ComputePipeline, Device, ShaderModule, compile_wgsl  # noqa: E402,F401
from .errors import EmuError, HostError  # noqa: E402,F401
