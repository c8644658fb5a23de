"""The vendor table: every difference between CUDA and HIP output lives here and in the preludes.

Templates read these fields; no other code asks which vendor it is emitting for.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    name: str               # "cuda" | "hip": the manifest's and the CLI's name for the target
    file_suffix: str        # the generated file's extension
    prelude: str            # the template with this vendor's typedefs and built-in declarations
    language: str           # what a reader should call the file
    compiler: str           # the run-time compiler that takes this file
    default_arch: str
    warp_size: int          # threads that execute in lockstep: 32 on NVIDIA, 64 on AMD CDNA
    strict_fp_flags: tuple[str, ...]  # what keeps a*b+c from becoming an fma (Rust never contracts)
    fast_math_flags: tuple[str, ...]
    forceinline: str
    signed_64_bit_atomic_min_max: bool  # atomicMin/atomicMax take `long long*` (else a compare-and-swap loop)


CUDA = Dialect(
    name="cuda", file_suffix=".cu", prelude="prelude_cuda.j2", language="CUDA C++", compiler="NVRTC",
    default_arch="sm_90", warp_size=32,
    strict_fp_flags=("--fmad=false",), fast_math_flags=("--fmad=true", "--use_fast_math"),
    forceinline="__forceinline__", signed_64_bit_atomic_min_max=True,
)

HIP = Dialect(
    name="hip", file_suffix=".hip.cpp", prelude="prelude_hip.j2", language="HIP C++", compiler="hiprtc",
    default_arch="gfx90a", warp_size=64,
    strict_fp_flags=("-ffp-contract=off",), fast_math_flags=("-ffp-contract=fast", "-ffast-math"),
    forceinline="inline __attribute__((always_inline))", signed_64_bit_atomic_min_max=False,
)

DIALECTS = {d.name: d for d in (CUDA, HIP)}
