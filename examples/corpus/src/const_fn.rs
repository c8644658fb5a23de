//! `const fn` helpers, used at run time and in constants.

use rs2gpu::kernel;

/// `x³`.
pub const fn cube(x: f64) -> f64 {
    x * x * x
}

/// Linear interpolation between `a` and `b`.
pub const fn lerp(a: f64, b: f64, t: f64) -> f64 {
    a + t * (b - a)
}

/// Whether `x` is a power of two.
pub const fn is_pow2(x: u32) -> bool {
    x != 0 && x & (x - 1) == 0
}

/// A multiplicative hash that spreads the high bits down.
pub const fn mix(x: u32) -> u32 {
    let h = x.wrapping_mul(0x9E37_79B1);
    h ^ (h >> 16)
}

/// Row-major position of `(r, c)` in a matrix of `cols` columns.
pub const fn at(r: usize, c: usize, cols: usize) -> usize {
    r * cols + c
}

/// Taps of the smoothing filter below, computed by a `const fn`.
pub const TAPS: usize = 2 * RADIUS + 1;
const RADIUS: usize = half(4);

const fn half(n: usize) -> usize {
    n / 2
}

/// Cubes every element.
#[kernel]
pub fn cube_all(out: &mut [f64], x: &[f64]) {
    for i in 0..out.len() {
        out[i] = cube(x[i]);
    }
}

/// Blends two signals, `out = lerp(a, b, t)`.
#[kernel]
pub fn blend(out: &mut [f64], a: &[f64], b: &[f64], t: f64) {
    for i in 0..out.len() {
        out[i] = lerp(a[i], b[i], t);
    }
}

/// Flags the powers of two with 1, the rest with 0.
#[kernel]
pub fn flag_powers_of_two(out: &mut [u8], x: &[u32]) {
    for i in 0..out.len() {
        out[i] = is_pow2(x[i]) as u8;
    }
}

/// Hashes every key.
#[kernel]
pub fn hash_keys(out: &mut [u32], keys: &[u32]) {
    for i in 0..out.len() {
        out[i] = mix(keys[i]);
    }
}

/// Transpose of a `rows` x `cols` matrix, positions computed by a `const fn`.
#[kernel]
pub fn transpose_at(out: &mut [f32], a: &[f32], rows: usize, cols: usize) {
    for r in 0..rows {
        for c in 0..cols {
            out[at(c, r, rows)] = a[at(r, c, cols)];
        }
    }
}

/// Box filter of `TAPS` taps, a constant computed by `const fn`s, over the interior.
#[kernel]
pub fn box_filter(out: &mut [f64], x: &[f64]) {
    for i in RADIUS..x.len() - RADIUS {
        let mut s = 0.0;
        for k in 0..TAPS {
            s += x[i - RADIUS + k];
        }
        out[i] = s / TAPS as f64;
    }
}
