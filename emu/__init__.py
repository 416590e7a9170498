"""emu: a virtual GPU for WGSL compute shaders with cooperative matrices (tensor cores)."""
from .version import __version__  # noqa: F401
from . import startup as _startup
from . import server as _server

_server.hand_over()                     # `emu run` where `emu serve` listens: run there, exit

_blas = _startup.one_blas_thread()      # the `emu` command and the Vulkan driver only: numpy loads below
try:
    from .api import Buffer, ComputePipeline, Device, ShaderModule, compile_wgsl  # noqa: E402,F401
    from .errors import EmuError, HostError  # noqa: E402,F401
finally:
    _startup.restore(_blas)
