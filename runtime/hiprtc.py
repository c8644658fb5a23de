"""hiprtc wrapper: HIP C++ text -> AMDGPU code object, compiled in a child process.

hiprtc may abort the process it runs in, so each compile runs in a child Python process (`hiprtc_child.py`); a
crash of that child becomes a GpuCompileError instead of killing the caller.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import PurePosixPath

from . import hiprtc_child
from .cache import BinaryCache, cache_key
from .compile_result import CompiledBinary
from .errors import GpuCompileError, ToolchainUnavailable
from .options import DEFAULT_ARCH, HIPRTC_ENVIRONMENT, HipOptions

# hiprtc 5.x ignores the program name and reports the generated file as comgr's temporary input file.
_COMGR_INPUT = re.compile(r"/\S*?comgr-[^/\s]+/input/CompileSource")

# The child runs the stdlib-only module as a script in isolated mode (-I): it neither needs rs2gpu to be
# importable nor puts the script's directory on sys.path, so no module of this package can shadow the stdlib.
_CHILD = [sys.executable, "-I", hiprtc_child.__file__]


@lru_cache(maxsize=1)
def hiprtc_version() -> tuple[int, int]:
    """hiprtcVersion() of the library compile_hip uses (ROCm 5's hiprtc reports 9.0 whatever its release)."""
    try:
        lib = hiprtc_child.load_library()
    except hiprtc_child.LibraryNotFound as exc:
        raise ToolchainUnavailable(str(exc)) from exc
    return hiprtc_child.version(lib)


@lru_cache(maxsize=1)
def hiprtc_library() -> str:
    """The real file of the hiprtc library compile_hip loads (libhiprtc.so.6.x.y, or libamdhip64.so.5.x.y on
    ROCm 5, which has hiprtc inside the HIP runtime)."""
    try:
        lib = hiprtc_child.load_library()
    except hiprtc_child.LibraryNotFound as exc:
        raise ToolchainUnavailable(str(exc)) from exc
    return hiprtc_child.library_path(lib)


def hip_cache_key(source: str, arch: str, fast_math: bool) -> str:
    """The disk-cache key of a compile: the source, the options, and the hiprtc library that compiles it.

    hiprtcVersion() does not tell ROCm 5 releases apart, so the library's versioned file name is part of the key.
    """
    return cache_key("hip", source, HipOptions(arch, fast_math).key(), repr(hiprtc_version()), hiprtc_library())


def cached_compile_hip(cache: BinaryCache, source: str, source_name: str, arch: str,
                       fast_math: bool = False) -> tuple[bytes, bool]:
    """The code object of `source` from the disk cache, or compiled by hiprtc and stored there; with whether
    hiprtc ran. Needs no GPU: only the hiprtc library, and not even a compile on a cache hit."""
    return cache.get_or_make(hip_cache_key(source, arch, fast_math),
                             lambda: compile_hip(source, source_name, arch, fast_math=fast_math).binary)


def hipcc_command(source_name: str, opts: HipOptions, extra: Sequence[str] = ()) -> str:
    """A hipcc command line that compiles `source_name` in the environment hiprtc provides."""
    output = PurePosixPath(source_name).with_suffix(".co").name
    mode = ["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output"]
    argv = ["hipcc", *mode, *opts.flags(), *extra, *HIPRTC_ENVIRONMENT, "-c", "-o", output, source_name]
    # hipcc picks the NVIDIA platform whenever nvcc is installed.
    return "HIP_PLATFORM=amd " + shlex.join(argv)


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def compile_hip(
    source: str,
    source_name: str,
    arch: str = DEFAULT_ARCH["hip"],
    options: Sequence[str] = (),
    *,
    fast_math: bool = False,
    timeout: float = 600.0,
) -> CompiledBinary:
    """Compile HIP C++ with hiprtc into a code object (ELF) for `arch`.

    `options` are extra hiprtc flags appended after the defaults of `HipOptions` (which include
    `-ffp-contract=off` unless `fast_math`). Raises ValueError for a malformed arch, GpuCompileError when hiprtc
    rejects the source or crashes, ToolchainUnavailable when no hiprtc library is found.
    """
    opts = HipOptions(arch, fast_math)
    flags = [*opts.flags(), *options]
    command = hipcc_command(source_name, opts, options)

    def failure(summary: str, log: str) -> GpuCompileError:
        return GpuCompileError(summary, log=log, source=source, source_name=source_name, command=command)

    request = json.dumps({"source": source, "source_name": source_name, "options": flags})
    try:
        child = subprocess.run(_CHILD, input=request.encode(), capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise failure(f"hiprtc did not finish compiling {source_name} for {arch} within {timeout:g} s", "") from exc
    stderr = child.stderr.decode("utf-8", errors="replace")
    if child.returncode < 0:
        raise failure(
            f"hiprtc crashed ({_signal_name(child.returncode)}) while compiling {source_name} for {arch}; "
            "an architecture this ROCm release does not support is the usual cause",
            stderr,
        )
    if child.returncode != 0:
        raise RuntimeError(f"the hiprtc child process failed (exit status {child.returncode}):\n{stderr}")

    reply = json.loads(child.stdout)
    if "unavailable" in reply:
        raise ToolchainUnavailable(reply["unavailable"])
    if "failed" in reply:
        raise RuntimeError(reply["failed"])
    log = _COMGR_INPUT.sub(source_name, reply["log"])
    if reply["status"] != 0:
        raise failure(f"hiprtc could not compile {source_name} for {arch} ({reply['status_name']})", log)
    major, minor = reply["version"]
    version = f"hiprtc {major}.{minor} ({PurePosixPath(reply['library']).name})"
    return CompiledBinary(base64.b64decode(reply["code"]), log, target="hip", arch=arch, compiler_version=version)
