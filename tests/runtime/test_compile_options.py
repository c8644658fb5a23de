import os
import subprocess
from pathlib import Path

import pytest

from rs2gpu.runtime.hipclang import compile_hip_clang, find_toolchain
from rs2gpu.runtime.hiprtc import compile_hip
from rs2gpu.runtime.nvrtc import compile_cuda
from rs2gpu.runtime.options import CudaOptions, HipOptions, device_arch


def amdgpu_fma_count(code_object: bytes, tmp_path: Path) -> int:
    # llvm-objdump ships next to the clang that compile_hip_clang uses.
    objdump = Path(os.path.realpath(find_toolchain().clang)).parent / "llvm-objdump"
    path = tmp_path / "kernel.co"
    path.write_bytes(code_object)
    listing = subprocess.run([objdump, "-d", "--mcpu=gfx90a", path], capture_output=True, text=True, check=True)
    return listing.stdout.count("v_fma")


def test_hopper_compiles_for_its_architecture_specific_features_and_others_for_their_own():
    assert device_arch(9, 0) == "sm_90a"  # the warpgroup products of the tensor-core tiles
    assert [device_arch(8, 0), device_arch(8, 9), device_arch(10, 0)] == ["sm_80", "sm_89", "sm_100"]
    assert CudaOptions(device_arch(9, 0)).arch == "sm_90a"


def test_default_nvrtc_flags_disable_fma_contraction():
    assert "--fmad=false" in CudaOptions().flags()


def test_fast_math_lets_nvrtc_contract():
    assert "--fmad=true" in CudaOptions(fast_math=True).flags()


def test_default_hip_flags_disable_fp_contraction():
    assert "-ffp-contract=off" in HipOptions().flags()


def test_default_flags_select_cxx17():
    assert "--std=c++17" in CudaOptions().flags() and "-std=c++17" in HipOptions().flags()


def test_key_is_stable():
    assert CudaOptions("sm_90").key() == CudaOptions("sm_90").key()


def test_key_depends_on_every_field():
    keys = {CudaOptions("sm_90").key(), CudaOptions("sm_80").key(), CudaOptions("sm_90", fast_math=True).key()}
    assert len(keys) == 3


def test_cuda_and_hip_keys_differ_for_the_same_fields():
    assert CudaOptions("sm_90").key() != HipOptions("gfx90a").key()


@pytest.mark.parametrize("arch", ["sm90", "gfx90a", "sm_9x", ""])
def test_malformed_cuda_arch_is_a_value_error(arch):
    with pytest.raises(ValueError, match="invalid CUDA arch"):
        CudaOptions(arch)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1030", "gfx90a:sramecc+:xnack-", "gfx10-3-generic"])
def test_hip_arch_accepts_processors_and_feature_suffixes(arch):
    assert HipOptions(arch).arch == arch


def test_nvrtc_keeps_multiply_and_add_separate(multiply_add_source):
    ptx = compile_cuda(multiply_add_source, "axpy.cu", "compute_90").binary
    assert b"fma.rn.f64" not in ptx and b"mul.rn.f64" in ptx


def test_nvrtc_fast_math_fuses_multiply_add(multiply_add_source):
    ptx = compile_cuda(multiply_add_source, "axpy.cu", "compute_90", fast_math=True).binary
    assert b"fma.rn.f64" in ptx


def test_hiprtc_keeps_multiply_and_add_separate(multiply_add_source, tmp_path):
    assert amdgpu_fma_count(compile_hip(multiply_add_source, "axpy.hip.cpp").binary, tmp_path) == 0


def test_hiprtc_fast_math_fuses_multiply_add(multiply_add_source, tmp_path):
    compiled = compile_hip(multiply_add_source, "axpy.hip.cpp", fast_math=True)
    assert amdgpu_fma_count(compiled.binary, tmp_path) > 0


def test_clang_keeps_multiply_and_add_separate(multiply_add_source, tmp_path):
    assert amdgpu_fma_count(compile_hip_clang(multiply_add_source, "axpy.hip.cpp").binary, tmp_path) == 0
