//! Kernels for tests/runtime/test_vector_entry.py: loops over f64 and f32 slices whose vector entry point
//! runs W consecutive iterations a thread, where the accesses lie on the 16-byte grid: from a parameter or
//! a literal start, with conditional writes, reads at several offsets or out of step with the stores, in
//! nests of rows; and a nest with a reduction, which has no vector entry point. The loops that are exactly
//! RAJAPerf's (COPY, REDUCE3_INT, FIRST_MIN, INIT_VIEW1D_OFFSET, FIRST_DIFF, FIRST_SUM, TRIDIAG_ELIM) are
//! examples/rajaperf's.
//! The cpu backend (rustc) is the reference for what they compute.

use rs2gpu::kernel;

/// `c[i] = 2 a[i]` from `first` on: a start the host knows only from the call.
#[kernel]
pub fn scale_from(c: &mut [f64], a: &[f64], first: usize) {
    for i in first..c.len() {
        c[i] = 2.0 * a[i];
    }
}

/// `x[i] += y[i] / 2` over f32s: four lanes a group, loaded and stored in place.
#[kernel]
pub fn accumulate(x: &mut [f32], y: &[f32]) {
    for i in 0..x.len() {
        x[i] += 0.5 * y[i];
    }
}

/// `p = b e`, raised to `cut` where below it: a conditional write after a write of the whole lane.
#[kernel]
pub fn clamp_product(p: &mut [f64], b: &[f64], e: &[f64], cut: f64) {
    for i in 0..p.len() {
        p[i] = b[i] * e[i];
        if p[i] < cut {
            p[i] = cut;
        }
    }
}

/// `out[i] = a[i]` where `a[i]` is positive: a slice written only under a condition.
#[kernel]
pub fn positive_part(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        if a[i] > 0.0 {
            out[i] = a[i];
        }
    }
}

/// `x[i] = y[i] (z[i + 2] + z[i + 11] / 2)` over f32s: reads more than a group apart.
#[kernel]
pub fn spread_reads(x: &mut [f32], y: &[f32], z: &[f32]) {
    for i in 0..x.len() {
        x[i] = y[i] * (z[i + 2] + 0.5 * z[i + 11]);
    }
}

/// `x[i] = y[i + 1]`: a slice read only out of step with the stores.
#[kernel]
pub fn next_of(x: &mut [f64], y: &[f64]) {
    for i in 0..x.len() {
        x[i] = y[i + 1];
    }
}

/// `x[i] = y[i - 1] + y[i]` from `first` on: reads at two offsets from a start the host knows.
#[kernel]
pub fn smooth_from(x: &mut [f64], y: &[f64], first: usize) {
    for i in first..x.len() {
        x[i] = y[i - 1] + y[i];
    }
}

/// `x[i] = y[i] / 2` over f32s for `i` in `1..`: a literal start, with a head of 127 iterations.
#[kernel]
pub fn halve_from_one(x: &mut [f32], y: &[f32]) {
    for i in 1..x.len() {
        x[i] = 0.5 * y[i];
    }
}

/// A nest of three loops storing rows of `ni` doubles.
#[kernel]
pub fn fill_cube(a: &mut [f64], ni: usize, nj: usize, nk: usize) {
    for k in 0..nk {
        for j in 0..nj {
            for i in 0..ni {
                a[i + ni * (j + nj * k)] = 0.25 * i as f64 - j as f64 * k as f64;
            }
        }
    }
}

/// `b = 2 b + 1` over rows of `n`, whose index is spelled `j + n * k` and `j + k * n`.
#[kernel]
pub fn rescale_rows(b: &mut [f64], n: usize, m: usize) {
    for k in 0..m {
        for j in 0..n {
            b[j + n * k] = 2.0 * b[j + k * n] + 1.0;
        }
    }
}

/// HYDRO_2D's shape: a stencil over the rows above and below, through `let kj = k * n + j`.
#[kernel]
pub fn cross(out: &mut [f64], a: &[f64], b: &[f64], n: usize, m: usize) {
    for k in 1..m - 1 {
        for j in 1..n - 1 {
            let kj = k * n + j;
            out[kj] = a[kj - n] + a[kj - 1] * b[kj] - a[kj + 1] * b[kj + n - 1] + a[kj + n];
        }
    }
}

/// The sum of `m` rows of `n`: a nest with a reduction.
#[kernel]
pub fn plane_total(v: &[i32], n: usize, m: usize) -> i32 {
    let mut sum = 0;
    for k in 0..m {
        for j in 0..n {
            sum += v[k * n + j];
        }
    }
    sum
}
