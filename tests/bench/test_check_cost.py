"""bench/check_cost.py: the static cost of the device checks, from NVRTC's cubins.

The property it reports is the design's: a launch whose accesses the host cleared runs code with no
device check, which compiles to what the loop compiles to with every check left out.
"""
from __future__ import annotations

import struct
import pytest

from bench import check_cost
from bench.cubin import NOP, sass_instructions

KERNELS = ["if_quad", "pressure", "zonal_accumulation_3d"]


@pytest.fixture(scope="module")
def measured():
    return check_cost.measure(check_cost.CRATE, "sm_90", KERNELS)


def test_every_entry_point_of_the_kernels_is_measured(measured) -> None:
    costs, times = measured
    # each launch's in the order the host tries them (`EntryKind`), the verification last
    assert [(c.symbol, c.role) for c in costs] == [
        ("rs2gpu_pressure_0", "default"), ("rs2gpu_pressure_1", "default"),
        ("rs2gpu_zonal_accumulation_3d_0_proven", "proven"), ("rs2gpu_zonal_accumulation_3d_0", "default"),
        ("rs2gpu_zonal_accumulation_3d_0_verify", "verify"),
        ("rs2gpu_if_quad_0", "default"), ("rs2gpu_if_quad_0_checked", "checked")]
    assert sorted(t.kernel for t in times) == sorted(KERNELS)


def test_a_launch_the_host_cleared_runs_the_code_of_the_loop_without_checks(measured) -> None:
    costs, _ = measured
    for c in costs:
        if (c.role == "default" and c.kernel != "zonal_accumulation_3d") or c.role == "proven":
            assert c.device_checks == 0
            assert (c.registers, c.instructions) == (c.bare_registers, c.bare_instructions), c.symbol


def test_a_loop_through_an_index_list_checks_it_in_the_registers_of_the_loop_without_checks(measured) -> None:
    # the window of the eight reads of `x` and the written index; the order test needs no panic site
    (loop,) = [c for c in measured[0] if c.symbol == "rs2gpu_zonal_accumulation_3d_0"]
    assert loop.device_checks == 2 and loop.registers == loop.bare_registers


def test_the_checked_entry_point_and_the_verification_contain_the_checks(measured) -> None:
    costs, _ = measured
    checked = next(c for c in costs if c.role == "checked")
    assert checked.device_checks == 2 and checked.instructions > checked.bare_instructions
    verify = next(c for c in costs if c.role == "verify")
    # the eight reads whose panic it states for a value the loop recorded, that value, and the repeat
    assert verify.device_checks == 10 and verify.bare_registers is None


def test_the_table_has_a_row_per_entry_point_and_a_summary(measured) -> None:
    text = check_cost.render(*measured, "sm_90")
    assert text.count("\n| ") == 1 + len(measured[0])
    assert "4 launches: 3 run with no device check; 3 run code identical" in text


def test_sass_instructions_leave_out_the_padding_at_the_end() -> None:
    from rs2gpu.runtime.elf import elf_sections
    from rs2gpu.runtime.nvrtc import compile_cuda

    cubin = compile_cuda('extern "C" __global__ void k(float* a) { a[threadIdx.x] = 1.0f; }', "k.cu", "sm_90").binary
    (text,) = [s for s in elf_sections(cubin) if s.name == ".text.k"]
    words = [struct.unpack_from("<Q", text.data(cubin), k)[0] for k in range(0, text.size, 16)]
    count = sass_instructions(cubin)["k"]
    # the section is padded to 128 bytes with NOPs after the last instruction (the branch to itself)
    assert text.size % 128 == 0 and 0 < count < len(words)
    assert words[count - 1] != NOP and set(words[count:]) == {NOP}
