//! Scatter reductions: iterations that update shared elements of a `&mut` slice with one combining
//! operation, which the GPU applies with atomics. One kernel per atomic helper of the C++ prelude, for
//! every element type it takes.
//!
//! This file is real Rust: rustc compiles it, and that build is what the GPU must compute. Every kernel
//! gives the same result whatever order its updates are applied in, so the GPU's result is rustc's bit
//! for bit: integers wrap, `min` and `max` pick a value, and the float additions add integer values
//! small enough to be exact (2^24 is far above any of these sums) to elements rounded to integers first.
//! Indices come from the data (`keys[i] % len`), so any input is in bounds.

// Kernels are index loops by design.
#![allow(clippy::all)]

use rs2gpu::kernel;

/// An element of `out` chosen by the data: many iterations share each one.
fn bin(key: u64, len: usize) -> usize {
    (key % len as u64) as usize
}

/// Rounds `out` to integers, then adds integer values of `v` (|v| < 2^4) into it.
#[kernel]
pub fn add_f64(out: &mut [f64], keys: &[u64], v: &[f64]) {
    for j in 0..out.len() {
        out[j] = out[j].floor();
    }
    for i in 0..v.len() {
        out[bin(keys[i], out.len())] += (v[i] * 8.0).floor();
    }
}

#[kernel]
pub fn sub_f32(out: &mut [f32], keys: &[u64], v: &[f32]) {
    for j in 0..out.len() {
        out[j] = out[j].floor();
    }
    for i in 0..v.len() {
        out[bin(keys[i], out.len())] -= (v[i] * 8.0).floor();
    }
}

/// `t = t + v` and `t = v + t` are the same update as `t += v`.
#[kernel]
pub fn add_f32_spelled_out(out: &mut [f32], keys: &[u64], v: &[f32]) {
    for j in 0..out.len() {
        out[j] = out[j].floor();
    }
    for i in 0..v.len() {
        let k = bin(keys[i], out.len());
        if v[i] > 0.0 {
            out[k] = out[k] + (v[i] * 4.0).floor();
        } else {
            out[k] = (v[i] * 4.0).floor() + out[k];
        }
    }
}

/// Multiplying by ±1 is exact in any order.
#[kernel]
pub fn mul_sign_f64(out: &mut [f64], keys: &[u64], v: &[f64]) {
    for i in 0..v.len() {
        out[bin(keys[i], out.len())] *= v[i].signum();
    }
}

#[kernel]
pub fn add_i32(out: &mut [i32], keys: &[u64], v: &[i32]) {
    for i in 0..v.len() {
        out[bin(keys[i], out.len())] += v[i];
    }
}

/// `+=` and `-=` of one element are the same combining operation.
#[kernel]
pub fn add_and_sub_u32(out: &mut [u32], keys: &[u64], v: &[u32]) {
    for i in 0..v.len() {
        out[bin(keys[i], out.len())] += v[i];
        out[bin(keys[i] / 7, out.len())] -= v[i] / 3;
    }
}

#[kernel]
pub fn wrapping_sub_i64(out: &mut [i64], keys: &[u64], v: &[i64]) {
    for i in 0..v.len() {
        let k = bin(keys[i], out.len());
        out[k] = out[k].wrapping_sub(v[i]);
    }
}

#[kernel]
pub fn add_u64_isize_usize(a: &mut [u64], b: &mut [isize], c: &mut [usize], keys: &[u64], v: &[u64]) {
    for i in 0..v.len() {
        a[bin(keys[i], a.len())] += v[i];
        b[bin(keys[i] >> 3, b.len())] += v[i] as isize;
        c[bin(keys[i] >> 6, c.len())] = c[bin(keys[i] >> 6, c.len())].wrapping_add(v[i] as usize);
    }
}

#[kernel]
pub fn mul_i32_u64(a: &mut [i32], b: &mut [u64], keys: &[u64], v: &[u64]) {
    for i in 0..v.len() {
        a[bin(keys[i], a.len())] *= v[i] as i32;
        b[bin(keys[i] >> 5, b.len())] *= v[i];
    }
}

