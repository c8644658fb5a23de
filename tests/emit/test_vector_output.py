"""Which loops get a vector entry point (`emit.vector`), what the kernel ABI tells the host about it, and
that the compilers turn its lanes into 16-byte accesses: NVRTC's PTX has one vector load or store per
slice and group, where the general entry point's has one scalar access per slice and iteration."""
from __future__ import annotations

import re

import pytest

from rs2gpu.ir.abi import AlignedSlice, CoveringGrid, EntryKind, EntryPoint, VectorLanes
from rs2gpu.runtime.hiprtc import compile_hip

from tests.support.generated_code import ptx_entries

SOURCE = """
#[kernel]
pub fn copy(c: &mut [f64], a: &[f64]) {
    for i in 0..c.len() {
        c[i] = a[i];
    }
}

#[kernel]
pub fn total(v: &[i32]) -> i32 {
    let mut sum = 0;
    for i in 0..v.len() {
        sum += v[i];
    }
    sum
}

#[kernel]
pub fn widen(out: &mut [f64], a: &[f32]) {
    for i in 0..out.len() {
        out[i] = a[i] as f64;
    }
}

#[kernel]
pub fn neighbours(out: &mut [f64], a: &[f64]) {
    for i in 1..out.len() {
        out[i] = a[i - 1] + a[i];
    }
}

#[kernel]
pub fn shifted_pair(out: &mut [f64], back: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        out[i] = a[i];
        back[i + 1] = a[i];
    }
}

#[kernel]
pub fn indirect(out: &mut [f64], a: &[f64], idx: &[usize]) {
    for i in 0..out.len() {
        out[i] = a[idx[i]];
    }
}

#[kernel]
pub fn positive_part(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        if a[i] > 0.0 {
            out[i] = a[i];
        }
    }
}

#[kernel]
pub fn skip_negative(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        out[i] = 0.0;
        if a[i] < 0.0 {
            continue;
        }
        out[i] = a[i];
    }
}

#[kernel]
pub fn quotient(out: &mut [i64], a: &[i64], d: i64) {
    for i in 0..out.len() {
        out[i] = a[i] / d;
    }
}

#[kernel]
pub fn plane(out: &mut [f64], a: &[f64], n: usize) {
    for j in 0..n {
        for i in 0..n {
            out[j * n + i] = a[j * n + i];
        }
    }
}

#[kernel]
pub fn transpose(out: &mut [f64], a: &[f64], n: usize) {
    for j in 0..n {
        for i in 0..n {
            out[j * n + i] = a[i * n + j];
        }
    }
}

#[kernel]
pub fn eliminate(xout: &mut [f64], xin: &[f64], y: &[f64]) {
    for i in 1..xout.len() {
        xout[i] = y[i] - xin[i - 1];
    }
}

#[kernel]
pub fn dot_next(a: &[f64], b: &[f64]) -> f64 {
    let mut sum = 0.0;
    for i in 0..a.len() {
        sum += a[i] * b[i + 1];
    }
    sum
}

#[kernel]
pub fn rows_apart(out: &mut [f64], a: &[f64], n: usize, m: usize) {
    for k in 1..m - 1 {
        for j in 1..n - 1 {
            let kj = k * n + j;
            out[kj] = a[kj - n] + a[kj - 1] + a[kj + n];
        }
    }
}
"""


def vector_of(translated, kernel: str) -> EntryPoint | None:
    return translated.emitted.abi.kernels[kernel].launches[0].entry(EntryKind.VECTOR)


def test_the_abi_gives_the_width_and_the_slices_whose_alignment_the_host_checks(translated):
    copy = vector_of(translated, "copy")
    assert copy.symbol == "rs2gpu_copy_0_vector" and copy.grid is None
    assert copy.vector == VectorLanes(2, 16, (AlignedSlice("a", 0), AlignedSlice("c", 0)))
    assert vector_of(translated, "total").vector.width == 4  # four i32 in 16 bytes


@pytest.mark.parametrize(("kernel", "why"), [
    ("widen", "f32 and f64 lanes differ in width"),
    ("indirect", "a[idx[i]] is not at the loop variable plus a constant"),
    ("positive_part", "out is written under a condition, its other lanes unset"),
    ("skip_negative", "a `continue` would skip the lanes after it"),
    ("quotient", "the division checks its divisor on the device"),
    ("transpose", "a[i * n + j] steps by n along the innermost loop"),
    ("eliminate", "lanes of xin in step with xout's would read past xin's end, so it would read each element "
                  "on its own: the covering entry point reads it as a hand-written kernel does"),
])
def test_loops_without_a_vector_entry_point(translated, kernel, why):
    assert vector_of(translated, kernel) is None, why


def test_each_slice_gives_the_offset_of_its_first_lane_from_the_loop_start(translated):
    # `for i in 1..`: 63 iterations alone, then groups from i = 64, where a's lanes (in step with out's, at
    # a[i]) and out's start a warp's 32 groups of 16 bytes: 64 elements after the slices' starts
    assert vector_of(translated, "neighbours").vector.aligned == (AlignedSlice("a", 63), AlignedSlice("out", 63))
    assert [s.offset for s in vector_of(translated, "copy").vector.aligned] == [0, 0]


