//! Kernels written the way ordinary Rust is written, using what rustc accepts beyond the basic forms:
//! coercions at call sites, `use` declarations, the integer methods of std, and stepped and reversed
//! ranges. rustc's build of this file (the cpu backend) gives the values every device must compute.

use rs2gpu::kernel;
use std::f64::consts;
use std::f64::consts::PI;
use std::f64::consts::FRAC_1_SQRT_2 as HALF_ROOT;

use self::geometry::{ring_area as annulus, square};

/// Reads its slice only: callers may pass a `&mut [f64]`, which rustc reborrows as `&[f64]`.
fn heat_point(s: &[f64], i: usize) -> f64 {
    let left = if i > 0 { s[i - 1] } else { s[i] };
    let right = if i + 1 < s.len() { s[i + 1] } else { s[i] };
    0.25 * left + 0.5 * s[i] + 0.25 * right
}

/// Horner's rule over coefficients highest last; callers pass slices and arrays `&[f64; N]`, which
/// rustc unsizes to `&[f64]`.
fn horner(c: &[f64], x: f64) -> f64 {
    let mut s = 0.0;
    for k in (0..c.len()).rev() {
        s = s * x + c[k];
    }
    s
}

/// Generic over the element type, called with an array too.
fn largest<T: Copy + PartialOrd>(v: &[T]) -> T {
    let mut m = v[0];
    for &x in v {
        if x > m {
            m = x;
        }
    }
    m
}

/// Polynomials with coefficients from arrays of two lengths and from a slice, through one helper.
#[kernel]
pub fn polynomials(out: &mut [f64], x: &[f64], c: &[f64; 4], d: &[f64; 3]) {
    for i in 0..out.len().min(x.len()) {
        out[i] = horner(c, x[i]) - horner(d, x[i]) + horner(x, 0.125) * largest(c) + largest(x);
    }
}

/// Two sweeps of a 1-D heat stencil, `a` → `b` → `a`: each loop reads through the helper the slice
/// that it does not write, both of them `&mut` parameters.
#[kernel]
pub fn heat_steps(a: &mut [f64], b: &mut [f64], steps: usize) {
    for _ in 0..steps {
        for i in 0..a.len().min(b.len()) {
            b[i] = heat_point(a, i);
        }
        for i in 0..a.len().min(b.len()) {
            a[i] = heat_point(b, i);
        }
    }
}

/// The saturating, rotating and checked methods of `u8` on every pair `(a[i], b[i])`.
#[kernel]
pub fn int_methods_u8(out: &mut [u8], a: &[u8], b: &[u8]) {
    for i in 0..a.len().min(b.len()).min(out.len() / 11) {
        out[11 * i] = a[i].saturating_add(b[i]);
        out[11 * i + 1] = a[i].saturating_sub(b[i]);
        out[11 * i + 2] = a[i].saturating_mul(b[i]);
        out[11 * i + 3] = a[i].rotate_left(b[i] as u32);
        out[11 * i + 4] = a[i].rotate_right(b[i] as u32);
        out[11 * i + 5] = a[i].checked_add(b[i]).unwrap_or(7);
        out[11 * i + 6] = if let Some(d) = a[i].checked_sub(b[i]) { d } else { 9 };
        out[11 * i + 7] = (a[i] / 2).checked_mul(b[i]).unwrap_or(a[i]);
        out[11 * i + 8] = a[i].checked_div(b[i]).unwrap_or(5);
        out[11 * i + 9] = a[i].checked_rem(b[i]).unwrap_or(3);
        out[11 * i + 10] = a[i].checked_add(1).is_none() as u8 + 2 * b[i].checked_div(a[i]).is_some() as u8;
    }
}

/// The saturating, rotating and checked methods of `i8` on every pair `(a[i], b[i])`.
#[kernel]
pub fn int_methods_i8(out: &mut [i8], a: &[i8], b: &[i8]) {
    for i in 0..a.len().min(b.len()).min(out.len() / 11) {
        out[11 * i] = a[i].saturating_add(b[i]);
        out[11 * i + 1] = a[i].saturating_sub(b[i]);
        out[11 * i + 2] = a[i].saturating_mul(b[i]);
        out[11 * i + 3] = a[i].rotate_left(b[i] as u32);
        out[11 * i + 4] = a[i].rotate_right(b[i] as u32);
        out[11 * i + 5] = a[i].checked_add(b[i]).unwrap_or(7);
        out[11 * i + 6] = if let Some(d) = a[i].checked_sub(b[i]) { d } else { 9 };
        out[11 * i + 7] = (a[i] / 2).checked_mul(b[i]).unwrap_or(a[i]);
        out[11 * i + 8] = a[i].checked_div(b[i]).unwrap_or(5);
        out[11 * i + 9] = a[i].checked_rem(b[i]).unwrap_or(3);
        out[11 * i + 10] = a[i].checked_add(1).is_none() as i8 + 2 * b[i].checked_div(a[i]).is_some() as i8;
    }
}

