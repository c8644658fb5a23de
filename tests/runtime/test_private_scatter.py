"""Histograms through the private entry point (each block adds into a shared-memory copy of the target,
then adds what it changed to the slice) and through the global atomics, on an emulated device (the
generated CUDA compiled by g++, `bench.emulate`) against rustc's build of the same kernels (the cpu
backend). The sums are of integers, or of floats that are small integers, so every order of the
additions gives rustc's bits."""
from __future__ import annotations

import numpy as np
import pytest

import rs2gpu
from bench.emulate import compiler, rust_and_emulated

SOURCE = """
use rs2gpu::kernel;

#[kernel]
pub fn histogram(counts: &mut [i64], bins: &[usize], weights: &[i64]) {
    for i in 0..bins.len() {
        counts[bins[i]] += weights[i];
    }
}

#[kernel]
pub fn withdraw(sums: &mut [f64], bins: &[usize], v: &[f64]) {
    for i in 0..bins.len() {
        sums[bins[i]] -= v[i];
    }
}
"""
CAPACITY_I64 = 16 * 1024 // 8  # the copy is 16 KiB


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory):
    if compiler() is None:
        pytest.fail("the emulated device needs g++")
    return rust_and_emulated(tmp_path_factory.mktemp("private"), "private", SOURCE)


def histogram_inputs(bins: int, n: int, seed: int):
    rng = np.random.default_rng(seed)
    return (rng.integers(-50, 50, bins).astype(np.int64), rng.integers(0, bins, n).astype(np.uint64),
            rng.integers(-1000, 1000, n).astype(np.int64))


@pytest.mark.parametrize("bins,symbol", [(10, "rs2gpu_histogram_0_private"),
                                         (CAPACITY_I64, "rs2gpu_histogram_0_private"),
                                         (CAPACITY_I64 + 1, "rs2gpu_histogram_0_covering")],
                         ids=["short", "as long as the copy", "longer"])
def test_a_target_up_to_the_copy_s_length_runs_privately_and_every_one_gives_rustcs_result(
        kernels, bins: int, symbol: str) -> None:
    rust, device = kernels
    start, bin_of, weights = histogram_inputs(bins, 20_000, bins)
    want, got = start.copy(), start.copy()
    rust.histogram(want, bin_of, weights)
    device.histogram(got, bin_of, weights)
    assert device.histogram.last_variants == [symbol]
    assert np.array_equal(got, want)


def test_elements_no_update_reaches_keep_their_bits(kernels) -> None:
    rust, device = kernels
    rng = np.random.default_rng(4)
    start = np.array([-0.0, np.nan, 0.0, 5.0, -0.0, np.inf, 2.5, -0.0])
    bins = rng.choice([2, 3, 6], 5_000).astype(np.uint64)  # elements 0, 1, 4, 5 and 7 are never updated
    v = rng.integers(-8, 8, 5_000).astype(np.float64)
    want, got = start.copy(), start.copy()
    rust.withdraw(want, bins, v)
    device.withdraw(got, bins, v)
    assert device.withdraw.last_variants == ["rs2gpu_withdraw_0_private"]
    assert got.view(np.uint64).tolist() == want.view(np.uint64).tolist()


def test_a_bin_past_the_end_raises_rusts_panic_and_leaves_the_host_data(kernels) -> None:
    rust, device = kernels
    start, bins, weights = histogram_inputs(10, 20_000, 5)
    bins[12_345] = 10
    with pytest.raises(rs2gpu.KernelPanic) as expected:
        rust.histogram(start.copy(), bins, weights)
    got = start.copy()
    with pytest.raises(rs2gpu.KernelPanic) as raised:
        device.histogram(got, bins, weights)
    assert (raised.value.message, raised.value.location) == (expected.value.message, expected.value.location)
    assert np.array_equal(got, start)
