import pytest

from rs2gpu.runtime.errors import GpuCompileError, ToolchainUnavailable
from rs2gpu.runtime.hipclang import code_object_symbols, compile_hip_clang, find_toolchain
from rs2gpu.runtime.offload_bundle import MAGIC

# Names generated code may use. hiprtc predefines all of them; plain `clang -x hip` declares only the math
# functions and __global__/__shared__, so compile_hip_clang must supply the rest.
HIPRTC_BUILTINS = """\
typedef double f64;
extern "C" __global__ void rs2gpu_builtins(f64* __restrict__ a, unsigned long long* __restrict__ n) {
    __shared__ f64 tile[64];
    tile[threadIdx.x % 64] = a[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    f64 v = __shfl_down(tile[threadIdx.x % 64], 1, warpSize) + (f64)gridDim.x;
    atomicAdd(n, (unsigned long long)1);
    a[threadIdx.x] = sqrt(v) + exp(v) + fmin(v, 1.0) + pow(v, 2.0) + floor(v);
}
"""


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1030"])
def test_clang_compiles_a_code_object_with_the_kernel(triad_source, arch):
    compiled = compile_hip_clang(triad_source, "triad.hip.cpp", arch)
    assert compiled.binary.startswith(b"\x7fELF") and code_object_symbols(compiled.binary) == ["rs2gpu_triad"]


def test_clang_sees_the_names_hiprtc_predefines():
    compiled = compile_hip_clang(HIPRTC_BUILTINS, "builtins.hip.cpp")
    assert code_object_symbols(compiled.binary) == ["rs2gpu_builtins"]


def test_hiprtc_sees_the_same_names():
    from rs2gpu.runtime.hiprtc import compile_hip

    compiled = compile_hip(HIPRTC_BUILTINS, "builtins.hip.cpp")
    assert code_object_symbols(compiled.binary) == ["rs2gpu_builtins"]


def test_code_object_symbols_read_an_offload_bundle(triad_source):
    compiled = compile_hip_clang(triad_source, "triad.hip.cpp", options=["--gpu-bundle-output"])
    assert compiled.binary.startswith(MAGIC) and code_object_symbols(compiled.binary) == ["rs2gpu_triad"]


def test_clang_rejects_an_unknown_arch(triad_source):
    with pytest.raises(GpuCompileError, match="invalid target ID 'gfx9999'"):
        compile_hip_clang(triad_source, "triad.hip.cpp", "gfx9999")


def test_compiler_version_names_clang_and_hip(triad_source):
    compiled = compile_hip_clang(triad_source, "triad.hip.cpp")
    assert compiled.compiler_version == find_toolchain().describe()
    assert "clang" in compiled.compiler_version and "HIP " in compiled.compiler_version


def test_missing_clang_is_reported_with_what_to_install():
    with pytest.raises(ToolchainUnavailable, match="apt-get install"):
        find_toolchain(clang="clang++-no-such-version")
