//! The cases of the call contract (docs/call-contract.md): each kernel is called on every backend with
//! arguments that make it fail, and must fail the same way there, leaving the host arrays as they were.
use rs2gpu::kernel;
use std::ops::{Add, Mul};

/// Rows of `cols` elements, `stride` apart: a stride shorter than a row makes two rows share elements.
#[kernel]
pub fn overlapping_rows(out: &mut [f64], rows: usize, cols: usize, stride: usize) {
    for r in 0..rows {
        for c in 0..cols {
            out[r * stride + c] = (r * cols + c) as f64;
        }
    }
}

/// A scatter through an index list: a value twice in `idx` is an element two iterations write.
#[kernel]
pub fn scatter(out: &mut [f64], x: &[f64], idx: &[usize]) {
    for i in 0..idx.len() {
        out[idx[i]] = x[i];
    }
}

/// Differences of neighbours: with `x` no longer than `out`, the last iteration reads past its end.
#[kernel]
pub fn differences(out: &mut [f64], x: &[f64]) {
    for i in 0..out.len() {
        out[i] = x[i + 1] - x[i];
    }
}

/// A gather through a list whose values only the data says are in bounds: the iterations before a
/// value past the end of `x` run (on the cpu backend, in the caller's arrays) before the panic.
#[kernel]
pub fn gather(out: &mut [f64], x: &[f64], idx: &[usize]) {
    for i in 0..out.len() {
        out[i] = 2.0 * x[idx[i]];
    }
}

/// A quotient computed before the loop: a zero `parts` panics there, where Rust places it.
#[kernel]
pub fn first_part(out: &mut [f64], parts: usize) {
    let width = out.len() / parts;
    for i in 0..width {
        out[i] = 1.0;
    }
}

/// Sweeps that read further into `a` at each step: the step whose reads leave `a` panics, after the
/// earlier steps have added into `out`.
#[kernel]
pub fn sweeps(out: &mut [f64], a: &[f64], sweeps: usize) {
    for s in 0..sweeps {
        for i in 0..out.len() {
            out[i] += a[i + s];
        }
    }
}

/// `y = a * x + y`, for any type the Python call's arguments have.
#[kernel]
pub fn axpy<T: Copy + Add<Output = T> + Mul<Output = T>>(y: &mut [T], x: &[T], a: T) {
    for i in 0..y.len() {
        y[i] = a * x[i] + y[i];
    }
}
