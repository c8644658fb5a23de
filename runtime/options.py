"""Per-vendor compile options: the flags each compile wrapper passes, and a stable key for a disk cache.

Rust never fuses `a * b + c` into one rounding, and the rustc build is the reference the GPU results are
compared with, so both vendors compile without FMA contraction unless a kernel opts in with `fast_math`.
`fast_math` only allows contraction; it does not enable approximate math functions or flush denormals.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass

CXX_STANDARD = "c++17"

# The architecture each target compiles for where the caller names none.
DEFAULT_ARCH = {"cuda": "sm_90", "hip": "gfx90a"}



def device_arch(major: int, minor: int) -> str:
    """The architecture a CUDA device of compute capability major.minor compiles for at run time: its own,
    with Hopper's architecture-specific features (`sm_90a`: the warpgroup products of the tensor-core
    tiles), which a cubin may use where it runs on that very architecture."""
    return f"sm_{major}{minor}{'a' if (major, minor) == (9, 0) else ''}"


_CUDA_ARCH = re.compile(r"^(sm|compute)_[0-9]{2,3}[af]?$")
# `gfx90a`, `gfx1030`, `gfx90a:sramecc+:xnack-`, and ROCm 6's generic targets such as `gfx10-3-generic`.
_HIP_ARCH = re.compile(r"^gfx([0-9a-f]{3,4}|[0-9]+(-[0-9]+)?-generic)(:[a-z0-9_]+[+-])*$")


def _digest(vendor: str, fields: dict[str, object], flags: list[str]) -> str:
    # The flags are part of the key so that changing a default flag invalidates cached binaries.
    payload = json.dumps({"vendor": vendor, "fields": fields, "flags": flags}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class CudaOptions:
    """NVRTC options. `sm_XX` produces a cubin, `compute_XX` produces PTX."""

    arch: str = DEFAULT_ARCH["cuda"]
    fast_math: bool = False

    def __post_init__(self) -> None:
        if not _CUDA_ARCH.match(self.arch):
            raise ValueError(f"invalid CUDA arch {self.arch!r}: expected sm_XX or compute_XX, e.g. 'sm_90'")

    @property
    def emits_ptx(self) -> bool:
        return self.arch.startswith("compute_")

    def flags(self) -> list[str]:
        return [f"-arch={self.arch}", f"--std={CXX_STANDARD}", f"--fmad={'true' if self.fast_math else 'false'}"]

    def key(self) -> str:
        return _digest("cuda", asdict(self), self.flags())


@dataclass(frozen=True, slots=True)
class HipOptions:
    """Options shared by hiprtc and clang: both accept exactly these flags."""

    arch: str = DEFAULT_ARCH["hip"]
    fast_math: bool = False

    def __post_init__(self) -> None:
        if not _HIP_ARCH.match(self.arch):
            raise ValueError(
                f"invalid AMD GPU arch {self.arch!r}: expected 'gfx' and hex digits with optional "
                "':feature+' or ':feature-' suffixes, e.g. 'gfx90a' or 'gfx90a:xnack-'"
            )

    def flags(self) -> list[str]:
        # hiprtc contracts by default (-ffp-contract=fast), so "off" must be explicit. -O3 is hiprtc's default
        # and is spelled out so that clang compiles the same way.
        contract = "fast" if self.fast_math else "off"
        return [f"--offload-arch={self.arch}", "-O3", f"-std={CXX_STANDARD}", f"-ffp-contract={contract}"]

    def key(self) -> str:
        return _digest("hip", asdict(self), self.flags())


# hiprtc compiles with __HIPCC_RTC__ defined and the HIP device headers already included, plus the warp functions
# (warpSize, __shfl*) that those headers leave out in RTC mode. These flags give clang and hipcc the same
# environment, so one generated source compiles on every HIP path.
HIPRTC_ENVIRONMENT = (
    "-D__HIPCC_RTC__",
    "-include",
    "hip/hip_runtime.h",
    "-include",
    "hip/amd_detail/amd_warp_functions.h",
)
