"""NVRTC wrapper: CUDA C++ text -> cubin (or PTX) through cuda-bindings, with every return code checked."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from .cache import BinaryCache, cache_key
from .compile_result import CompiledBinary
from .elf import EM_CUDA, STT_FUNC, elf_machine, elf_symbols
from .errors import GpuCompileError, ToolchainUnavailable
from .options import DEFAULT_ARCH, CudaOptions

_INSTALL_HINT = "pip install 'cuda-bindings>=13.0,<14' 'nvidia-cuda-nvrtc==13.0.*'  (or: pip install 'rs2gpu[cuda]')"

# st_other bit that marks a kernel entry point (as opposed to a device function) in a cubin.
_STO_CUDA_ENTRY = 0x10


def _bindings() -> Any:
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise ToolchainUnavailable(f"NVRTC is not available (no cuda.bindings): {_INSTALL_HINT}") from exc
    return nvrtc


def _error_name(status: Any) -> str:
    nvrtc = _bindings()
    _, name = nvrtc.nvrtcGetErrorString(status)
    return name.decode()


def _check(result: tuple[Any, ...], call: str) -> Any:
    """Unpack a cuda-bindings `(status, value...)` tuple, raising when the status is not NVRTC_SUCCESS."""
    nvrtc = _bindings()
    status, *values = result
    if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"{call} failed: {_error_name(status)}")
    return values[0] if len(values) == 1 else tuple(values)


@lru_cache(maxsize=1)
def nvrtc_version() -> tuple[int, int]:
    nvrtc = _bindings()
    try:
        # The first call loads libnvrtc; cuda-bindings raises its own loader errors when it is missing.
        result = nvrtc.nvrtcVersion()
    except Exception as exc:
        raise ToolchainUnavailable(f"the NVRTC library cannot be loaded ({exc}): {_INSTALL_HINT}") from exc
    major, minor = _check(result, "nvrtcVersion")
    return major, minor


@lru_cache(maxsize=1)
def supported_archs() -> tuple[int, ...]:
    """The compute capabilities this NVRTC compiles for: 90 for sm_90 and compute_90 (and their `a`/`f` forms)."""
    nvrtc_version()  # loads the library, or says how to install it
    return tuple(_check(_bindings().nvrtcGetSupportedArchs(), "nvrtcGetSupportedArchs"))


@lru_cache(maxsize=1)
def _compiler_version() -> str:
    major, minor = nvrtc_version()
    version = f"nvrtc {major}.{minor}"
    # nvrtcVersion has no patch level; the wheel's version has it when the library came from that wheel.
    try:
        from importlib.metadata import version as dist_version

        from cuda.pathfinder import load_nvidia_dynamic_lib

        if load_nvidia_dynamic_lib("nvrtc").found_via == "site-packages":
            version += f" (nvidia-cuda-nvrtc {dist_version('nvidia-cuda-nvrtc')})"
    except Exception:
        pass
    return version


# NVRTC writes into the buffers it is given, so they must be mutable: `b" " * 1` is Python's shared
# one-byte object, and writing a log's terminating NUL into it changes `b" "` for the whole process.


def _program_log(nvrtc: Any, program: Any) -> str:
    size = _check(nvrtc.nvrtcGetProgramLogSize(program), "nvrtcGetProgramLogSize")
    buffer = bytearray(size)
    _check(nvrtc.nvrtcGetProgramLog(program, buffer), "nvrtcGetProgramLog")
    return bytes(buffer).rstrip(b"\0").decode("utf-8", errors="replace")


def _program_binary(nvrtc: Any, program: Any, ptx: bool) -> bytes:
    if ptx:
        size = _check(nvrtc.nvrtcGetPTXSize(program), "nvrtcGetPTXSize")
        buffer = bytearray(size)
        _check(nvrtc.nvrtcGetPTX(program, buffer), "nvrtcGetPTX")
    else:
        size = _check(nvrtc.nvrtcGetCUBINSize(program), "nvrtcGetCUBINSize")
        buffer = bytearray(size)
        _check(nvrtc.nvrtcGetCUBIN(program, buffer), "nvrtcGetCUBIN")
    return bytes(buffer)


def nvcc_command(source_name: str, opts: CudaOptions, extra: Sequence[str] = ()) -> str:
    """An nvcc command line that compiles `source_name` the way NVRTC was asked to."""
    path = PurePosixPath(source_name)
    output = path.with_suffix(".ptx" if opts.emits_ptx else ".cubin").name
    language = [] if path.suffix == ".cu" else ["-x", "cu"]
    mode = "-ptx" if opts.emits_ptx else "-cubin"
    return shlex.join(["nvcc", mode, *opts.flags(), *extra, *language, "-o", output, source_name])


def compile_cuda(
    source: str,
    source_name: str,
    arch: str = DEFAULT_ARCH["cuda"],
    options: Sequence[str] = (),
    *,
    fast_math: bool = False,
) -> CompiledBinary:
    """Compile CUDA C++ with NVRTC: a cubin for `sm_XX`, NUL-terminated PTX for `compute_XX`.

    `options` are extra NVRTC flags appended after the defaults of `CudaOptions` (which include `--fmad=false`
    unless `fast_math`). Raises ValueError for a malformed arch, GpuCompileError when NVRTC rejects the source
    or the options, ToolchainUnavailable when NVRTC is missing.
    """
    opts = CudaOptions(arch, fast_math)
    flags = [*opts.flags(), *options]
    nvrtc = _bindings()
    version = _compiler_version()
    program = _check(nvrtc.nvrtcCreateProgram(source.encode(), source_name.encode(), 0, [], []), "nvrtcCreateProgram")
    try:
        (status,) = nvrtc.nvrtcCompileProgram(program, len(flags), [flag.encode() for flag in flags])
        log = _program_log(nvrtc, program)
        if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise GpuCompileError(
                f"NVRTC could not compile {source_name} for {arch} ({_error_name(status)})",
                log=log,
                source=source,
                source_name=source_name,
                command=nvcc_command(source_name, opts, options),
            )
        binary = _program_binary(nvrtc, program, opts.emits_ptx)
    finally:
        _check(nvrtc.nvrtcDestroyProgram(program), "nvrtcDestroyProgram")
    return CompiledBinary(binary=binary, log=log, target="cuda", arch=arch, compiler_version=version)


def cuda_cache_key(source: str, arch: str, fast_math: bool) -> str:
    """The disk-cache key of a compile: the source, the options and the NVRTC version that compiles it."""
    return cache_key("cuda", source, CudaOptions(arch, fast_math).key(), repr(nvrtc_version()))


def cached_compile_cuda(cache: BinaryCache, source: str, source_name: str, arch: str,
                        fast_math: bool = False) -> tuple[bytes, bool]:
    """The cubin of `source` from the disk cache, or compiled by NVRTC and stored there; with whether
    NVRTC ran. Needs no GPU and no driver: only NVRTC, and not even that to compile on a cache hit."""
    return cache.get_or_make(cuda_cache_key(source, arch, fast_math),
                             lambda: compile_cuda(source, source_name, arch, fast_math=fast_math).binary)


def cubin_symbols(binary: bytes) -> list[str]:
    """Names of the kernel entry points of a cubin (device functions are left out)."""
    if elf_machine(binary) != EM_CUDA:
        raise ValueError("not a cubin: the ELF machine is not EM_CUDA")
    return [s.name for s in elf_symbols(binary) if s.kind == STT_FUNC and s.other & _STO_CUDA_ENTRY]
