"""HIP through clang: HIP C++ text -> AMDGPU code object, for machines (like CI) where only the clang
toolchain and ROCm's headers and device libraries are installed, and for a second opinion on hiprtc.

The source is compiled in the environment hiprtc provides (`HIPRTC_ENVIRONMENT`), so one generated file compiles
on both HIP paths. The ROCm device libraries are linked: the HIP headers implement threadIdx & co. with __ockl_*
and the math functions with __ocml_* calls, so `-nogpulib` leaves them undefined and lld rejects the object.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath

from .compile_result import CompiledBinary
from .elf import EM_AMDGPU, elf_machine, elf_symbols
from .errors import GpuCompileError, ToolchainUnavailable
from .offload_bundle import is_offload_bundle, unbundle
from .options import DEFAULT_ARCH, HIPRTC_ENVIRONMENT, HipOptions

CLANG_CANDIDATES = (
    *(f"clang++-{major}" for major in range(19, 14, -1)),
    "/opt/rocm/llvm/bin/clang++",
    "clang++",
)
ROCM_CANDIDATES = ("/opt/rocm", "/usr")
# Debian installs the device libraries under /usr/lib/<multiarch>/, where clang does not look for them; ROCm 6
# keeps them in its clang's resource directory.
_DEVICE_LIB_GLOBS = (
    "amdgcn/bitcode",
    "lib/amdgcn/bitcode",
    "lib/*/amdgcn/bitcode",
    "lib/llvm/lib/clang/*/lib/amdgcn/bitcode",
)
_HIP_VERSION_DEFINE = re.compile(r"#define HIP_VERSION_(MAJOR|MINOR|PATCH) (\d+)")


@dataclass(frozen=True, slots=True)
class HipClangToolchain:
    clang: str
    clang_version: str
    rocm_path: str  # holds include/hip/hip_runtime.h
    hip_version: tuple[int, int, int]
    device_lib_path: str  # holds ocml.bc, ockl.bc, oclc_*.bc

    def flags(self) -> list[str]:
        major, minor, _ = self.hip_version
        # clang 15 cannot parse Debian's share/hip/version and assumes HIP 3.5, for which it skips its HIP
        # runtime wrapper header (no __global__, no math functions); stating the version avoids that.
        return [
            f"--rocm-path={self.rocm_path}",
            f"--hip-version={major}.{minor}",
            f"--rocm-device-lib-path={self.device_lib_path}",
        ]

    def describe(self) -> str:
        return f"{self.clang_version}; HIP {'.'.join(map(str, self.hip_version))}"


def _has_lld(clang: str) -> bool:
    """Whether `clang` finds the lld it links AMDGPU code objects with (Debian's clang-N does not depend on
    lld-N, and prints the bare name when it has none)."""
    done = subprocess.run([clang, "-print-prog-name=lld"], capture_output=True, text=True)
    found = done.stdout.strip()
    return done.returncode == 0 and Path(found).is_absolute() and Path(found).is_file()


def _find_clang(requested: str | None) -> str:
    tried = []
    for candidate in (requested,) if requested else CLANG_CANDIDATES:
        found = shutil.which(candidate)
        if not found:
            tried.append(candidate)
        elif not _has_lld(found):
            tried.append(f"{candidate} (no lld)")
        else:
            return found
    raise ToolchainUnavailable(
        f"no clang for HIP found (tried {', '.join(tried)}): "
        "`apt-get install clang-15 lld-15 hipcc libamdhip64-dev rocm-device-libs`, or install ROCm"
    )


def _hip_version(rocm_path: Path) -> tuple[int, int, int]:
    parts = dict(_HIP_VERSION_DEFINE.findall((rocm_path / "include/hip/hip_version.h").read_text()))
    return int(parts.get("MAJOR", 0)), int(parts.get("MINOR", 0)), int(parts.get("PATCH", 0))


def _find_rocm(requested: str | None) -> Path:
    for candidate in (requested,) if requested else ROCM_CANDIDATES:
        root = Path(candidate)
        if (root / "include/hip/hip_runtime.h").is_file() and (root / "include/hip/hip_version.h").is_file():
            return root
    raise ToolchainUnavailable("HIP headers (include/hip/hip_runtime.h) not found: `apt-get install libamdhip64-dev`")


def _find_device_libs(rocm_path: Path) -> Path:
    for pattern in _DEVICE_LIB_GLOBS:
        for directory in sorted(rocm_path.glob(pattern), reverse=True):
            if (directory / "ocml.bc").is_file():
                return directory
    raise ToolchainUnavailable(
        f"ROCm device libraries (ocml.bc) not found under {rocm_path}: `apt-get install rocm-device-libs`"
    )


@lru_cache(maxsize=8)
def find_toolchain(clang: str | None = None, rocm_path: str | None = None) -> HipClangToolchain:
    """Locate clang, the HIP headers and the device libraries; raise ToolchainUnavailable naming what is missing."""
    clang_path = _find_clang(clang)
    root = _find_rocm(rocm_path)
    version = subprocess.run([clang_path, "--version"], capture_output=True, text=True, check=True).stdout
    return HipClangToolchain(
        clang=clang_path,
        clang_version=version.splitlines()[0].strip(),
        rocm_path=str(root),
        hip_version=_hip_version(root),
        device_lib_path=str(_find_device_libs(root)),
    )


def _relative_source_path(source_name: str) -> PurePosixPath:
    # The source is written under this name in a scratch directory, so that the log names it like NVRTC does.
    path = PurePosixPath(source_name)
    return PurePosixPath(path.name) if path.is_absolute() or ".." in path.parts else path


def compile_hip_clang(
    source: str,
    source_name: str,
    arch: str = DEFAULT_ARCH["hip"],
    options: Sequence[str] = (),
    *,
    fast_math: bool = False,
    clang: str | None = None,
    timeout: float = 600.0,
) -> CompiledBinary:
    """Compile HIP C++ with clang into a code object (ELF, not an offload bundle) for `arch`.

    Raises ValueError for a malformed arch, GpuCompileError when clang rejects the source or the arch,
    ToolchainUnavailable when clang, the HIP headers or the device libraries are missing.
    """
    opts = HipOptions(arch, fast_math)
    toolchain = find_toolchain(clang)
    relative = _relative_source_path(source_name)
    output = relative.with_suffix(".co").name
    # A plain code object rather than an offload bundle, like hiprtc returns; user options come last to win.
    mode = ["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output"]
    argv = [toolchain.clang, *mode, *opts.flags(), *HIPRTC_ENVIRONMENT, *toolchain.flags(), *options]
    argv += ["-c", "-o", output, str(relative)]
    with tempfile.TemporaryDirectory(prefix="rs2gpu-hip-") as scratch:
        source_path = Path(scratch) / relative
        source_path.parent.mkdir(parents=True, exist_ok=True)
        source_path.write_text(source)
        try:
            done = subprocess.run(argv, cwd=scratch, capture_output=True, text=True, errors="replace", timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise GpuCompileError(
                f"clang did not finish compiling {source_name} for {arch} within {timeout:g} s",
                log="", source=source, source_name=source_name, command=shlex.join(argv),
            ) from exc
        log = done.stderr + done.stdout
        output_path = Path(scratch) / output
        if done.returncode != 0 or not output_path.is_file():
            raise GpuCompileError(
                f"clang could not compile {source_name} for {arch} (exit status {done.returncode})",
                log=log, source=source, source_name=source_name, command=shlex.join(argv),
            )
        binary = output_path.read_bytes()
    return CompiledBinary(binary, log, target="hip", arch=arch, compiler_version=toolchain.describe())


def code_object_symbols(binary: bytes) -> list[str]:
    """Kernel names of an AMDGPU code object or of a clang offload bundle of them.

    A kernel is a symbol with a kernel descriptor, the `<name>.kd` object the HIP runtime launches through.
    """
    if is_offload_bundle(binary):
        objects = [entry for triple, entry in unbundle(binary).items() if "amdgcn" in triple and entry]
    else:
        objects = [binary]
    names: list[str] = []
    for code_object in objects:
        if elf_machine(code_object) != EM_AMDGPU:
            raise ValueError("not an AMDGPU code object: the ELF machine is not EM_AMDGPU")
        for symbol in elf_symbols(code_object):
            name = symbol.name.removesuffix(".kd")
            if symbol.name.endswith(".kd") and name not in names:
                names.append(name)
    return names