#[kernel]
pub fn bitwise_i32_u32(a: &mut [i32], b: &mut [u32], c: &mut [i32], keys: &[u64], v: &[u32]) {
    for i in 0..v.len() {
        a[bin(keys[i], a.len())] |= v[i] as i32;
        b[bin(keys[i] >> 2, b.len())] &= v[i];
        c[bin(keys[i] >> 4, c.len())] ^= v[i] as i32;
    }
}

#[kernel]
pub fn bitwise_i64_u64(a: &mut [i64], b: &mut [u64], c: &mut [u64], keys: &[u64], v: &[u64]) {
    for i in 0..v.len() {
        a[bin(keys[i], a.len())] &= v[i] as i64;
        b[bin(keys[i] >> 2, b.len())] |= v[i];
        c[bin(keys[i] >> 4, c.len())] = c[bin(keys[i] >> 4, c.len())] ^ v[i];
    }
}

#[kernel]
pub fn min_max_f64(lo: &mut [f64], hi: &mut [f64], keys: &[u64], v: &[f64]) {
    for i in 0..v.len() {
        let k = bin(keys[i], lo.len());
        lo[k] = lo[k].min(v[i]);
        let m = bin(keys[i] >> 8, hi.len());
        hi[m] = v[i].max(hi[m]);
    }
}

#[kernel]
pub fn min_max_f32(lo: &mut [f32], hi: &mut [f32], keys: &[u64], v: &[f32]) {
    for i in 0..v.len() {
        let k = bin(keys[i], lo.len());
        lo[k] = lo[k].min(v[i]);
        let m = bin(keys[i] >> 8, hi.len());
        hi[m] = hi[m].max(v[i]);
    }
}

#[kernel]
pub fn min_max_i32_u32(lo: &mut [i32], hi: &mut [u32], keys: &[u64], v: &[i32]) {
    for i in 0..v.len() {
        let k = bin(keys[i], lo.len());
        lo[k] = lo[k].min(v[i]);
        let m = bin(keys[i] >> 8, hi.len());
        hi[m] = hi[m].max(v[i] as u32);
    }
}

#[kernel]
pub fn min_max_i64_u64(lo: &mut [i64], hi: &mut [u64], keys: &[u64], v: &[i64]) {
    for i in 0..v.len() {
        let k = bin(keys[i], lo.len());
        lo[k] = v[i].min(lo[k]);
        let m = bin(keys[i] >> 8, hi.len());
        hi[m] = hi[m].max(v[i] as u64);
    }
}

/// Few elements, many updates each: all the contention on three addresses (or fewer).
#[kernel]
pub fn contended_i64(out: &mut [i64], keys: &[u64], v: &[i64]) {
    for i in 0..v.len() {
        out[bin(keys[i] % 3, out.len())] += v[i];
    }
}

/// Each iteration adds into its element and the next one: affine indices that overlap.
#[kernel]
pub fn smear_i32(out: &mut [i32], v: &[i32]) {
    for i in 0..out.len() - 1 {
        out[i] += v[i];
        out[i + 1] += v[i] / 2;
    }
}

/// Column sums of a row-major matrix over its flat index: every row adds into the same row of sums. (As
/// a nest `for r { for c { sums[c] += .. } }`, `r` would be a host loop: each row a launch.)
#[kernel]
pub fn column_sums_i64(sums: &mut [i64], m: &[i64], width: usize) {
    let cols = width % sums.len() + 1;
    let rows = m.len() / cols;
    for k in 0..rows * cols {
        sums[k % cols] = sums[k % cols].wrapping_add(m[k]);
    }
}

/// Only some iterations update, under a condition.
#[kernel]
pub fn count_positive(counts: &mut [u32], keys: &[u64], v: &[f64]) {
    for i in 0..v.len() {
        if v[i] > 0.0 {
            counts[bin(keys[i], counts.len())] += 1;
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Cell {
    pub count: u32,
    pub total: i64,
}

/// Fields of struct elements are updated like elements.
#[kernel]
pub fn accumulate_cells(cells: &mut [Cell], keys: &[u64], v: &[i64]) {
    for i in 0..v.len() {
        let k = bin(keys[i], cells.len());
        cells[k].count += 1;
        cells[k].total += v[i];
    }
}
