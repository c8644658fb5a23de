"""Which loops get entry points that split their inner loops (`emit.warps`: a block or a warp per iteration, or
a warp's width of iterations per block), what the kernel ABI and `rs2gpu inspect` say of each inner loop,
and that NVRTC makes the lanes' combination warp shuffles."""
from __future__ import annotations

from pathlib import Path

import pytest

from rs2gpu.ir.abi import EntryKind, SplitIterations

from tests.support.generated_code import ptx_entries, translate_source

SOURCE = (Path(__file__).parents[1] / "runtime" / "data" / "warps.rs").read_text() + """
// Reads through an index list inside the inner loop are checked on the device: one thread per row stays.
#[kernel]
pub fn gathered_row_sum(a: &[f32], idx: &[usize], out: &mut [f32], cols: usize) {
    for i in 0..out.len() {
        let mut s = 0.0f32;
        for j in 0..cols {
            s += a[idx[i * cols + j]];
        }
        out[i] = s;
    }
}

#[kernel]
pub fn every_other(a: &[f32], out: &mut [f32], cols: usize) {
    for i in 0..out.len() / (2 * cols) {
        let base = i * 2 * cols;
        for j in 0..cols {
            out[base + 2 * j] = a[i * cols + j];
        }
    }
}

#[kernel]
pub fn stop_at_zero(a: &[f32], out: &mut [f32], cols: usize) {
    for i in 0..out.len() {
        let mut s = 0.0f32;
        let mut j = 0;
        while j < cols && a[i * cols + j] != 0.0 {
            s += a[i * cols + j];
            j += 1;
        }
        out[i] = s;
    }
}

#[kernel]
pub fn stop_at_negative(a: &[f32], out: &mut [f32], cols: usize) {
    for i in 0..out.len() {
        let mut s = 0.0f32;
        for j in 0..cols {
            if a[i * cols + j] < 0.0 {
                break;
            }
            s += a[i * cols + j];
        }
        out[i] = s;
    }
}

fn pick(t: &[f32], k: usize) -> f32 {
    t[k * 2]
}

#[kernel]
pub fn picked_rows(a: &[f32], t: &[f32], out: &mut [f32], cols: usize) {
    for i in 0..out.len() {
        let mut s = 0.0f32;
        for j in 0..cols {
            s += a[i * cols + j] * pick(t, j);
        }
        out[i] = s;
    }
}

#[kernel]
pub fn prefix(a: &[f32], out: &mut [f32], cols: usize) {
    for i in 0..out.len() {
        let mut s = 0.0f32;
        let mut last = 0.0f32;
        for j in 0..cols {
            s += a[i * cols + j];
            last = s;
        }
        out[i] = last;
    }
}

#[kernel]
pub fn divide_then_read(a: &[i32], d: &[i32], out: &mut [i32], cols: usize) {
    for i in 0..out.len() {
        let mut s = 0i32;
        for j in 0..cols {
            s += a[i * cols + j];
        }
        out[i] = s / d[i];
        let k = s / d[i + 1];
        out[i] = k;
    }
}

const TAPS: usize = 16;

#[kernel]
pub fn filter(out: &mut [f64], input: &[f64], coeff: &[f64; TAPS]) {
    for i in 0..out.len() {
        let mut s = 0.0;
        for j in 0..TAPS {
            s += coeff[j] * input[i + j];
        }
        out[i] = s;
    }
}

#[kernel]
pub fn weighted(out: &mut [f64], x: &[f64], w: &[f64; 32]) {
    for i in 0..out.len() {
        let mut s = 0.0;
        for t in 0..w.len() {
            s += w[t] * x[i * 32 + t];
        }
        out[i] = s;
    }
}
"""


@pytest.fixture(scope="module")
def translation(tmp_path_factory):
    return translate_source(tmp_path_factory.mktemp("warps"), "warps", SOURCE)


def launch(translation, kernel: str):
    (only,) = translation.emitted.abi.kernels[kernel].launches
    return only


@pytest.mark.parametrize("kernel, reassociates", [
    ("row_sum", True), ("row_bits", False), ("row_filtered", False), ("row_extremes", False), ("row_lookup", False)])
def test_a_loop_whose_inner_loop_reads_rows_gets_a_block_and_a_warp_per_iteration_first(translation, kernel,
                                                                                       reassociates) -> None:
    found = launch(translation, kernel)
    # a block per row where warps would leave the device partly idle: fewer rows than it holds warps of 32
    # (NVIDIA's warp, the narrowest of the targets); then a warp per row
    assert [(e.kind, e.split) for e in found.entry_points[:2]] == [
        (EntryKind.BLOCKS, SplitIterations(256, 32, reassociates)), (EntryKind.WARPS, SplitIterations(32, 0, reassociates))]
    assert [inner.split for inner in found.inner_loops] == [True]


