"""Resource usage read from the binaries in pure Python: the AMDGPU metadata note (msgpack) of code
objects from hiprtc and clang, and the .nv.info attributes of cubins, checked against what the compilers
themselves report (ptxas's verbose log; the wave size each AMD arch runs with)."""
from __future__ import annotations

import re
import struct

import pytest

from rs2gpu.runtime.hipclang import compile_hip_clang
from rs2gpu.runtime.hiprtc import compile_hip
from rs2gpu.runtime.nvrtc import compile_cuda
from rs2gpu.runtime.resources import (binary_resources, code_object_metadata, code_object_resources,
                                      cubin_resources, msgpack_decode, ptxas_function_properties)

# Per-thread local arrays indexed by a runtime value live in scratch (private) memory on AMD and in the
# stack frame on NVIDIA; the shared array is LDS / shared memory.
KERNEL = """\
typedef double f64;
typedef unsigned long long usize;
#line 3 "src/lib.rs"
extern "C" __global__ void __launch_bounds__(256) rs2gpu_probe(f64* __restrict__ a, const usize* __restrict__ k, usize n) {
    __shared__ f64 tile[256];
    volatile f64 local[64];
    usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < 64; j++) local[j] = a[(i + j) % n];
    tile[threadIdx.x] = local[k[i] % 64];
    __syncthreads();
    if (i < n) a[i] = tile[(threadIdx.x + 1) % 256];
}
"""


@pytest.fixture(scope="module", params=["sm_80", "sm_90"])
def cubin(request):
    return compile_cuda(KERNEL, "probe.cu", request.param, options=["--ptxas-options=-v"])


def test_cubin_registers_match_what_ptxas_reports(cubin) -> None:
    (r,) = cubin_resources(cubin.binary, cubin.log)
    reported = int(re.search(r"Used (\d+) registers", cubin.log)[1])
    assert r.symbol == "rs2gpu_probe" and r.registers == reported > 0


def test_cubin_stack_and_shared_memory_match_what_ptxas_reports(cubin) -> None:
    (r,) = cubin_resources(cubin.binary, cubin.log)
    frame = int(re.search(r"(\d+) bytes stack frame", cubin.log)[1])
    assert r.stack_bytes == frame >= 64 * 8
    assert r.shared_bytes == 256 * 8


def test_cubin_spills_come_from_the_log_only(cubin) -> None:
    (with_log,) = cubin_resources(cubin.binary, cubin.log)
    (without,) = cubin_resources(cubin.binary)
    assert (with_log.spill_store_bytes, with_log.spill_load_bytes) == ptxas_function_properties(cubin.log)[
        "rs2gpu_probe"][:2]
    assert without.spill_store_bytes is None and "spills not recorded" in without.describe()
    # without the log, shared memory is the cubin's section, which from sm_90 on holds the reserved 1 KiB too
    assert without.shared_bytes in (256 * 8, 256 * 8 + 1024)


def test_ptxas_log_parsing() -> None:
    log = ("ptxas info    : Function properties for k1\n"
           "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
           "ptxas info    : Function properties for k2\n"
           "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
           "ptxas info    : Compiling entry function 'k2' for 'sm_90'\n"
           "ptxas info    : Used 20 registers, used 1 barriers, 512 bytes cumulative stack size, 2048 bytes smem\n")
    assert ptxas_function_properties(log) == {"k1": (8, 4, None), "k2": (0, 0, 2048)}


@pytest.mark.parametrize(("compiler", "arch", "wave"), [("hiprtc", "gfx90a", 64), ("clang", "gfx90a", 64),
                                                       ("clang", "gfx1030", 32)])
def test_code_object_resources(compiler: str, arch: str, wave: int) -> None:
    compile_ = compile_hip if compiler == "hiprtc" else compile_hip_clang
    binary = compile_(KERNEL, "probe.hip.cpp", arch).binary
    (r,) = code_object_resources(binary)
    assert r.symbol == "rs2gpu_probe" and r.wave_size == wave
    assert r.registers > 0 and r.scalar_registers > 0
    assert r.stack_bytes >= 64 * 8 and r.shared_bytes == 256 * 8
    assert r.spilled_vgprs == 0 and r.spilled_sgprs is not None
    assert (r.accumulation_registers is not None) == (arch == "gfx90a")  # AGPRs exist on CDNA only
    assert binary_resources(binary) == [r]
    text = r.describe()
    assert f"wave{wave}" in text and "VGPRs" in text and "B scratch" in text


def test_code_object_metadata_names_the_target_and_the_arguments() -> None:
    binary = compile_hip(KERNEL, "probe.hip.cpp", "gfx90a").binary
    metadata = code_object_metadata(binary)
    assert metadata["amdhsa.target"] == "amdgcn-amd-amdhsa--gfx90a"
    (kernel,) = metadata["amdhsa.kernels"]
    explicit = [a for a in kernel[".args"] if not a[".value_kind"].startswith("hidden_")]
    assert [(a[".offset"], a[".size"], a[".value_kind"]) for a in explicit] == [
        (0, 8, "global_buffer"), (8, 8, "global_buffer"), (16, 8, "by_value")]


def test_a_cubin_is_not_a_code_object(cubin) -> None:
    with pytest.raises(ValueError, match="EM_AMDGPU"):
        code_object_metadata(cubin.binary)


# ---------------------------------------------------------------- msgpack


def _str(s: str) -> bytes:
    data = s.encode()
    return bytes([0xA0 | len(data)]) + data if len(data) < 32 else b"\xd9" + bytes([len(data)]) + data


@pytest.mark.parametrize(("encoded", "value"), [
    (b"\x00", 0), (b"\x7f", 127), (b"\xff", -1), (b"\xe0", -32),
    (b"\xcc\xff", 255), (b"\xcd\x01\x00", 256), (b"\xce\x00\x01\x00\x00", 65536),
    (b"\xcf" + struct.pack(">Q", 2**40), 2**40), (b"\xd0\x80", -128), (b"\xd1\x80\x00", -32768),
    (b"\xd2" + struct.pack(">i", -70000), -70000), (b"\xd3" + struct.pack(">q", -2**40), -2**40),
    (b"\xca" + struct.pack(">f", 1.5), 1.5), (b"\xcb" + struct.pack(">d", 0.1), 0.1),
    (b"\xc0", None), (b"\xc2", False), (b"\xc3", True),
    (_str("gfx90a"), "gfx90a"), (_str("x" * 40), "x" * 40), (b"\xda\x00\x02hi", "hi"), (b"\xc4\x02ab", b"ab"),
    (b"\x92\x01\x02", [1, 2]), (b"\xdc\x00\x01\xc3", [True]),
    (b"\x81" + _str(".name") + _str("k"), {".name": "k"}), (b"\xde\x00\x01\x01\x02", {1: 2}),
])
def test_msgpack_values(encoded: bytes, value) -> None:
    assert msgpack_decode(encoded) == value


@pytest.mark.parametrize("encoded", [b"\xd9\x05ab", b"\x92\x01", b"\xc1"])
def test_msgpack_rejects_malformed_data(encoded: bytes) -> None:
    with pytest.raises(ValueError):
        msgpack_decode(encoded)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_100"])
def test_every_nv_info_section_parses_to_its_end(arch: str) -> None:
    from rs2gpu.runtime.elf import elf_sections
    from rs2gpu.runtime.resources import _nv_info_entries

    binary = compile_cuda(KERNEL, "probe.cu", arch).binary
    sections = [s for s in elf_sections(binary) if s.name.startswith(".nv.info")]
    assert len(sections) >= 2
    for section in sections:
        assert list(_nv_info_entries(section.data(binary)))