/// The saturating, rotating and checked methods of `i16` on every pair `(a[i], b[i])`.
#[kernel]
pub fn int_methods_i16(out: &mut [i16], a: &[i16], b: &[i16]) {
    for i in 0..a.len().min(b.len()).min(out.len() / 11) {
        out[11 * i] = a[i].saturating_add(b[i]);
        out[11 * i + 1] = a[i].saturating_sub(b[i]);
        out[11 * i + 2] = a[i].saturating_mul(b[i]);
        out[11 * i + 3] = a[i].rotate_left(b[i] as u32);
        out[11 * i + 4] = a[i].rotate_right(b[i] as u32);
        out[11 * i + 5] = a[i].checked_add(b[i]).unwrap_or(7);
        out[11 * i + 6] = if let Some(d) = a[i].checked_sub(b[i]) { d } else { 9 };
        out[11 * i + 7] = (a[i] / 2).checked_mul(b[i]).unwrap_or(a[i]);
        out[11 * i + 8] = a[i].checked_div(b[i]).unwrap_or(5);
        out[11 * i + 9] = a[i].checked_rem(b[i]).unwrap_or(3);
        out[11 * i + 10] = a[i].checked_add(1).is_none() as i16 + 2 * b[i].checked_div(a[i]).is_some() as i16;
    }
}

/// The saturating, rotating and checked methods of `u32` on every pair `(a[i], b[i])`.
#[kernel]
pub fn int_methods_u32(out: &mut [u32], a: &[u32], b: &[u32]) {
    for i in 0..a.len().min(b.len()).min(out.len() / 11) {
        out[11 * i] = a[i].saturating_add(b[i]);
        out[11 * i + 1] = a[i].saturating_sub(b[i]);
        out[11 * i + 2] = a[i].saturating_mul(b[i]);
        out[11 * i + 3] = a[i].rotate_left(b[i] as u32);
        out[11 * i + 4] = a[i].rotate_right(b[i] as u32);
        out[11 * i + 5] = a[i].checked_add(b[i]).unwrap_or(7);
        out[11 * i + 6] = if let Some(d) = a[i].checked_sub(b[i]) { d } else { 9 };
        out[11 * i + 7] = (a[i] / 2).checked_mul(b[i]).unwrap_or(a[i]);
        out[11 * i + 8] = a[i].checked_div(b[i]).unwrap_or(5);
        out[11 * i + 9] = a[i].checked_rem(b[i]).unwrap_or(3);
        out[11 * i + 10] = a[i].checked_add(1).is_none() as u32 + 2 * b[i].checked_div(a[i]).is_some() as u32;
    }
}

/// The saturating, rotating and checked methods of `i32` on every pair `(a[i], b[i])`.
#[kernel]
pub fn int_methods_i32(out: &mut [i32], a: &[i32], b: &[i32]) {
    for i in 0..a.len().min(b.len()).min(out.len() / 11) {
        out[11 * i] = a[i].saturating_add(b[i]);
        out[11 * i + 1] = a[i].saturating_sub(b[i]);
        out[11 * i + 2] = a[i].saturating_mul(b[i]);
        out[11 * i + 3] = a[i].rotate_left(b[i] as u32);
        out[11 * i + 4] = a[i].rotate_right(b[i] as u32);
        out[11 * i + 5] = a[i].checked_add(b[i]).unwrap_or(7);
        out[11 * i + 6] = if let Some(d) = a[i].checked_sub(b[i]) { d } else { 9 };
        out[11 * i + 7] = (a[i] / 2).checked_mul(b[i]).unwrap_or(a[i]);
        out[11 * i + 8] = a[i].checked_div(b[i]).unwrap_or(5);
        out[11 * i + 9] = a[i].checked_rem(b[i]).unwrap_or(3);
        out[11 * i + 10] = a[i].checked_add(1).is_none() as i32 + 2 * b[i].checked_div(a[i]).is_some() as i32;
    }
}

