//! Kernels for tests/runtime/test_repeat.py: loops whose bounds come from a parameter, a length or the
//! preamble; code that can record a panic on the device or in the preamble; reductions with literal
//! seeds, with an element seed outside the slice, or whose results read a parameter or the preamble; an
//! array passed by value. A plain loop (TRIAD) and a minimum seeded with `x[0]` (FIRST_MIN) are RAJAPerf's
//! (examples/rajaperf).
//! The cpu backend (rustc) is the reference for what they compute and where they panic.

use rs2gpu::kernel;

/// `out[i] = a[i] + by` for `i` in `0..n`: a bound that is a parameter.
#[kernel]
pub fn shift(out: &mut [i64], a: &[i64], by: i64, n: usize) {
    for i in 0..n {
        out[i] = a[i] + by;
    }
}

/// `out = 2 a` over `rows` rows of `cols`: a nest.
#[kernel]
pub fn plane(out: &mut [f64], a: &[f64], cols: usize, rows: usize) {
    for r in 0..rows {
        for c in 0..cols {
            out[r * cols + c] = 2.0 * a[r * cols + c];
        }
    }
}

/// `out = a / 2` up to a length the preamble names.
#[kernel]
pub fn halve(out: &mut [f64], a: &[f64]) {
    let m = a.len();
    for i in 0..m {
        out[i] = 0.5 * a[i];
    }
}

/// `out = a / 2` over the first `a.len() - a.len() / 2` elements: a bound the preamble computes.
#[kernel]
pub fn halve_first(out: &mut [f64], a: &[f64]) {
    let n = a.len() / 2;
    let m = a.len();
    for i in 0..m - n {
        out[i] = 0.5 * a[i];
    }
}

/// `out = a / d`: a division that checks its divisor on the device.
#[kernel]
pub fn divide(out: &mut [i64], a: &[i64], d: i64) {
    for i in 0..out.len() {
        out[i] = a[i] / d;
    }
}

/// `out = a`, after a preamble that divides by `d` (and so panics where it is 0).
#[kernel]
pub fn copy_parted(out: &mut [f64], a: &[f64], d: usize) {
    let _parts = 64 / d;
    for i in 0..out.len() {
        out[i] = a[i];
    }
}

/// The sum of `a`, from 0.0.
#[kernel]
pub fn total(a: &[f64]) -> f64 {
    let mut sum = 0.0;
    for i in 0..a.len() {
        sum += a[i];
    }
    sum
}

/// The sum, minimum and maximum of `a`, from 0, `i64::MAX` and `i64::MIN`.
#[kernel]
pub fn extremes(a: &[i64]) -> (i64, i64, i64) {
    let mut sum = 0;
    let mut low = i64::MAX;
    let mut high = i64::MIN;
    for i in 0..a.len() {
        sum += a[i];
        low = low.min(a[i]);
        high = high.max(a[i]);
    }
    (sum, low, high)
}

/// The maximum, minimum and maximum again of `a`: results in another order than the reductions', one twice.
#[kernel]
pub fn high_low_high(a: &[i64]) -> (i64, i64, i64) {
    let mut low = i64::MAX;
    let mut high = i64::MIN;
    for i in 0..a.len() {
        low = low.min(a[i]);
        high = high.max(a[i]);
    }
    (high, low, high)
}

/// The least of `x[5]` and `x[..n]`: a seed that may lie outside the slice.
#[kernel]
pub fn smallest_from(x: &[i64], n: usize) -> i64 {
    let mut min = x[5];
    for i in 0..n {
        min = min.min(x[i]);
    }
    min
}

/// The sum of `a` times `by`: a result that reads a parameter.
#[kernel]
pub fn scaled_sum(a: &[i64], by: i64) -> i64 {
    let mut sum = 0;
    for i in 0..a.len() {
        sum += a[i];
    }
    sum * by
}

/// `out[i] = Σ taps[j] input[i + j]` over four taps, passed by value.
#[kernel]
pub fn filter4(out: &mut [f64], input: &[f64], taps: &[f64; 4]) {
    for i in 0..out.len() {
        let mut sum = 0.0;
        for j in 0..4 {
            sum += taps[j] * input[i + j];
        }
        out[i] = sum;
    }
}

/// The sum of `a` plus its length: a result that reads the preamble.
#[kernel]
pub fn sum_past(a: &[i64]) -> i64 {
    let n = a.len() as i64;
    let mut sum = 0;
    for i in 0..a.len() {
        sum += a[i];
    }
    sum + n
}
