"""The vendor table: every difference between CUDA and HIP output lives here and in the preludes.

Templates read these fields; no other code asks which vendor it is emitting for. A kernel's text is
rendered once and shared by every dialect, so it names the GPU's built-ins by rs2gpu's own names
(`RS2GPU_THREAD_IDX.x`, `RS2GPU_SYNC_THREADS()`, ...), which the prelude defines as the dialect's spelling
of each (`prelude_common.j2`); the emitter's Python never writes a vendor's name.
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
    warp_size: int          # threads that execute in lockstep: 32 on NVIDIA, 64 on AMD CDNA
    forceinline: str
    signed_64_bit_atomic_min_max: bool  # atomicMin/atomicMax take `long long*` (else a compare-and-swap loop)
    # The built-ins the kernels name RS2GPU_THREAD_IDX, RS2GPU_BLOCK_IDX, RS2GPU_BLOCK_DIM and
    # RS2GPU_GRID_DIM (each with the members .x, .y and .z), RS2GPU_SHARED and RS2GPU_SYNC_THREADS().
    thread_idx: str         # the thread's coordinates in its block
    block_idx: str          # the block's coordinates in the grid
    block_dim: str          # the block's extent along each axis
    grid_dim: str           # the grid's extent along each axis, in blocks
    shared: str             # the qualifier of a variable each block holds one copy of
    sync_threads: str       # the call that waits until every thread of the block has reached it


# HIP's own names for the index built-ins, block memory and the block barrier are CUDA's.
CUDA = Dialect(
    name="cuda", file_suffix=".cu", prelude="prelude_cuda.j2", language="CUDA C++", compiler="NVRTC",
    warp_size=32, forceinline="__forceinline__", signed_64_bit_atomic_min_max=True,
    thread_idx="threadIdx", block_idx="blockIdx", block_dim="blockDim", grid_dim="gridDim",
    shared="__shared__", sync_threads="__syncthreads()",
)

HIP = Dialect(
    name="hip", file_suffix=".hip.cpp", prelude="prelude_hip.j2", language="HIP C++", compiler="hiprtc",
    warp_size=64, forceinline="inline __attribute__((always_inline))", signed_64_bit_atomic_min_max=False,
    thread_idx="threadIdx", block_idx="blockIdx", block_dim="blockDim", grid_dim="gridDim",
    shared="__shared__", sync_threads="__syncthreads()",
)

DIALECTS = {d.name: d for d in (CUDA, HIP)}

# The pointer qualifier of the parameters no other parameter aliases (C's `restrict`). The kernel text
# that carries it is shared by every dialect: this is the spelling all of their compilers read.
RESTRICT = "__restrict__"

# Names a Rust binding cannot keep in the generated C++ (emit/names.py adds a trailing underscore): the
# C++ keywords, and what either dialect's compiler predefines or the generated code calls, the f32
# spellings of the math functions included (a local of that name would hide the function).
CPP_KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct
switch template this thread_local throw true try typedef typeid typename union unsigned using virtual void
volatile wchar_t while xor xor_eq NULL main restrict
""".split())

GPU_BUILTINS = frozenset("""
threadIdx blockIdx blockDim gridDim warpSize dim3 uint3 float2 float3 float4 double2 double3 double4 int2 int3
int4 uchar1 char1 short2 half __half min max abs fabs sqrt cbrt exp exp2 expm1 log log2 log10 log1p pow sin
cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh floor ceil round trunc fmod fmin fmax fma hypot
copysign norm rnorm rsqrt erf erfc lgamma tgamma signbit isnan isinf isfinite nan powi ldexp frexp modf
sincos assert printf malloc free memcpy memset atomicAdd atomicSub atomicMin atomicMax atomicCAS atomicExch
atomicAnd atomicOr atomicXor clock clock64 size_t ptrdiff_t int8_t int16_t int32_t int64_t uint8_t uint16_t
uint32_t uint64_t std cuda hip __syncthreads
sqrtf cbrtf expf exp2f expm1f logf log1pf log2f log10f fabsf floorf ceilf roundf truncf sinf cosf tanf asinf
acosf atanf sinhf coshf tanhf asinhf acoshf atanhf fminf fmaxf powf atan2f hypotf copysignf fmodf fmaf
""".split())