/// The saturating, rotating and checked methods of `u64` on every pair `(a[i], b[i])`.
#[kernel]
pub fn int_methods_u64(out: &mut [u64], a: &[u64], b: &[u64]) {
    for i in 0..a.len().min(b.len()).min(out.len() / 11) {
        out[11 * i] = a[i].saturating_add(b[i]);
        out[11 * i + 1] = a[i].saturating_sub(b[i]);
        out[11 * i + 2] = a[i].saturating_mul(b[i]);
        out[11 * i + 3] = a[i].rotate_left(b[i] as u32);
        out[11 * i + 4] = a[i].rotate_right(b[i] as u32);
        out[11 * i + 5] = a[i].checked_add(b[i]).unwrap_or(7);
        out[11 * i + 6] = if let Some(d) = a[i].checked_sub(b[i]) { d } else { 9 };
        out[11 * i + 7] = (a[i] / 2).checked_mul(b[i]).unwrap_or(a[i]);
        out[11 * i + 8] = a[i].checked_div(b[i]).unwrap_or(5);
        out[11 * i + 9] = a[i].checked_rem(b[i]).unwrap_or(3);
        out[11 * i + 10] = a[i].checked_add(1).is_none() as u64 + 2 * b[i].checked_div(a[i]).is_some() as u64;
    }
}

/// The saturating, rotating and checked methods of `i64` on every pair `(a[i], b[i])`.
#[kernel]
pub fn int_methods_i64(out: &mut [i64], a: &[i64], b: &[i64]) {
    for i in 0..a.len().min(b.len()).min(out.len() / 11) {
        out[11 * i] = a[i].saturating_add(b[i]);
        out[11 * i + 1] = a[i].saturating_sub(b[i]);
        out[11 * i + 2] = a[i].saturating_mul(b[i]);
        out[11 * i + 3] = a[i].rotate_left(b[i] as u32);
        out[11 * i + 4] = a[i].rotate_right(b[i] as u32);
        out[11 * i + 5] = a[i].checked_add(b[i]).unwrap_or(7);
        out[11 * i + 6] = if let Some(d) = a[i].checked_sub(b[i]) { d } else { 9 };
        out[11 * i + 7] = (a[i] / 2).checked_mul(b[i]).unwrap_or(a[i]);
        out[11 * i + 8] = a[i].checked_div(b[i]).unwrap_or(5);
        out[11 * i + 9] = a[i].checked_rem(b[i]).unwrap_or(3);
        out[11 * i + 10] = a[i].checked_add(1).is_none() as i64 + 2 * b[i].checked_div(a[i]).is_some() as i64;
    }
}

/// Every third element (a parallel loop with a stride), then a reversed parallel loop, then a stride
/// the call gives (`step + 1`: a step of 0 panics, in Rust with a message of its own, see kernels.md).
#[kernel]
pub fn stepped_and_reversed(a: &mut [f64], b: &[f64], step: usize) {
    for i in (0..a.len().min(b.len())).step_by(3) {
        a[i] = b[i] * 2.0;
    }
    for i in (1..a.len().min(b.len())).rev() {
        a[i] += b[i - 1];
    }
    for i in (0..a.len().min(b.len())).step_by(step + 1) {
        a[i] -= 0.5;
    }
}

/// Sums over stepped and reversed inner ranges, each a different walk over the prefix `b[..=i]`.
#[kernel]
pub fn prefix_walks(out: &mut [i64], b: &[i64], step: usize) {
    for i in 0..out.len().min(b.len()) {
        let mut t: i64 = 0;
        for j in (0..=i).rev() {
            t = t.wrapping_mul(3).wrapping_add(b[j]);
        }
        for j in (0..i).rev().step_by(step + 1) {
            t = t.wrapping_mul(5).wrapping_add(b[j]);
        }
        for j in (0..i).step_by(step + 1).rev() {
            t = t.wrapping_mul(7).wrapping_add(b[j]);
        }
        for j in (2..i).step_by(2) {
            t = t.wrapping_mul(11).wrapping_add(b[j]);
        }
        out[i] = t;
    }
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Disc {
    pub scale: f64,
    pub offset: f64,
}

mod geometry {
    use super::*;

    pub fn square(x: f64) -> f64 {
        x * x
    }

    pub fn ring_area(outer: f64, inner: f64) -> f64 {
        PI * (square(outer) - square(inner))
    }
}

/// Names brought in by `use`: std constants (by name, by their module, renamed), and helper fns of
/// another module (one renamed), which sees the crate root's `use`s through `use super::*`.
#[kernel]
pub fn ring_areas(out: &mut [f64], r: &[f64], disc: &Disc) {
    for (o, x) in out.iter_mut().zip(r) {
        let outer = disc.scale * x + disc.offset;
        *o = annulus(outer, outer * HALF_ROOT) + consts::TAU * square(*x);
    }
}
