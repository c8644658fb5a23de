import pytest

from rs2gpu.runtime.errors import GpuCompileError
from rs2gpu.runtime.nvrtc import compile_cuda, cubin_symbols, nvrtc_version

TWO_KERNELS_AND_A_HELPER = """\
typedef double f64;
__device__ __noinline__ f64 twice(f64 x) { return x * 2.0; }
extern "C" __global__ void rs2gpu_first(f64* __restrict__ a) { a[threadIdx.x] = twice(a[threadIdx.x]); }
extern "C" __global__ void rs2gpu_second(f64* __restrict__ a) { a[threadIdx.x] += 1.0; }
"""


def test_nvrtc_version_is_at_least_12():
    assert nvrtc_version() >= (12, 0)


def test_sm_90_compiles_to_a_cubin(nvrtc_triad):
    assert nvrtc_triad.binary.startswith(b"\x7fELF")


def test_cubin_symbols_list_the_kernel(nvrtc_triad):
    assert cubin_symbols(nvrtc_triad.binary) == ["rs2gpu_triad"]


def test_cubin_symbols_leave_out_device_functions():
    compiled = compile_cuda(TWO_KERNELS_AND_A_HELPER, "two.cu")
    assert sorted(cubin_symbols(compiled.binary)) == ["rs2gpu_first", "rs2gpu_second"]


def test_compute_arch_returns_nul_terminated_ptx(triad_source):
    compiled = compile_cuda(triad_source, "triad.cu", "compute_90")
    assert b".entry rs2gpu_triad" in compiled.binary and compiled.binary.endswith(b"\0")


def test_binary_records_target_arch_and_compiler(nvrtc_triad):
    major, minor = nvrtc_version()
    assert (nvrtc_triad.target, nvrtc_triad.arch) == ("cuda", "sm_90")
    assert nvrtc_triad.compiler_version.startswith(f"nvrtc {major}.{minor}")


def test_arch_nvrtc_does_not_know_is_a_compile_error(triad_source):
    with pytest.raises(GpuCompileError, match="NVRTC_ERROR_INVALID_OPTION"):
        compile_cuda(triad_source, "triad.cu", "sm_99")


def test_compiling_leaves_pythons_shared_byte_objects_alone() -> None:
    # A clean compile has a one-byte log (its NUL); NVRTC must not write it into Python's shared b" ".
    compile_cuda('extern "C" __global__ void k() {}', "k.cu", "sm_90")
    assert b" " == bytes([0x20])
