"""C++ names for Rust identifiers.

Rust names are kept where C++ allows them. A name that would clash with a C++ keyword, a CUDA/HIP
built-in, a math function or a type name of the prelude gets a trailing underscore; a name that
already ends in underscores after such a base gets one more, so the mapping stays one-to-one
(`max` → `max_`, `max_` → `max__`, `maxi` stays). Everything the emitter invents starts with
`rs2gpu_`, and user names with that prefix are mangled too.
"""
from __future__ import annotations

CPP_KEYWORDS = set("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct
switch template this thread_local throw true try typedef typeid typename union unsigned using virtual void
volatile wchar_t while xor xor_eq NULL main restrict
""".split())

GPU_BUILTINS = set("""
threadIdx blockIdx blockDim gridDim warpSize dim3 uint3 float2 float3 float4 double2 double3 double4 int2 int3
int4 uchar1 char1 short2 half __half min max abs fabs sqrt cbrt exp exp2 expm1 log log2 log10 log1p pow sin
cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh floor ceil round trunc fmod fmin fmax fma hypot
copysign norm rnorm rsqrt erf erfc lgamma tgamma signbit isnan isinf isfinite nan powi ldexp frexp modf
sincos assert printf malloc free memcpy memset atomicAdd atomicSub atomicMin atomicMax atomicCAS atomicExch
atomicAnd atomicOr atomicXor clock clock64 size_t ptrdiff_t int8_t int16_t int32_t int64_t uint8_t uint16_t
uint32_t uint64_t std cuda hip __syncthreads
sqrtf cbrtf expf exp2f expm1f logf log1pf log2f log10f fabsf floorf ceilf roundf truncf sinf cosf tanf asinf
acosf atanf sinhf coshf tanhf asinhf acoshf atanhf fminf fmaxf powf atan2f hypotf copysignf fmodf fmaf
""".split())  # the f32 spellings too: the emitter calls them, and a local of that name would hide them

PRELUDE_TYPES = {"i8", "i16", "i32", "i64", "isize", "u8", "u16", "u32", "u64", "usize", "f32", "f64"}

RESERVED = CPP_KEYWORDS | GPU_BUILTINS | PRELUDE_TYPES


def cxx_name(rust_name: str) -> str:
    base = rust_name.rstrip("_")
    if base in RESERVED or rust_name.startswith("rs2gpu_") or rust_name.startswith("__"):
        return rust_name + "_"
    return rust_name


class LocalNames:
    """Unique C++ names for the bindings of one function, so shadowed Rust names become distinct
    C++ variables: the first `x` keeps its name, later ones become `x_1`, `x_2`, ... (skipping names
    already given out). A slice parameter's length is a name of its own (`a_len`), given out here too,
    so that a Rust variable called `a_len` can neither collide with it nor hide it."""

    def __init__(self, reserved=frozenset()) -> None:
        self._names: dict[object, str] = {}
        self._used: set[str] = set(reserved)  # the C++ names of the crate's helpers, consts and structs
        self.lengths_read: set = set()

    def name(self, binding) -> str:
        return self._unique(binding.node_id, cxx_name(binding.name))

    def length_name(self, binding) -> str:
        """The name of the length that travels with the slice `binding`, for code that reads it: the
        bindings whose lengths were asked for are `lengths_read`, and a launch takes only the lengths its
        code reads."""
        self.lengths_read.add(binding)
        return self.length_parameter(binding)

    def length_parameter(self, binding) -> str:
        """The same name, for the declaration of the parameter (not a read)."""
        return self._unique(("len", binding.node_id), self.name(binding) + "_len")

    def _unique(self, key, base: str) -> str:
        if key not in self._names:
            candidate, n = base, 0
            while candidate in self._used:
                n += 1
                candidate = f"{base}_{n}"
            self._used.add(candidate)
            self._names[key] = candidate
        return self._names[key]

    def fresh(self, hint: str) -> str:
        """A name for a temporary the emitter needs; the `rs2gpu_` prefix keeps it apart from Rust names."""
        candidate, n = f"rs2gpu_{hint}", 0
        while candidate in self._used:
            n += 1
            candidate = f"rs2gpu_{hint}{n}"
        self._used.add(candidate)
        return candidate