@pytest.mark.parametrize("kernel", ["softmax", "layer_norm"])
def test_a_loop_whose_inner_loops_read_its_row_in_turn_gets_a_block_per_iteration_whatever_the_count(
        translation, kernel) -> None:
    found = launch(translation, kernel)
    # three passes over each row: the block's row stays in the multiprocessor's L1 from one to the next
    assert (found.entry_points[0].kind, found.entry_points[0].split) == (EntryKind.BLOCKS,
                                                                         SplitIterations(256, 0, True))
    assert EntryKind.WARPS not in [e.kind for e in found.entry_points]
    assert [inner.split for inner in found.inner_loops] == [True] * 3


def test_inspect_says_what_each_inner_loop_of_softmax_combines_and_writes(translation) -> None:
    details = [inner.detail for inner in launch(translation, "softmax").inner_loops]
    where = "split over a block's threads, the row staying in the L1 from one of the loops reading it to the next"
    assert details == [f"{where}: combines `m` (max)", f"{where}: combines `s` (+)", f"{where}: writes `out` spread over them"]


def test_inspect_says_what_a_row_sum_combines(translation) -> None:
    (detail,) = [inner.detail for inner in launch(translation, "row_sum").inner_loops]
    assert detail == ("split over a warp's lanes, or a block's threads where a warp per iteration would leave the "
                      "GPU partly idle: combines `s` (+)")


@pytest.mark.parametrize("kernel, reason", [
    ("gathered_row_sum", "checks an access or a division on the device"),
    ("picked_rows", "checks an access or a division on the device"),
    ("every_other", "is not at `j + c` of the loop variable `j`"),
    ("stop_at_zero", "is neither a `let`, an assignment nor a range loop"),
    ("stop_at_negative", "the `break` at"),
    ("prefix", "`last` is assigned"),
    ("divide_then_read", "a check before the one at"),
    # a warp's width of iterations or fewer, known before the launch: the outer loop has the parallelism
    ("filter", "always has 16 iterations, too few to share"),
    ("weighted", "always has 32 iterations, too few to share"),
], ids=["device checks", "a helper's checks", "a stride of 2", "a while loop", "a break", "a running value",
        "lane 0 checks first", "a const trip count", "an array's length"])
def test_a_loop_without_a_warps_form_says_why(translation, kernel, reason) -> None:
    found = launch(translation, kernel)
    assert EntryKind.WARPS not in [e.kind for e in found.entry_points]
    assert found.inner_loops and all(not inner.split and inner.detail.startswith("sequential in each thread: ")
                                     and reason in inner.detail for inner in found.inner_loops)


@pytest.mark.parametrize("kernel, reassociates", [("column_sum", True), ("column_stats", False)])
def test_a_loop_whose_inner_loops_read_columns_gets_a_columns_entry_point_first(translation, kernel,
                                                                               reassociates) -> None:
    found = launch(translation, kernel)
    # 32 groups of 8 threads share 8 columns (a 32-byte sector of a row), where there are fewer columns than
    # the device holds threads
    assert (found.entry_points[0].kind, found.entry_points[0].split) == (EntryKind.COLUMNS,
                                                                         SplitIterations(32, 1, reassociates))
    assert found.inner_loops[0].detail.startswith("split over the groups of 8 threads of a block, where the loop has "
                                                  "fewer iterations than the GPU has threads: combines `s` (+)")


def test_the_lanes_combine_with_butterfly_shuffles(translation) -> None:
    ptx = ptx_entries(translation, "row_sum")
    assert "shfl.sync.bfly" in ptx["rs2gpu_row_sum_0_warps"]
    assert "shfl.sync" not in ptx["rs2gpu_row_sum_0"]


@pytest.mark.parametrize("kernel, loads", [("row_sum", "v4.f32"), ("byte_row_sum", "v4.u32"),
                                           ("weighted_row_sum", "v4.u32")])
def test_a_row_is_read_sixteen_bytes_a_load_in_both_split_forms(translation, kernel, loads) -> None:
    ptx = ptx_entries(translation, kernel)
    for entry in (f"rs2gpu_{kernel}_0_blocks", f"rs2gpu_{kernel}_0_warps"):
        assert f"ld.global.nc.{loads}" in ptx[entry]
    assert ".v4." not in ptx[f"rs2gpu_{kernel}_0"]  # one iteration per thread reads one element
