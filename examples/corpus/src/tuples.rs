//! Tuples, shadowing and closures over locals.

use rs2gpu::kernel;

/// The smaller and the larger of two values.
fn min_max(a: f64, b: f64) -> (f64, f64) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// Orders each pair so that `lo[i] <= hi[i]`, reading the helper's tuple by field.
#[kernel]
pub fn order_pairs(lo: &mut [f64], hi: &mut [f64]) {
    for i in 0..lo.len() {
        let t = min_max(lo[i], hi[i]);
        lo[i] = t.0;
        hi[i] = t.1;
    }
}

/// Orders each pair so that `lo[i] <= hi[i]`, destructuring the helper's tuple.
#[kernel]
pub fn order_pairs_destructured(lo: &mut [f64], hi: &mut [f64]) {
    for i in 0..lo.len() {
        let (a, b) = min_max(lo[i], hi[i]);
        lo[i] = a;
        hi[i] = b;
    }
}

/// Mean and maximum in one pass, returned as a tuple.
#[kernel]
pub fn mean_and_max(x: &[f64]) -> (f64, f64) {
    let mut sum = 0.0;
    let mut max = f64::NEG_INFINITY;
    for i in 0..x.len() {
        sum += x[i];
        max = max.max(x[i]);
    }
    (sum / x.len() as f64, max)
}

/// Maps `[lo, hi]` onto `[0, 1]` and clamps, each step shadowing `v`.
#[kernel]
pub fn normalize_shadowed(out: &mut [f64], x: &[f64], lo: f64, hi: f64) {
    for i in 0..out.len() {
        let v = x[i];
        let v = (v - lo) / (hi - lo);
        let v = v.clamp(0.0, 1.0);
        out[i] = v;
    }
}

/// Swaps two slices element by element through a tuple of their values.
#[kernel]
pub fn swap_through_tuple(a: &mut [i32], b: &mut [i32]) {
    for i in 0..a.len() {
        let t = (a[i], b[i]);
        a[i] = t.1;
        b[i] = t.0;
    }
}

/// Swaps two slices element by element, destructuring a tuple of the values into the names it swaps:
/// the names of a pattern are bound after the whole value is computed.
#[kernel]
pub fn swap_destructured(a: &mut [i32], b: &mut [i32]) {
    for i in 0..a.len() {
        let (x, y) = (a[i], b[i]);
        let (x, y) = (y, x);
        a[i] = x;
        b[i] = y;
    }
}

/// Affine map `a * x + b` written as a closure over the scalars.
pub fn affine_closure(out: &mut [f64], x: &[f64], a: f64, b: f64) {
    let f = |v: f64| a * v + b;
    for i in 0..out.len() {
        out[i] = f(x[i]);
    }
}

/// Harmonic-weighted row sums, the weight a closure of the inner loop's counter.
pub fn harmonic_row_sums(out: &mut [f64], m: &[f64], cols: usize) {
    for r in 0..out.len() {
        let weight = |k: usize| 1.0 / (k as f64 + 1.0);
        let mut s = 0.0;
        for c in 0..cols {
            s += weight(c) * m[r * cols + c];
        }
        out[r] = s;
    }
}
