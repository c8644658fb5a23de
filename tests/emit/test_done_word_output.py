"""Which launch sets the call's done word (`emit.kernels.signals_done`), what the kernel ABI and the entry
points' parameters say about it, and that NVRTC orders the word after the results: the results' stores,
then a fence for the whole system, then one volatile store of the word."""
from __future__ import annotations

from pathlib import Path

import pytest

from rs2gpu.runtime.hiprtc import compile_hip

from tests.support.generated_code import entry_points, ptx_entries

SOURCE = (Path(__file__).parents[1] / "runtime" / "data" / "done_word.rs").read_text() + """
#[kernel]
pub fn steps_then_sum(u: &mut [f64], steps: usize) -> f64 {
    for _ in 0..steps {
        for i in 0..u.len() {
            u[i] = 0.5 * u[i];
        }
    }
    let mut total = 0.0;
    for i in 0..u.len() {
        total += u[i];
    }
    total
}
"""
DONE_PARAM = "u32* __restrict__ rs2gpu_done"


def signals_of(translated, kernel: str) -> list[bool]:
    return [launch.signals_done for launch in translated.emitted.abi.kernels[kernel].launches]


@pytest.mark.parametrize("kernel", ["sum_and_max", "sum_from", "sum_at"])
def test_a_kernel_of_one_reducing_launch_sets_the_word(translated, kernel: str) -> None:
    assert signals_of(translated, kernel) == [True]


def test_only_the_last_launch_sets_the_word_where_it_reduces(translated) -> None:
    assert signals_of(translated, "scale_then_sum") == [False, True]


def test_no_launch_sets_it_where_a_launch_without_reductions_comes_last(translated) -> None:
    # after the reduction, the stream still runs the second loop: the call waits for the stream
    assert signals_of(translated, "sum_then_scale") == [False, False]


def test_no_launch_sets_it_where_a_host_loop_repeats_the_launches(translated) -> None:
    assert signals_of(translated, "steps_then_sum") == [False, False]


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_every_entry_point_of_the_launch_takes_the_word_last(translated, target: str) -> None:
    source = translated.emitted.files["sum_from." + ("cu" if target == "cuda" else "hip.cpp")]
    for symbol in ("rs2gpu_sum_from_0", "rs2gpu_sum_from_0_vector"):
        assert entry_points(source)[symbol][-2:] == ["f64* __restrict__ rs2gpu_result_total", DONE_PARAM]
    scale = translated.emitted.files["scale_then_sum." + ("cu" if target == "cuda" else "hip.cpp")]
    assert DONE_PARAM not in entry_points(scale)["rs2gpu_scale_then_sum_0"]


def test_the_word_is_stored_after_the_results_behind_a_system_fence(translated) -> None:
    body = ptx_entries(translated, "sum_from")["rs2gpu_sum_from_0"]
    kinds = ("st.global", "st.volatile.global", "membar.sys", "fence.sc.sys")
    stores = [line.split()[0] for line in body.splitlines() if line.strip().startswith(kinds)]
    # the block's partial, the result in host memory, the fence, the word
    assert stores == ["st.global.f64", "st.global.f64", "membar.sys;", "st.volatile.global.u32"]


def test_hiprtc_compiles_the_launches_that_set_the_word(translated) -> None:
    for kernel in ("sum_and_max", "scale_then_sum"):
        compile_hip(translated.emitted.files[f"{kernel}.hip.cpp"], f"{kernel}.hip.cpp", "gfx90a")
