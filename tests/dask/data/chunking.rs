//! Kernels that show how `rs2gpu.dask.call` chunks a call, and what it refuses.
use rs2gpu::kernel;
use std::ops::{Add, Mul};

/// `y = a * x + y` for both float widths: the instantiations `axpy_f32` and `axpy_f64`.
#[kernel(types(f32, f64))]
pub fn axpy<T: Copy + Add<Output = T> + Mul<Output = T>>(y: &mut [T], x: &[T], a: T) {
    for i in 0..y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// Reads two elements before its own and three after: a halo of 2 and 3.
#[kernel]
pub fn lopsided(out: &mut [f64], x: &[f64]) {
    for i in 2..out.len() - 3 {
        out[i] = x[i - 2] + x[i + 3];
    }
}

/// Scales by the slice's length, which a chunk sees as its own window's.
#[kernel]
pub fn scale_by_length(out: &mut [f64], x: &[f64]) {
    for i in 0..out.len() {
        out[i] = x[i] * out.len() as f64;
    }
}

/// Adds the first element, which a chunk would read from its own window.
#[kernel]
pub fn add_first(out: &mut [f64], x: &[f64]) {
    for i in 0..out.len() {
        out[i] = x[i] + x[0];
    }
}

/// A sum that starts from 1.0: each chunk would add it again.
#[kernel]
pub fn sum_from_one(x: &[f64]) -> f64 {
    let mut s = 1.0;
    for i in 0..x.len() {
        s += x[i];
    }
    s
}

/// A sum of differences of neighbours: a chunk and its neighbour would both count the rows they share.
#[kernel]
pub fn total_rise(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        s += x[i + 1] - x[i];
    }
    s
}

/// Writes the element before its own.
#[kernel]
pub fn shift_left(out: &mut [f64], x: &[f64]) {
    for i in 1..out.len() {
        out[i - 1] = x[i];
    }
}
