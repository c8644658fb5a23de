//! Loops over iterators: `zip`, `enumerate`, `copied`, patterns on items, and the adaptors people chain.

use rs2gpu::kernel;

/// SAXPY over zipped iterators: `y += a * x`.
#[kernel]
pub fn saxpy_zip(y: &mut [f32], x: &[f32], a: f32) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * *xi;
    }
}

/// Ramp weighting: each element times its own index, the index coming from `enumerate`.
#[kernel]
pub fn ramp_enumerate(out: &mut [f64], x: &[f64]) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = x[i] * i as f64;
    }
}

/// Dot product of two zipped slices, the items multiplied as references.
#[kernel]
pub fn dot_zip(a: &[f64], b: &[f64]) -> f64 {
    let mut sum = 0.0;
    for (x, y) in a.iter().zip(b.iter()) {
        sum += x * y;
    }
    sum
}

/// Clamp into `[lo, hi]`, reading the input through `copied()`.
#[kernel]
pub fn clamp_copied(out: &mut [f32], x: &[f32], lo: f32, hi: f32) {
    for (o, v) in out.iter_mut().zip(x.iter().copied()) {
        *o = v.clamp(lo, hi);
    }
}

/// Largest magnitude, destructuring each item with a `&v` pattern.
#[kernel]
pub fn max_abs_pattern(x: &[f32]) -> f32 {
    let mut m = 0.0f32;
    for &v in x {
        m = m.max(v.abs());
    }
    m
}

/// Sum of squares as a `map` and `sum` chain.
pub fn sum_squares_map(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum()
}

/// Reversed copy: `out[i] = x[n - 1 - i]`, zipping with `x.iter().rev()`.
pub fn reverse_zip(out: &mut [f64], x: &[f64]) {
    for (o, v) in out.iter_mut().zip(x.iter().rev()) {
        *o = *v;
    }
}

/// Doubles the even-indexed elements, stepping the range with `step_by(2)`.
#[kernel]
pub fn double_even_step_by(out: &mut [f64], x: &[f64]) {
    for i in (0..out.len()).step_by(2) {
        out[i] = 2.0 * x[i];
    }
}
