"""Kernel sources shaped like rs2gpu's output: no includes, own typedefs, `#line` into the Rust file."""

import pytest

TRIAD = """\
typedef double f64;
typedef unsigned long long usize;
#line 3 "src/lib.rs"
extern "C" __global__ void rs2gpu_triad(f64* __restrict__ a, const f64* __restrict__ b,
                                        const f64* __restrict__ c, f64 alpha, usize n) {
    usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = b[i] + alpha * c[i] + sqrt(b[i]) + exp(c[i]) + fmin(b[i], c[i]) + (f64)gridDim.x;
    }
}
"""

# Line 4 of src/lib.rs initialises a pointer with a double.
TYPE_ERROR = """\
typedef double f64;
#line 3 "src/lib.rs"
extern "C" __global__ void rs2gpu_bad(f64* __restrict__ a) {
    f64* p = a[0];
    a[0] = *p;
}
"""

# A multiply-add that contraction would fuse into one instruction.
MULTIPLY_ADD = """\
typedef double f64;
extern "C" __global__ void rs2gpu_axpy(f64* __restrict__ y, const f64* __restrict__ x, f64 alpha) {
    unsigned i = threadIdx.x;
    y[i] = alpha * x[i] + y[i];
}
"""


@pytest.fixture
def triad_source() -> str:
    return TRIAD


@pytest.fixture
def type_error_source() -> str:
    return TYPE_ERROR


@pytest.fixture
def multiply_add_source() -> str:
    return MULTIPLY_ADD


@pytest.fixture(scope="session")
def nvrtc_triad():
    from rs2gpu.runtime.nvrtc import compile_cuda

    return compile_cuda(TRIAD, "triad.cu", "sm_90")


@pytest.fixture(scope="session")
def hiprtc_triad():
    from rs2gpu.runtime.hiprtc import compile_hip

    return compile_hip(TRIAD, "triad.hip.cpp", "gfx90a")
