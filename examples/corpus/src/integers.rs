//! Integer arithmetic: binning, bit tricks, fixed point, and the methods with overflow behaviour.

use rs2gpu::kernel;

/// Bin of each value in `bins` bins of `width` from `lo`, out-of-range values in the end bins.
#[kernel]
pub fn bin_index(out: &mut [u32], x: &[f32], lo: f32, width: f32, bins: u32) {
    for i in 0..out.len() {
        let b = ((x[i] - lo) / width).floor() as i64;
        out[i] = b.clamp(0, bins as i64 - 1) as u32;
    }
}

/// Greatest common divisor of each pair, by Euclid's algorithm.
#[kernel]
pub fn gcd_pairs(out: &mut [u64], a: &[u64], b: &[u64]) {
    for i in 0..out.len() {
        let (mut x, mut y) = (a[i], b[i]);
        while y != 0 {
            let t = x % y;
            x = y;
            y = t;
        }
        out[i] = x;
    }
}

/// Greatest common divisor of each pair, by Euclid's algorithm, without tuple patterns.
#[kernel]
pub fn gcd_pairs_plain(out: &mut [u64], a: &[u64], b: &[u64]) {
    for i in 0..out.len() {
        let mut x = a[i];
        let mut y = b[i];
        while y != 0 {
            let t = x % y;
            x = y;
            y = t;
        }
        out[i] = x;
    }
}

/// Parity of each word: 1 when an odd number of its bits are set.
#[kernel]
pub fn parity(out: &mut [u32], x: &[u64]) {
    for i in 0..out.len() {
        out[i] = x[i].count_ones() & 1;
    }
}

/// Q16.16 fixed-point product, through a 64-bit intermediate.
#[kernel]
pub fn fixed_mul_q16(out: &mut [i32], a: &[i32], b: &[i32]) {
    for i in 0..out.len() {
        out[i] = ((a[i] as i64 * b[i] as i64) >> 16) as i32;
    }
}

/// Brightens 8-bit samples, saturating at 255.
#[kernel]
pub fn brighten_saturating(px: &mut [u8], delta: u8) {
    for i in 0..px.len() {
        px[i] = px[i].saturating_add(delta);
    }
}

/// FNV-style mixing step with a rotation.
#[kernel]
pub fn rotate_mix(out: &mut [u32], x: &[u32]) {
    for i in 0..out.len() {
        out[i] = x[i].rotate_left(5) ^ 0x5bd1_e995;
    }
}

/// Distance between two signed samples, as an unsigned number.
pub fn abs_differences(out: &mut [u32], a: &[i32], b: &[i32]) {
    for i in 0..out.len() {
        out[i] = a[i].abs_diff(b[i]);
    }
}

/// Product of each pair, `i64::MAX` when it overflows, through `checked_mul`.
#[kernel]
pub fn products_or_max(out: &mut [i64], a: &[i64], b: &[i64]) {
    for i in 0..out.len() {
        out[i] = a[i].checked_mul(b[i]).unwrap_or(i64::MAX);
    }
}

/// Wrapping difference of neighbours, the first element kept.
#[kernel]
pub fn wrapping_deltas(out: &mut [u16], x: &[u16]) {
    for i in 0..out.len() {
        out[i] = if i == 0 { x[0] } else { x[i].wrapping_sub(x[i - 1]) };
    }
}
