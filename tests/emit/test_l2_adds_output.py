"""Which loops get an L2-adds entry point (`emit.l2_adds`), what the kernel ABI tells the host about it,
and that NVRTC makes its `y[i] += v` an atomic add whose result is unused, with no load of y."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from rs2gpu.ir.abi import EntryKind, EntryPoint, L2Footprint
from rs2gpu.runtime.hiprtc import compile_hip

from tests.support.generated_code import ptx_entries

SOURCE = (Path(__file__).parents[1] / "runtime" / "data" / "l2_adds.rs").read_text() + """
#[kernel]
pub fn saxpy(y: &mut [f32], x: &[f32], a: f32) {
    for i in 0..y.len() {
        y[i] += a * x[i];
    }
}

#[kernel]
pub fn counts(y: &mut [i64], x: &[i64]) {
    for i in 0..y.len() {
        y[i] += x[i];
    }
}

#[kernel]
pub fn grow(y: &mut [f64], a: f64) {
    for i in 0..y.len() {
        y[i] += a * y[i];
    }
}

#[kernel]
pub fn add_then_clamp(y: &mut [f64], x: &[f64], cut: f64) {
    for i in 0..y.len() {
        y[i] += x[i];
        if y[i] > cut {
            y[i] = cut;
        }
    }
}

#[kernel]
pub fn add_positive(y: &mut [f64], x: &[f64]) {
    for i in 0..y.len() {
        if x[i] > 0.0 {
            y[i] += x[i];
        }
    }
}

#[kernel]
pub fn add_next(y: &mut [f64], x: &[f64]) {
    for i in 0..y.len() {
        y[i] += x[i + 1] - x[i];
    }
}
"""


def l2_adds_of(translated, kernel: str) -> EntryPoint | None:
    return translated.emitted.abi.kernels[kernel].launches[0].entry(EntryKind.L2_ADDS)


def test_the_abi_gives_the_symbol_and_the_bytes_each_iteration_touches(translated):
    # y and x, 8 bytes each; the host proves both accesses in bounds, so nothing is checked on the device
    assert l2_adds_of(translated, "daxpy") == EntryPoint(EntryKind.L2_ADDS, "rs2gpu_daxpy_0_l2_adds",
                                                         records_panics=False, l2_adds=L2Footprint(16))


def test_every_slice_the_loop_reads_counts_toward_the_bytes(translated):
    assert l2_adds_of(translated, "energy_step").l2_adds.bytes_per_iteration == 4 * 8  # e, d, p, q


def test_the_update_is_an_add_in_the_l2_with_its_value_computed_first(translated):
    source = translated.emitted.files["daxpy.cu"]
    assert "rs2gpu_add_in_l2(&y[i], (a * x[i]));" in source
    assert "rs2gpu_sub_in_l2(&y[i], (a * x[i]));" in translated.emitted.files["drain.cu"]


@pytest.mark.parametrize(("kernel", "why"), [
    ("saxpy", "f32 atomic adds flush subnormal results to zero, which `+=` does not"),
    ("counts", "integer updates are not measured"),
    ("grow", "the value reads y[i] itself"),
    ("add_then_clamp", "y[i] is read again after the update"),
    ("add_positive", "the update is under a condition"),
])
def test_loops_without_an_l2_adds_entry_point(translated, kernel, why):
    assert l2_adds_of(translated, kernel) is None, why


def test_loops_reading_beside_the_loop_variable_keep_it(translated):
    assert l2_adds_of(translated, "add_next").l2_adds.bytes_per_iteration == 16


def test_nvrtc_makes_the_update_an_atomic_add_whose_result_is_unused_without_a_load_of_y(translated):
    adds = ptx_entries(translated, "daxpy")["rs2gpu_daxpy_0_l2_adds"]
    general = ptx_entries(translated, "daxpy")["rs2gpu_daxpy_0"]
    found = re.findall(r"\batom\.global\.add\.f64\s+(%fd\d+),", adds)
    assert len(found) == 1
    # the old value is never read, so ptxas makes the add a reduction (RED.E.ADD.F64), as it does for
    # RAJAPerf's atomicAdd(&y[i], a * x[i])
    assert len(re.findall(rf"{found[0]}\b", adds)) == 1
    assert len(re.findall(r"\bld\.global", adds)) == 1  # x[i] only
    assert len(re.findall(r"\bld\.global", general)) == 2 and "atom." not in general


def test_the_hip_l2_adds_entry_points_compile(translated):
    for kernel in ("daxpy", "drain", "energy_step"):
        compile_hip(translated.emitted.files[f"{kernel}.hip.cpp"], f"{kernel}.hip.cpp", "gfx90a")