def test_reads_at_two_offsets_take_one_16_byte_load_and_one_8_byte_load_per_group(translated):
    vector = ptx_entries(translated, "neighbours")["rs2gpu_neighbours_0_vector"]
    assert len(re.findall(r"ld\.global\.nc\.v2\.f64", vector)) == 1
    # a[i - 1] of the first lane, and two reads in each of the general loops before and after the groups
    assert len(re.findall(r"ld\.global\.nc\.f64", vector)) == 5
    # the head is a constant of the kernel, so the compiler keeps the groups' store whole
    assert len(re.findall(r"st\.global\.v2\.f64", vector)) == 1


def test_a_reduction_reads_a_slice_out_of_step_element_by_element(translated):
    # b[i + 1] alone: b's lanes in step with a's would read b[n + 1] in the last group; a reduction has no
    # covering entry point, so its vector form keeps its groups and reads b one element at a time
    assert [s.slice for s in vector_of(translated, "dot_next").vector.aligned] == ["a"]
    vector = ptx_entries(translated, "dot_next")["rs2gpu_dot_next_0_vector"]
    assert len(re.findall(r"ld\.global\.nc\.v2\.f64", vector)) == 1


def test_stored_slices_out_of_step_have_no_vector_entry_point(translated):
    # out at i and back at i + 1: no first group puts both on the 16-byte grid when their addresses agree
    assert vector_of(translated, "shifted_pair") is None


def test_the_copy_moves_each_pair_with_one_16_byte_load_and_store(translated):
    entries = ptx_entries(translated, "copy")
    general, vector = entries["rs2gpu_copy_0"], entries["rs2gpu_copy_0_vector"]
    assert "ld.global.nc.v2.f64" in vector and "st.global.v2.f64" in vector
    assert ".v2." not in general


def test_the_integer_reduction_loads_four_elements_at_once(translated):
    vector = ptx_entries(translated, "total")["rs2gpu_total_0_vector"]
    assert re.search(r"ld\.global\.nc\.v4\.(u|b|s)32", vector)


def test_the_hip_vector_entry_points_compile(translated):
    for kernel in ("copy", "total", "neighbours", "plane", "rows_apart"):
        compile_hip(translated.emitted.files[f"{kernel}.hip.cpp"], f"{kernel}.hip.cpp", "gfx90a")


def test_a_nest_leaves_the_alignment_of_its_rows_to_the_groups(translated):
    # where out[j * n + i] starts depends on j: the host has nothing to check once for every row
    plane = vector_of(translated, "plane")
    assert plane.symbol == "rs2gpu_plane_0_vector"
    assert plane.vector == VectorLanes(2, 16, aligned=())


def test_a_nest_moves_a_row_on_the_grid_in_16_byte_accesses_and_one_off_it_element_by_element(translated):
    vector = ptx_entries(translated, "plane")["rs2gpu_plane_0_vector"]
    # a group's lanes of a: one 16-byte load where they are on the grid, else two 8-byte ones; the threads
    # after a row's groups (all of a row whose out is off the grid) read and write one element at a time
    assert len(re.findall(r"ld\.global\.nc\.v2\.f64", vector)) == 1
    assert len(re.findall(r"ld\.global\.nc\.f64", vector)) == 3
    # the groups' store whole: they run only in rows where out is on the grid
    assert len(re.findall(r"st\.global\.v2\.f64", vector)) == 1
    assert len(re.findall(r"st\.global\.f64", vector)) == 1


def test_a_nest_runs_one_thread_per_group_on_a_grid_that_covers_them(translated):
    # no grid-stride loops: 32-bit thread coordinates behind one `if`, as the covering entry point
    assert vector_of(translated, "plane").grid == CoveringGrid(None, 2**31)
    source = translated.emitted.files["plane.cu"]
    vector = source[source.index("rs2gpu_plane_0_vector("):source.index("rs2gpu_plane_0_covering(")]
    assert "const u32 rs2gpu_gx = RS2GPU_BLOCK_IDX.x * RS2GPU_BLOCK_DIM.x + RS2GPU_THREAD_IDX.x;" in vector
    assert "RS2GPU_GRID_DIM" not in vector


def test_each_row_an_index_reaches_through_a_let_is_a_stream_of_its_own(translated):
    # a[kj - n], a[kj - 1] and a[kj + n]: rows k * n - n, k * n and k * n + n of a
    assert vector_of(translated, "rows_apart") is not None
    source = translated.emitted.files["rows_apart.cu"]
    assert "rs2gpu_at_a = (rs2gpu_first_x + (k * n) - n)" in source
    assert "rs2gpu_at_a_row1 = (rs2gpu_first_x + (k * n))" in source
    assert "rs2gpu_at_a_row2 = (rs2gpu_first_x + (k * n) + n)" in source
