"""Generated C++ text -> device binaries (and, later, running kernels).

The compile wrappers live in their own modules so that importing this package loads no vendor library:
`nvrtc.compile_cuda`, `hiprtc.compile_hip`, `hipclang.compile_hip_clang`.
"""

from .compile_result import CompiledBinary
from .errors import GpuCompileError, ToolchainUnavailable
from .options import CudaOptions, HipOptions

__all__ = ["CompiledBinary", "CudaOptions", "GpuCompileError", "HipOptions", "ToolchainUnavailable"]
