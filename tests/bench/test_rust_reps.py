"""The table of bench/rust_reps.py: the Rust API's back-to-back figures beside RAJAPerf's own."""
from __future__ import annotations

from bench.anchor import H200
from bench.rust_reps import table


def test_a_streaming_kernel_is_compared_with_base_cuda():
    doubled = 2 * H200["COPY"].base_us
    [row] = [r for r in table(["# a GPU", f"COPY 1800 {doubled:.2f}"]) if r.startswith("| COPY")]
    assert row.split(" | ")[-1].rstrip(" |") == "2.00"


def test_a_reduction_is_compared_with_raja_cuda_whose_accumulator_is_device_memory():
    same = H200["DOT"].raja_us
    [row] = [r for r in table([f"DOT 2000 {same:.2f}"]) if r.startswith("| DOT")]
    assert row.split(" | ")[-1].rstrip(" |") == "1.00 (RAJA_CUDA)"
