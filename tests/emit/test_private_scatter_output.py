"""The private entry point of a histogram (emit/privatize.py): each block adds into its own copy of a
short scatter target in shared memory, and after its loop adds each element it changed to the slice once.
Only additions get one: their identity is exact, so untouched elements are skipped without a trace."""
from __future__ import annotations

import re

import pytest

from rs2gpu import pipeline
from rs2gpu.ir.abi import EntryKind, EntryPoint, PrivateCopy

SOURCE = """
#[kernel]
pub fn histogram(values: &mut [f64], data: &[f64], bins: &[usize]) {
    for i in 0..data.len() {
        values[bins[i]] += data[i];
    }
}

#[kernel]
pub fn drain(counts: &mut [u32], bins: &[usize]) {
    for i in 0..bins.len() {
        counts[bins[i]] -= 1;
    }
}

#[kernel]
pub fn lowest(lo: &mut [f64], data: &[f64], bins: &[usize]) {
    for i in 0..data.len() {
        lo[bins[i]] = lo[bins[i]].min(data[i]);
    }
}

#[kernel]
pub fn two_targets(a: &mut [f64], b: &mut [f64], data: &[f64], bins: &[usize]) {
    for i in 0..data.len() {
        a[bins[i]] += data[i];
        b[bins[i]] += 1.0;
    }
}
"""


@pytest.fixture(scope="module")
def translated(tmp_path_factory):
    path = tmp_path_factory.mktemp("private") / "lib.rs"
    path.write_text(SOURCE)
    return pipeline.translate(path).emitted


def entry_body(text: str, symbol: str) -> str:
    start = text.index(f"void __launch_bounds__(256) {symbol}(")
    return text[start:text.index("\n}\n", start)]


def test_a_histogram_accumulates_in_a_shared_copy_of_16_kib(translated) -> None:
    body = entry_body(translated.files["histogram.cu"], "rs2gpu_histogram_0_private")
    assert "RS2GPU_SHARED f64 rs2gpu_private_values[2048];" in body  # 16384 bytes / 8
    assert re.findall(r"rs2gpu_atomic_add\(&(\w+)\[", body) == ["rs2gpu_private_values"]


def test_the_copy_starts_at_the_identity_and_is_flushed_after_a_barrier(translated) -> None:
    body = entry_body(translated.files["histogram.cu"], "rs2gpu_histogram_0_private")
    setup, loop, flush = body.index("rs2gpu_add_identity"), body.index("for (usize"), body.index("rs2gpu_flush_add")
    assert setup < body.index("RS2GPU_SYNC_THREADS();") < loop < body.rindex("RS2GPU_SYNC_THREADS();") < flush
    assert "rs2gpu_flush_add(&values[rs2gpu_k], rs2gpu_private_values[rs2gpu_k]);" in body


def test_the_bounds_check_is_against_the_slice_not_the_copy(translated) -> None:
    body = entry_body(translated.files["histogram.cu"], "rs2gpu_histogram_0_private")
    assert re.search(r"if \(rs2gpu_in_bounds\(\w+, values_len, \d+, rs2gpu_at\)\)", body)


def test_a_subtraction_is_an_addition_and_gets_one_too(translated) -> None:
    assert "RS2GPU_SHARED u32 rs2gpu_private_counts[4096];" in translated.files["drain.cu"]


@pytest.mark.parametrize("kernel", ["lowest", "two_targets"])
def test_minima_and_loops_with_several_targets_get_none(translated, kernel: str) -> None:
    assert "_private" not in translated.files[f"{kernel}.cu"]


def test_the_abi_names_the_target_and_its_capacity(translated) -> None:
    launch = translated.abi.kernels["histogram"].launches[0]
    assert launch.entry(EntryKind.PRIVATE) == EntryPoint(
        EntryKind.PRIVATE, "rs2gpu_histogram_0_private", records_panics=True, checks=launch.general.checks,
        private=PrivateCopy("values", 2048))
