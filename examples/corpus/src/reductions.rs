//! Reductions: sums, norms, counts, extrema with their location, checksums, flags.

use rs2gpu::kernel;

/// L1 norm, `Σ |x|`.
#[kernel]
pub fn sum_abs(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += x[i].abs();
    }
    s
}

/// Euclidean norm.
#[kernel]
pub fn l2_norm(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for i in 0..x.len() {
        s += x[i] * x[i];
    }
    s.sqrt()
}

/// Smallest value and its first position.
#[kernel]
pub fn argmin(x: &[f64]) -> (f64, usize) {
    let mut m = f64::INFINITY;
    let mut at = 0;
    for i in 0..x.len() {
        if x[i] < m {
            m = x[i];
            at = i;
        }
    }
    (m, at)
}

/// How many values lie in `[lo, hi)`.
#[kernel]
pub fn count_in_range(x: &[f64], lo: f64, hi: f64) -> u64 {
    let mut n = 0u64;
    for i in 0..x.len() {
        if x[i] >= lo && x[i] < hi {
            n += 1;
        }
    }
    n
}

/// XOR checksum of the words.
#[kernel]
pub fn xor_checksum(x: &[u32]) -> u32 {
    let mut h = 0u32;
    for i in 0..x.len() {
        h ^= x[i];
    }
    h
}

/// Whether every value is finite.
pub fn all_finite(x: &[f32]) -> bool {
    let mut ok = true;
    for i in 0..x.len() {
        ok &= x[i].is_finite();
    }
    ok
}

/// Largest and smallest integer in one pass.
#[kernel]
pub fn int_range(x: &[i32]) -> (i32, i32) {
    let mut lo = i32::MAX;
    let mut hi = i32::MIN;
    for i in 0..x.len() {
        lo = lo.min(x[i]);
        hi = hi.max(x[i]);
    }
    (lo, hi)
}

/// Population variance in two passes, the second using the first's mean.
pub fn variance_two_pass(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mut s = 0.0;
    for i in 0..x.len() {
        s += x[i];
    }
    let mean = s / n;
    let mut v = 0.0;
    for i in 0..x.len() {
        v += (x[i] - mean) * (x[i] - mean);
    }
    v / n
}

/// Product of all values with `Iterator::product`.
pub fn product_iter(x: &[f64]) -> f64 {
    x.iter().product()
}

/// Largest value with `fold`.
pub fn max_fold(x: &[f32]) -> f32 {
    x.iter().fold(f32::MIN, |m, &v| m.max(v))
}
