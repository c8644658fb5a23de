//! Kernels that together use every construct and every intrinsic of the kernel language.
//!
//! This file is real Rust: rustc compiles it (with the `#[kernel]` attribute of the support crate), and
//! that build is what the GPU code must compute. Its purpose is coverage of the generated C++: every
//! operator, method and cast of every primitive type, so that each helper of the C++ prelude is
//! instantiated and compiled with NVRTC, hiprtc and clang.

// Kernels are index loops by design; the arithmetic below exists to be translated, not to be tidy.
#![allow(clippy::all, unused_parens, unused_mut, unused_variables)]

use rs2gpu::kernel;

// ---------------------------------------------------------------- consts

const SCALE: f64 = 2.5;
const HALF: f32 = 0.5;
const COUNT: usize = 4;
const LIMIT: i32 = 100;
const DOUBLE_LIMIT: i32 = LIMIT * 2 + 1;
const AREA: f64 = SCALE * SCALE;
const MASK: u32 = 0xff << 8;
const ENABLED: bool = true;

// ---------------------------------------------------------------- structs

/// Fields of one size: no padding.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Params {
    pub scale: f64,
    pub offset: f64,
    pub steps: i32,
    pub bias: f32,
}

/// Fields of mixed sizes: repr(C) pads before `x`, `y`, `big` and at the end.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Mixed {
    pub flag: u8,
    pub x: f64,
    pub tag: u16,
    pub y: f32,
    pub small: i8,
    pub big: i64,
    pub last: u8,
}

/// An array field and a nested struct.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Particle {
    pub pos: [f32; 3],
    pub mass: f64,
    pub id: u32,
    pub params: Params,
}

// ---------------------------------------------------------------- helpers

fn square<T: Copy + std::ops::Mul<Output = T>>(x: T) -> T {
    x * x
}

fn min_max(a: f64, b: f64) -> (f64, f64) {
    if a < b {
        (a, b)
    } else {
        (b, a)
    }
}

fn sum_window(a: &[f64], start: usize, len: usize) -> f64 {
    let mut s = 0.0;
    for k in start..start + len {
        if k < a.len() {
            s += a[k];
        }
    }
    s
}

fn apply(p: &Params, x: f64) -> f64 {
    p.scale * x + p.offset
}

fn make_mixed(flag: u8, x: f64) -> Mixed {
    Mixed { flag, x, tag: 7, y: 1.5, small: -3, big: -1, last: 255 }
}

fn bump(mut x: f64, mut n: u32) -> f64 {
    while n > 0 {
        x += 0.5;
        n -= 1;
    }
    x
}

fn first_even(limit: u32) -> u32 {
    let mut k = 1;
    loop {
        if k % 2 == 0 {
            return k;
        }
        if k >= limit {
            break;
        }
        k += 1;
    }
    limit
}

/// Every operator, compound assignment, method and cast of `i8`.
#[kernel]
pub fn int_ops_i8(out: &mut [i8], a: &[i8], b: &[i8], s: &[u32], flags: &mut [bool]) {
    for i in 0..out.len() {
        let x = a[i];
        let y = b[i];
        let k = s[i];
        let d = (y & 7) + 1;
        let mut r = x + y;
        r = r - x * y;
        r = r + x / d + x % d;
        r = r ^ (x & y) | (x ^ !y);
        r = r + (x << k) + (y >> k) + (x << 3) + (x >> 1u8) + (y << d) + (y >> (k as usize));
        r = r + -x;
        r += x;
        r -= y;
        r *= d;
        r /= d;
        r %= d + 1;
        r &= x | y;
        r |= x & y;
        r ^= y;
        r <<= k;
        r >>= 2;
        r = r.wrapping_add(x.wrapping_sub(y)).wrapping_mul(x.wrapping_neg());
        r = r.wrapping_add(x.wrapping_shl(k)).wrapping_add(y.wrapping_shr(k));
        r = r.wrapping_add(x.wrapping_pow(k)).wrapping_add(d.pow(2));
        r = r.wrapping_add(x.min(y)).wrapping_add(x.max(y)).wrapping_add(x.clamp(d, d + 4));
        r = r.wrapping_add(x.rem_euclid(d)).wrapping_add(x.div_euclid(d));
        r = r.wrapping_add((x.count_ones() + y.leading_zeros() + x.trailing_zeros()) as i8);
        r = r.wrapping_add(x.saturating_add(y)).wrapping_add(x.saturating_sub(y)).wrapping_add(x.saturating_mul(y));
        r = r.wrapping_add(x.rotate_left(k)).wrapping_add(y.rotate_right(k));
        r = r.wrapping_add(x.checked_add(y).unwrap_or(d)).wrapping_add(x.checked_sub(y).unwrap_or(d)).wrapping_add(x.checked_mul(y).unwrap_or(d));
        r = r.wrapping_add(x.checked_div(y).unwrap_or(d)).wrapping_add(if let Some(q) = x.checked_rem(y) { q } else { d });
        r = r.wrapping_add(x.abs()).wrapping_add(y.signum());
        r = r.wrapping_add(std::cmp::min(x, y)).wrapping_add(std::cmp::max(x, y));
        let cmp = (x == y) as i8 + (x != y) as i8 + (x < y) as i8 + (x <= y) as i8 + (x > y) as i8 + (x >= y) as i8;
        r = r.wrapping_add(cmp);
        let narrow = (x as u8) as i8 + (x as i8) as i8 + (x as u16) as i8 + (x as i16) as i8;
        let wide = (x as u32) as i8 + (x as i32) as i8 + (x as u64) as i8 + (x as i64) as i8 + (x as usize) as i8 + (x as isize) as i8;
        r = r.wrapping_add(narrow).wrapping_add(wide);
        let fx = x as f64 + y as f32 as f64;
        r = r.wrapping_add(fx as i8).wrapping_add((fx as f32) as i8);
        flags[i] = flags[i] && (x > y || x == d) && !(y < d);
        out[i] = r;
    }
}

/// Every operator, compound assignment, method and cast of `u8`.
#[kernel]
pub fn int_ops_u8(out: &mut [u8], a: &[u8], b: &[u8], s: &[u32], flags: &mut [bool]) {
    for i in 0..out.len() {
        let x = a[i];
        let y = b[i];
        let k = s[i];
        let d = (y & 7) + 1;
        let mut r = x + y;
        r = r - x * y;
        r = r + x / d + x % d;
        r = r ^ (x & y) | (x ^ !y);
        r = r + (x << k) + (y >> k) + (x << 3) + (x >> 1u8) + (y << d) + (y >> (k as usize));
        r += x;
        r -= y;
        r *= d;
        r /= d;
        r %= d + 1;
        r &= x | y;
        r |= x & y;
        r ^= y;
        r <<= k;
        r >>= 2;
        r = r.wrapping_add(x.wrapping_sub(y)).wrapping_mul(x.wrapping_neg());
        r = r.wrapping_add(x.wrapping_shl(k)).wrapping_add(y.wrapping_shr(k));
        r = r.wrapping_add(x.wrapping_pow(k)).wrapping_add(d.pow(2));
        r = r.wrapping_add(x.min(y)).wrapping_add(x.max(y)).wrapping_add(x.clamp(d, d + 4));
        r = r.wrapping_add(x.rem_euclid(d)).wrapping_add(x.div_euclid(d));
        r = r.wrapping_add((x.count_ones() + y.leading_zeros() + x.trailing_zeros()) as u8);
        r = r.wrapping_add(x.saturating_add(y)).wrapping_add(x.saturating_sub(y)).wrapping_add(x.saturating_mul(y));
        r = r.wrapping_add(x.rotate_left(k)).wrapping_add(y.rotate_right(k));
        r = r.wrapping_add(x.checked_add(y).unwrap_or(d)).wrapping_add(x.checked_sub(y).unwrap_or(d)).wrapping_add(x.checked_mul(y).unwrap_or(d));
        r = r.wrapping_add(x.checked_div(y).unwrap_or(d)).wrapping_add(if let Some(q) = x.checked_rem(y) { q } else { d });
        flags[i] = x.is_power_of_two();
        r = r.wrapping_add(std::cmp::min(x, y)).wrapping_add(std::cmp::max(x, y));
        let cmp = (x == y) as u8 + (x != y) as u8 + (x < y) as u8 + (x <= y) as u8 + (x > y) as u8 + (x >= y) as u8;
        r = r.wrapping_add(cmp);
        let narrow = (x as u8) as u8 + (x as i8) as u8 + (x as u16) as u8 + (x as i16) as u8;
        let wide = (x as u32) as u8 + (x as i32) as u8 + (x as u64) as u8 + (x as i64) as u8 + (x as usize) as u8 + (x as isize) as u8;
        r = r.wrapping_add(narrow).wrapping_add(wide);
        let fx = x as f64 + y as f32 as f64;
        r = r.wrapping_add(fx as u8).wrapping_add((fx as f32) as u8);
        flags[i] = flags[i] && (x > y || x == d) && !(y < d);
        out[i] = r;
    }
}

/// Every operator, compound assignment, method and cast of `i16`.
#[kernel]
pub fn int_ops_i16(out: &mut [i16], a: &[i16], b: &[i16], s: &[u32], flags: &mut [bool]) {
    for i in 0..out.len() {
        let x = a[i];
        let y = b[i];
        let k = s[i];
        let d = (y & 7) + 1;
        let mut r = x + y;
        r = r - x * y;
        r = r + x / d + x % d;
        r = r ^ (x & y) | (x ^ !y);
        r = r + (x << k) + (y >> k) + (x << 3) + (x >> 1u8) + (y << d) + (y >> (k as usize));
        r = r + -x;
        r += x;
        r -= y;
        r *= d;
        r /= d;
        r %= d + 1;
        r &= x | y;
        r |= x & y;
        r ^= y;
        r <<= k;
        r >>= 2;
        r = r.wrapping_add(x.wrapping_sub(y)).wrapping_mul(x.wrapping_neg());
        r = r.wrapping_add(x.wrapping_shl(k)).wrapping_add(y.wrapping_shr(k));
        r = r.wrapping_add(x.wrapping_pow(k)).wrapping_add(d.pow(2));
        r = r.wrapping_add(x.min(y)).wrapping_add(x.max(y)).wrapping_add(x.clamp(d, d + 4));
        r = r.wrapping_add(x.rem_euclid(d)).wrapping_add(x.div_euclid(d));
        r = r.wrapping_add((x.count_ones() + y.leading_zeros() + x.trailing_zeros()) as i16);
        r = r.wrapping_add(x.saturating_add(y)).wrapping_add(x.saturating_sub(y)).wrapping_add(x.saturating_mul(y));
        r = r.wrapping_add(x.rotate_left(k)).wrapping_add(y.rotate_right(k));
        r = r.wrapping_add(x.checked_add(y).unwrap_or(d)).wrapping_add(x.checked_sub(y).unwrap_or(d)).wrapping_add(x.checked_mul(y).unwrap_or(d));
        r = r.wrapping_add(x.checked_div(y).unwrap_or(d)).wrapping_add(if let Some(q) = x.checked_rem(y) { q } else { d });
        r = r.wrapping_add(x.abs()).wrapping_add(y.signum());
        r = r.wrapping_add(std::cmp::min(x, y)).wrapping_add(std::cmp::max(x, y));
        let cmp = (x == y) as i16 + (x != y) as i16 + (x < y) as i16 + (x <= y) as i16 + (x > y) as i16 + (x >= y) as i16;
        r = r.wrapping_add(cmp);
        let narrow = (x as u8) as i16 + (x as i8) as i16 + (x as u16) as i16 + (x as i16) as i16;
        let wide = (x as u32) as i16 + (x as i32) as i16 + (x as u64) as i16 + (x as i64) as i16 + (x as usize) as i16 + (x as isize) as i16;
        r = r.wrapping_add(narrow).wrapping_add(wide);
        let fx = x as f64 + y as f32 as f64;
        r = r.wrapping_add(fx as i16).wrapping_add((fx as f32) as i16);
        flags[i] = flags[i] && (x > y || x == d) && !(y < d);
        out[i] = r;
    }
}

/// Every operator, compound assignment, method and cast of `u16`.
#[kernel]
pub fn int_ops_u16(out: &mut [u16], a: &[u16], b: &[u16], s: &[u32], flags: &mut [bool]) {
    for i in 0..out.len() {
        let x = a[i];
        let y = b[i];
        let k = s[i];
        let d = (y & 7) + 1;
        let mut r = x + y;
        r = r - x * y;
        r = r + x / d + x % d;
        r = r ^ (x & y) | (x ^ !y);
        r = r + (x << k) + (y >> k) + (x << 3) + (x >> 1u8) + (y << d) + (y >> (k as usize));
        r += x;
        r -= y;
        r *= d;
        r /= d;
        r %= d + 1;
        r &= x | y;
        r |= x & y;
        r ^= y;
        r <<= k;
        r >>= 2;
        r = r.wrapping_add(x.wrapping_sub(y)).wrapping_mul(x.wrapping_neg());
        r = r.wrapping_add(x.wrapping_shl(k)).wrapping_add(y.wrapping_shr(k));
        r = r.wrapping_add(x.wrapping_pow(k)).wrapping_add(d.pow(2));
        r = r.wrapping_add(x.min(y)).wrapping_add(x.max(y)).wrapping_add(x.clamp(d, d + 4));
        r = r.wrapping_add(x.rem_euclid(d)).wrapping_add(x.div_euclid(d));
        r = r.wrapping_add((x.count_ones() + y.leading_zeros() + x.trailing_zeros()) as u16);
        r = r.wrapping_add(x.saturating_add(y)).wrapping_add(x.saturating_sub(y)).wrapping_add(x.saturating_mul(y));
        r = r.wrapping_add(x.rotate_left(k)).wrapping_add(y.rotate_right(k));
        r = r.wrapping_add(x.checked_add(y).unwrap_or(d)).wrapping_add(x.checked_sub(y).unwrap_or(d)).wrapping_add(x.checked_mul(y).unwrap_or(d));
        r = r.wrapping_add(x.checked_div(y).unwrap_or(d)).wrapping_add(if let Some(q) = x.checked_rem(y) { q } else { d });
        flags[i] = x.is_power_of_two();
        r = r.wrapping_add(std::cmp::min(x, y)).wrapping_add(std::cmp::max(x, y));
        let cmp = (x == y) as u16 + (x != y) as u16 + (x < y) as u16 + (x <= y) as u16 + (x > y) as u16 + (x >= y) as u16;
        r = r.wrapping_add(cmp);
        let narrow = (x as u8) as u16 + (x as i8) as u16 + (x as u16) as u16 + (x as i16) as u16;
        let wide = (x as u32) as u16 + (x as i32) as u16 + (x as u64) as u16 + (x as i64) as u16 + (x as usize) as u16 + (x as isize) as u16;
        r = r.wrapping_add(narrow).wrapping_add(wide);
        let fx = x as f64 + y as f32 as f64;
        r = r.wrapping_add(fx as u16).wrapping_add((fx as f32) as u16);
        flags[i] = flags[i] && (x > y || x == d) && !(y < d);
        out[i] = r;
    }
}

/// Every operator, compound assignment, method and cast of `i32`.
#[kernel]
pub fn int_ops_i32(out: &mut [i32], a: &[i32], b: &[i32], s: &[u32], flags: &mut [bool]) {
    for i in 0..out.len() {
        let x = a[i];
        let y = b[i];
        let k = s[i];
        let d = (y & 7) + 1;
        let mut r = x + y;
        r = r - x * y;
        r = r + x / d + x % d;
        r = r ^ (x & y) | (x ^ !y);
        r = r + (x << k) + (y >> k) + (x << 3) + (x >> 1u8) + (y << d) + (y >> (k as usize));
        r = r + -x;
        r += x;
        r -= y;
        r *= d;
        r /= d;
        r %= d + 1;
        r &= x | y;
        r |= x & y;
        r ^= y;
        r <<= k;
        r >>= 2;
        r = r.wrapping_add(x.wrapping_sub(y)).wrapping_mul(x.wrapping_neg());
        r = r.wrapping_add(x.wrapping_shl(k)).wrapping_add(y.wrapping_shr(k));
        r = r.wrapping_add(x.wrapping_pow(k)).wrapping_add(d.pow(2));
        r = r.wrapping_add(x.min(y)).wrapping_add(x.max(y)).wrapping_add(x.clamp(d, d + 4));
        r = r.wrapping_add(x.rem_euclid(d)).wrapping_add(x.div_euclid(d));
        r = r.wrapping_add((x.count_ones() + y.leading_zeros() + x.trailing_zeros()) as i32);
        r = r.wrapping_add(x.saturating_add(y)).wrapping_add(x.saturating_sub(y)).wrapping_add(x.saturating_mul(y));
        r = r.wrapping_add(x.rotate_left(k)).wrapping_add(y.rotate_right(k));
        r = r.wrapping_add(x.checked_add(y).unwrap_or(d)).wrapping_add(x.checked_sub(y).unwrap_or(d)).wrapping_add(x.checked_mul(y).unwrap_or(d));
        r = r.wrapping_add(x.checked_div(y).unwrap_or(d)).wrapping_add(if let Some(q) = x.checked_rem(y) { q } else { d });
        r = r.wrapping_add(x.abs()).wrapping_add(y.signum());
        r = r.wrapping_add(std::cmp::min(x, y)).wrapping_add(std::cmp::max(x, y));
        let cmp = (x == y) as i32 + (x != y) as i32 + (x < y) as i32 + (x <= y) as i32 + (x > y) as i32 + (x >= y) as i32;
        r = r.wrapping_add(cmp);
        let narrow = (x as u8) as i32 + (x as i8) as i32 + (x as u16) as i32 + (x as i16) as i32;
        let wide = (x as u32) as i32 + (x as i32) as i32 + (x as u64) as i32 + (x as i64) as i32 + (x as usize) as i32 + (x as isize) as i32;
        r = r.wrapping_add(narrow).wrapping_add(wide);
        let fx = x as f64 + y as f32 as f64;
        r = r.wrapping_add(fx as i32).wrapping_add((fx as f32) as i32);
        flags[i] = flags[i] && (x > y || x == d) && !(y < d);
        out[i] = r;
    }
}

/// Every operator, compound assignment, method and cast of `u32`.
#[kernel]
pub fn int_ops_u32(out: &mut [u32], a: &[u32], b: &[u32], s: &[u32], flags: &mut [bool]) {
    for i in 0..out.len() {
        let x = a[i];
        let y = b[i];
        let k = s[i];
        let d = (y & 7) + 1;
        let mut r = x + y;
        r = r - x * y;
        r = r + x / d + x % d;
        r = r ^ (x & y) | (x ^ !y);
        r = r + (x << k) + (y >> k) + (x << 3) + (x >> 1u8) + (y << d) + (y >> (k as usize));
        r += x;
        r -= y;
        r *= d;
        r /= d;
        r %= d + 1;
        r &= x | y;
        r |= x & y;
        r ^= y;
        r <<= k;
        r >>= 2;
        r = r.wrapping_add(x.wrapping_sub(y)).wrapping_mul(x.wrapping_neg());
        r = r.wrapping_add(x.wrapping_shl(k)).wrapping_add(y.wrapping_shr(k));
        r = r.wrapping_add(x.wrapping_pow(k)).wrapping_add(d.pow(2));
        r = r.wrapping_add(x.min(y)).wrapping_add(x.max(y)).wrapping_add(x.clamp(d, d + 4));
        r = r.wrapping_add(x.rem_euclid(d)).wrapping_add(x.div_euclid(d));
        r = r.wrapping_add((x.count_ones() + y.leading_zeros() + x.trailing_zeros()) as u32);
        r = r.wrapping_add(x.saturating_add(y)).wrapping_add(x.saturating_sub(y)).wrapping_add(x.saturating_mul(y));
        r = r.wrapping_add(x.rotate_left(k)).wrapping_add(y.rotate_right(k));
        r = r.wrapping_add(x.checked_add(y).unwrap_or(d)).wrapping_add(x.checked_sub(y).unwrap_or(d)).wrapping_add(x.checked_mul(y).unwrap_or(d));
        r = r.wrapping_add(x.checked_div(y).unwrap_or(d)).wrapping_add(if let Some(q) = x.checked_rem(y) { q } else { d });
        flags[i] = x.is_power_of_two();
        r = r.wrapping_add(std::cmp::min(x, y)).wrapping_add(std::cmp::max(x, y));
        let cmp = (x == y) as u32 + (x != y) as u32 + (x < y) as u32 + (x <= y) as u32 + (x > y) as u32 + (x >= y) as u32;
        r = r.wrapping_add(cmp);
        let narrow = (x as u8) as u32 + (x as i8) as u32 + (x as u16) as u32 + (x as i16) as u32;
        let wide = (x as u32) as u32 + (x as i32) as u32 + (x as u64) as u32 + (x as i64) as u32 + (x as usize) as u32 + (x as isize) as u32;
        r = r.wrapping_add(narrow).wrapping_add(wide);
        let fx = x as f64 + y as f32 as f64;
        r = r.wrapping_add(fx as u32).wrapping_add((fx as f32) as u32);
        flags[i] = flags[i] && (x > y || x == d) && !(y < d);
        out[i] = r;
    }
}

/// Every operator, compound assignment, method and cast of `i64`.
#[kernel]
pub fn int_ops_i64(out: &mut [i64], a: &[i64], b: &[i64], s: &[u32], flags: &mut [bool]) {
    for i in 0..out.len() {
        let x = a[i];
        let y = b[i];
        let k = s[i];
        let d = (y & 7) + 1;
        let mut r = x + y;
        r = r - x * y;
        r = r + x / d + x % d;
        r = r ^ (x & y) | (x ^ !y);
        r = r + (x << k) + (y >> k) + (x << 3) + (x >> 1u8) + (y << d) + (y >> (k as usize));
        r = r + -x;
        r += x;
        r -= y;
        r *= d;
        r /= d;
        r %= d + 1;
        r &= x | y;
        r |= x & y;
        r ^= y;
        r <<= k;
        r >>= 2;
        r = r.wrapping_add(x.wrapping_sub(y)).wrapping_mul(x.wrapping_neg());
        r = r.wrapping_add(x.wrapping_shl(k)).wrapping_add(y.wrapping_shr(k));
        r = r.wrapping_add(x.wrapping_pow(k)).wrapping_add(d.pow(2));
        r = r.wrapping_add(x.min(y)).wrapping_add(x.max(y)).wrapping_add(x.clamp(d, d + 4));
        r = r.wrapping_add(x.rem_euclid(d)).wrapping_add(x.div_euclid(d));
        r = r.wrapping_add((x.count_ones() + y.leading_zeros() + x.trailing_zeros()) as i64);
        r = r.wrapping_add(x.saturating_add(y)).wrapping_add(x.saturating_sub(y)).wrapping_add(x.saturating_mul(y));
        r = r.wrapping_add(x.rotate_left(k)).wrapping_add(y.rotate_right(k));
        r = r.wrapping_add(x.checked_add(y).unwrap_or(d)).wrapping_add(x.checked_sub(y).unwrap_or(d)).wrapping_add(x.checked_mul(y).unwrap_or(d));
        r = r.wrapping_add(x.checked_div(y).unwrap_or(d)).wrapping_add(if let Some(q) = x.checked_rem(y) { q } else { d });
        r = r.wrapping_add(x.abs()).wrapping_add(y.signum());
        r = r.wrapping_add(std::cmp::min(x, y)).wrapping_add(std::cmp::max(x, y));
        let cmp = (x == y) as i64 + (x != y) as i64 + (x < y) as i64 + (x <= y) as i64 + (x > y) as i64 + (x >= y) as i64;
        r = r.wrapping_add(cmp);
        let narrow = (x as u8) as i64 + (x as i8) as i64 + (x as u16) as i64 + (x as i16) as i64;
        let wide = (x as u32) as i64 + (x as i32) as i64 + (x as u64) as i64 + (x as i64) as i64 + (x as usize) as i64 + (x as isize) as i64;
        r = r.wrapping_add(narrow).wrapping_add(wide);
        let fx = x as f64 + y as f32 as f64;
        r = r.wrapping_add(fx as i64).wrapping_add((fx as f32) as i64);
        flags[i] = flags[i] && (x > y || x == d) && !(y < d);
        out[i] = r;
    }
}

/// Every operator, compound assignment, method and cast of `u64`.
#[kernel]
pub fn int_ops_u64(out: &mut [u64], a: &[u64], b: &[u64], s: &[u32], flags: &mut [bool]) {
    for i in 0..out.len() {
        let x = a[i];
        let y = b[i];
        let k = s[i];
        let d = (y & 7) + 1;
        let mut r = x + y;
        r = r - x * y;
        r = r + x / d + x % d;
        r = r ^ (x & y) | (x ^ !y);
        r = r + (x << k) + (y >> k) + (x << 3) + (x >> 1u8) + (y << d) + (y >> (k as usize));
        r += x;
        r -= y;
        r *= d;
        r /= d;
        r %= d + 1;
        r &= x | y;
        r |= x & y;
        r ^= y;
        r <<= k;
        r >>= 2;
        r = r.wrapping_add(x.wrapping_sub(y)).wrapping_mul(x.wrapping_neg());
        r = r.wrapping_add(x.wrapping_shl(k)).wrapping_add(y.wrapping_shr(k));
        r = r.wrapping_add(x.wrapping_pow(k)).wrapping_add(d.pow(2));
        r = r.wrapping_add(x.min(y)).wrapping_add(x.max(y)).wrapping_add(x.clamp(d, d + 4));
        r = r.wrapping_add(x.rem_euclid(d)).wrapping_add(x.div_euclid(d));
        r = r.wrapping_add((x.count_ones() + y.leading_zeros() + x.trailing_zeros()) as u64);
        r = r.wrapping_add(x.saturating_add(y)).wrapping_add(x.saturating_sub(y)).wrapping_add(x.saturating_mul(y));
        r = r.wrapping_add(x.rotate_left(k)).wrapping_add(y.rotate_right(k));
        r = r.wrapping_add(x.checked_add(y).unwrap_or(d)).wrapping_add(x.checked_sub(y).unwrap_or(d)).wrapping_add(x.checked_mul(y).unwrap_or(d));
        r = r.wrapping_add(x.checked_div(y).unwrap_or(d)).wrapping_add(if let Some(q) = x.checked_rem(y) { q } else { d });
        flags[i] = x.is_power_of_two();
        r = r.wrapping_add(std::cmp::min(x, y)).wrapping_add(std::cmp::max(x, y));
        let cmp = (x == y) as u64 + (x != y) as u64 + (x < y) as u64 + (x <= y) as u64 + (x > y) as u64 + (x >= y) as u64;
        r = r.wrapping_add(cmp);
        let narrow = (x as u8) as u64 + (x as i8) as u64 + (x as u16) as u64 + (x as i16) as u64;
        let wide = (x as u32) as u64 + (x as i32) as u64 + (x as u64) as u64 + (x as i64) as u64 + (x as usize) as u64 + (x as isize) as u64;
        r = r.wrapping_add(narrow).wrapping_add(wide);
        let fx = x as f64 + y as f32 as f64;
        r = r.wrapping_add(fx as u64).wrapping_add((fx as f32) as u64);
        flags[i] = flags[i] && (x > y || x == d) && !(y < d);
        out[i] = r;
    }
}

/// Every operator, compound assignment, method and cast of `usize`.
#[kernel]
pub fn int_ops_usize(out: &mut [usize], a: &[usize], b: &[usize], s: &[u32], flags: &mut [bool]) {
    for i in 0..out.len() {
        let x = a[i];
        let y = b[i];
        let k = s[i];
        let d = (y & 7) + 1;
        let mut r = x + y;
        r = r - x * y;
        r = r + x / d + x % d;
        r = r ^ (x & y) | (x ^ !y);
        r = r + (x << k) + (y >> k) + (x << 3) + (x >> 1u8) + (y << d) + (y >> (k as usize));
        r += x;
        r -= y;
        r *= d;
        r /= d;
        r %= d + 1;
        r &= x | y;
        r |= x & y;
        r ^= y;
        r <<= k;
        r >>= 2;
        r = r.wrapping_add(x.wrapping_sub(y)).wrapping_mul(x.wrapping_neg());
        r = r.wrapping_add(x.wrapping_shl(k)).wrapping_add(y.wrapping_shr(k));
        r = r.wrapping_add(x.wrapping_pow(k)).wrapping_add(d.pow(2));
        r = r.wrapping_add(x.min(y)).wrapping_add(x.max(y)).wrapping_add(x.clamp(d, d + 4));
        r = r.wrapping_add(x.rem_euclid(d)).wrapping_add(x.div_euclid(d));
        r = r.wrapping_add((x.count_ones() + y.leading_zeros() + x.trailing_zeros()) as usize);
        r = r.wrapping_add(x.saturating_add(y)).wrapping_add(x.saturating_sub(y)).wrapping_add(x.saturating_mul(y));
        r = r.wrapping_add(x.rotate_left(k)).wrapping_add(y.rotate_right(k));
        r = r.wrapping_add(x.checked_add(y).unwrap_or(d)).wrapping_add(x.checked_sub(y).unwrap_or(d)).wrapping_add(x.checked_mul(y).unwrap_or(d));
        r = r.wrapping_add(x.checked_div(y).unwrap_or(d)).wrapping_add(if let Some(q) = x.checked_rem(y) { q } else { d });
        flags[i] = x.is_power_of_two();
        r = r.wrapping_add(std::cmp::min(x, y)).wrapping_add(std::cmp::max(x, y));
        let cmp = (x == y) as usize + (x != y) as usize + (x < y) as usize + (x <= y) as usize + (x > y) as usize + (x >= y) as usize;
        r = r.wrapping_add(cmp);
        let narrow = (x as u8) as usize + (x as i8) as usize + (x as u16) as usize + (x as i16) as usize;
        let wide = (x as u32) as usize + (x as i32) as usize + (x as u64) as usize + (x as i64) as usize + (x as usize) as usize + (x as isize) as usize;
        r = r.wrapping_add(narrow).wrapping_add(wide);
        let fx = x as f64 + y as f32 as f64;
        r = r.wrapping_add(fx as usize).wrapping_add((fx as f32) as usize);
        flags[i] = flags[i] && (x > y || x == d) && !(y < d);
        out[i] = r;
    }
}

/// Every operator, method and cast of `f32`.
#[kernel]
pub fn float_ops_f32(out: &mut [f32], ints: &mut [i64], a: &[f32], b: &[f32], e: &[i32]) {
    for i in 0..out.len() {
        let x = a[i];
        let y = b[i];
        let mut r = x + y - x * y / (y + 1.0) + x % y + -x;
        r += x.sqrt();
        r += x.cbrt();
        r += x.exp();
        r += x.exp2();
        r += x.exp_m1();
        r += x.ln();
        r += x.ln_1p();
        r += x.log2();
        r += x.log10();
        r += x.abs();
        r += x.floor();
        r += x.ceil();
        r += x.round();
        r += x.trunc();
        r += x.fract();
        r += x.sin();
        r += x.cos();
        r += x.tan();
        r += x.asin();
        r += x.acos();
        r += x.atan();
        r += x.sinh();
        r += x.cosh();
        r += x.tanh();
        r += x.asinh();
        r += x.acosh();
        r += x.atanh();
        r += x.recip();
        r += x.signum();
        r += x.to_degrees();
        r += x.to_radians();
        r += x.min(y);
        r += x.max(y);
        r += x.powf(y);
        r += x.atan2(y);
        r += x.hypot(y);
        r += x.copysign(y);
        r += x.rem_euclid(y);
        r += x.div_euclid(y);
        r += x.mul_add(y, r) + x.clamp(-1.0, 1.0) + x.powi(e[i]) + x.powi(-3);
        r += f32::sqrt(y) + f32::max(x, y);
        if x.is_nan() || x.is_infinite() || !y.is_finite() || x.is_sign_negative() != y.is_sign_positive() {
            r = -r;
        }
        r -= 1.5;
        r *= 0.25;
        r /= 3.0;
        r %= 7.0;
        let c = (x == y) || (x != y) && (x < y) || (x <= y) && !(x > y) || (x >= y);
        if c { r += 1.0; }
        ints[i] = (x as i8) as i64 + (x as u8) as i64 + (x as i16) as i64 + (x as u16) as i64
            + (x as i32) as i64 + (x as u32) as i64 + (x as i64) + (x as u64) as i64
            + (x as usize) as i64 + (x as isize) as i64;
        out[i] = r + (x as f32) as f32 + (x as f64) as f32 + (c as i32) as f32;
    }
}

/// Every operator, method and cast of `f64`.
#[kernel]
pub fn float_ops_f64(out: &mut [f64], ints: &mut [i64], a: &[f64], b: &[f64], e: &[i32]) {
    for i in 0..out.len() {
        let x = a[i];
        let y = b[i];
        let mut r = x + y - x * y / (y + 1.0) + x % y + -x;
        r += x.sqrt();
        r += x.cbrt();
        r += x.exp();
        r += x.exp2();
        r += x.exp_m1();
        r += x.ln();
        r += x.ln_1p();
        r += x.log2();
        r += x.log10();
        r += x.abs();
        r += x.floor();
        r += x.ceil();
        r += x.round();
        r += x.trunc();
        r += x.fract();
        r += x.sin();
        r += x.cos();
        r += x.tan();
        r += x.asin();
        r += x.acos();
        r += x.atan();
        r += x.sinh();
        r += x.cosh();
        r += x.tanh();
        r += x.asinh();
        r += x.acosh();
        r += x.atanh();
        r += x.recip();
        r += x.signum();
        r += x.to_degrees();
        r += x.to_radians();
        r += x.min(y);
        r += x.max(y);
        r += x.powf(y);
        r += x.atan2(y);
        r += x.hypot(y);
        r += x.copysign(y);
        r += x.rem_euclid(y);
        r += x.div_euclid(y);
        r += x.mul_add(y, r) + x.clamp(-1.0, 1.0) + x.powi(e[i]) + x.powi(-3);
        r += f64::sqrt(y) + f64::max(x, y);
        if x.is_nan() || x.is_infinite() || !y.is_finite() || x.is_sign_negative() != y.is_sign_positive() {
            r = -r;
        }
        r -= 1.5;
        r *= 0.25;
        r /= 3.0;
        r %= 7.0;
        let c = (x == y) || (x != y) && (x < y) || (x <= y) && !(x > y) || (x >= y);
        if c { r += 1.0; }
        ints[i] = (x as i8) as i64 + (x as u8) as i64 + (x as i16) as i64 + (x as u16) as i64
            + (x as i32) as i64 + (x as u32) as i64 + (x as i64) + (x as u64) as i64
            + (x as usize) as i64 + (x as isize) as i64;
        out[i] = r + (x as f32) as f64 + (x as f64) as f64 + (c as i32) as f64;
    }
}

// ---------------------------------------------------------------- control flow

/// `if`/`else` as expressions, `match` with ranges and or-patterns, `while`, `loop` with `break value`,
/// `continue`, and nested sequential `for` loops over `..` and `..=`.
#[kernel]
pub fn control_flow(out: &mut [i32], a: &[i32], n: u32) {
    for i in 0..out.len() {
        let x = a[i];
        let sign = if x < 0 { -1 } else if x == 0 { 0 } else { 1 };
        let class = match x {
            i32::MIN..=-1 => 10,
            0 | 1 | 2 => 20,
            3..=9 | 11 => {
                let t = x * 2;
                t + 1
            }
            LIMIT => 40,
            _ => 50,
        };
        let mut steps = 0;
        let mut v = x;
        while v > 1 && steps < 64 {
            v = if v % 2 == 0 { v / 2 } else { 3 * v + 1 };
            steps += 1;
        }
        let mut k = 0u32;
        let none = -1;
        let found = loop {
            k += 1;
            if k > n {
                break none;
            }
            if k % 3 != 0 {
                continue;
            }
            if (k as i32) * (k as i32) > x {
                break k as i32;
            }
        };
        let mut grid = 0;
        for r in 0..3 {
            for c in r..=3 {
                if c == 2 {
                    continue;
                }
                grid += r * 10 + c;
            }
        }
        let mut down = 0;
        for j in 0..=5 {
            down += j;
        }
        let block = {
            let a = sign * 2;
            a + class
        };
        out[i] = sign + class + steps + found + grid + down + block;
    }
}

// ---------------------------------------------------------------- consts and associated constants

/// Crate consts of every kind, and the associated constants of the primitive types.
#[kernel]
pub fn constants(out: &mut [f64], narrow: &mut [f32], ints: &mut [i64]) {
    for i in 0..out.len() {
        let x = i as f64;
        let y = HALF * (i as f32) + f32::INFINITY.min(1.0) + f32::NEG_INFINITY.max(-1.0) + f32::EPSILON;
        let z = SCALE * x + AREA + std::f64::consts::PI + core::f64::consts::E + f64::NAN.max(0.0);
        narrow[i] = y + std::f32::consts::PI + f32::NAN.min(0.0);
        out[i] = if ENABLED { z } else { f64::MAX } + f64::MIN_POSITIVE;
        ints[i] = (COUNT as i64) + (DOUBLE_LIMIT as i64) + (MASK as i64) + i32::MAX as i64 + i32::MIN as i64
            + i64::MIN.wrapping_add(i64::MAX) + u8::MAX as i64 + i8::MIN as i64 + u32::BITS as i64;
    }
}

// ---------------------------------------------------------------- structs and arrays

/// A struct by value, a struct by reference, and structs as slice elements.
#[kernel]
pub fn structs(out: &mut [Mixed], particles: &[Particle], by_value: Params, by_ref: &Params, table: &[f64; 16]) {
    for i in 0..out.len() {
        let p = particles[i];
        let moved = Particle { pos: [p.pos[0] + 1.0, p.pos[1], p.pos[2]], mass: p.mass, id: p.id, params: p.params };
        let m = make_mixed(p.id as u8, apply(by_ref, p.mass) + by_value.scale);
        let mut o = out[i];
        o.flag = m.flag;
        o.x = m.x + table[i % 16] + table.len() as f64 + p.params.offset;
        o.tag = o.tag.wrapping_add(m.tag);
        o.y = moved.pos[0] + by_value.bias + p.pos.len() as f32;
        o.small = m.small;
        o.big = m.big + by_value.steps as i64;
        o.last = m.last;
        out[i] = o;
    }
}

/// Small arrays every thread reads at the same indices: they travel in the launch arguments (the f64 taps
/// at offsets unrolled from the tap loop; the i32 triple, 12 bytes, is followed by padding).
#[kernel]
pub fn taps(out: &mut [f64], x: &[f64], w: &[f64; 4], bias: &[i32; 3]) {
    for i in 0..out.len() {
        let mut s = bias[1] as f64;
        for t in 0..w.len() {
            s += w[t] * x[i + t];
        }
        let last = bias.len() - 1;
        out[i] = s + bias[last] as f64;
    }
}

/// A 2-D nest over a row-major `rows` x `width` grid: one thread per cell where the launch's grid covers it.
#[kernel]
pub fn grid_2d(out: &mut [f64], a: &[f64], rows: usize, width: usize) {
    for r in 0..rows {
        for c in 0..width {
            out[r * width + c] = a[r * width + c] * 2.0 + r as f64 - c as f64;
        }
    }
}

/// The product of an `m` x `n` and an `n` x `m` matrix, plainly (tiled through shared memory on the GPU).
#[kernel]
pub fn product(c: &mut [f64], a: &[f64], b: &[f64], m: usize, n: usize) {
    for row in 0..m {
        for col in 0..m {
            let mut sum = 0.0;
            for k in 0..n {
                sum += a[row * n + k] * b[k * m + col];
            }
            c[row * m + col] = sum;
        }
    }
}

/// Local arrays, filled by repetition and from a list, read, written and passed by value.
#[kernel]
pub fn arrays(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        let mut acc = [0.0; 4];
        let three = [a[i], 2.0 * a[i], 3.0];
        for k in 0..COUNT {
            acc[k] = three[k % three.len()] * k as f64;
        }
        let copy = acc;
        let mut total = 0.0;
        for k in 0..copy.len() {
            total += copy[k];
        }
        out[i] = total + acc[COUNT - 1];
    }
}

/// Helper fns: a generic one, one returning a tuple, one taking a slice, one taking `&S`, one with an
/// early `return` from a `loop`, and one that assigns its `mut` parameters.
#[kernel]
pub fn helpers(out: &mut [f64], a: &[f64], p: &Params, n: u32) {
    for i in 0..out.len() {
        let bounds = min_max(a[i], 1.0);
        let lo = bounds.0;
        let hi = bounds.1;
        let pair = min_max(hi, lo);
        let sq = square(a[i]) + square(2.0f32) as f64 + square(3i64) as f64;
        out[i] = lo + hi + pair.0 * pair.1 + sq + sum_window(a, i, 3) + apply(p, a[i]) + first_even(n) as f64
            + bump(a[i], n);
    }
}

// ---------------------------------------------------------------- reductions

/// `+`, `*`, `min` and `max` reductions of f32, returned as a tuple.
#[kernel]
pub fn reduce_f32(a: &[f32]) -> (f32, f32, f32, f32) {
    let mut sum = 0.0f32;
    let mut product = 1.0f32;
    let mut lowest = f32::INFINITY;
    let mut highest = f32::NEG_INFINITY;
    for i in 0..a.len() {
        sum += a[i];
        product *= a[i];
        lowest = lowest.min(a[i]);
        highest = highest.max(a[i]);
    }
    (sum, product, lowest, highest)
}

/// `+`, `*`, `min` and `max` reductions of f64, returned as a tuple.
#[kernel]
pub fn reduce_f64(a: &[f64]) -> (f64, f64, f64, f64) {
    let mut sum = 0.0;
    let mut product = 1.0;
    let mut lowest = f64::INFINITY;
    let mut highest = f64::NEG_INFINITY;
    for i in 0..a.len() {
        sum += a[i];
        product = product * a[i];
        lowest = lowest.min(a[i]);
        highest = a[i].max(highest);
    }
    (sum, product, lowest, highest)
}

/// Every reduction of i32: `+`, `*`, `min`, `max`, `&`, `|` and `^`, returned as a tuple.
#[kernel]
pub fn reduce_i32(a: &[i32]) -> (i32, i32, i32, i32, i32, i32, i32) {
    let mut sum: i32 = 0;
    let mut product: i32 = 1;
    let mut lowest = i32::MAX;
    let mut highest = i32::MIN;
    let mut all = !0;
    let mut any = 0;
    let mut parity = 0;
    for i in 0..a.len() {
        sum += a[i];
        product *= a[i];
        lowest = lowest.min(a[i]);
        highest = std::cmp::max(highest, a[i]);
        all &= a[i];
        any |= a[i];
        parity ^= a[i];
    }
    (sum, product, lowest, highest, all, any, parity)
}

/// Every reduction of u32: `+`, `*`, `min`, `max`, `&`, `|` and `^`, returned as a tuple.
#[kernel]
pub fn reduce_u32(a: &[u32]) -> (u32, u32, u32, u32, u32, u32, u32) {
    let mut sum: u32 = 0;
    let mut product: u32 = 1;
    let mut lowest = u32::MAX;
    let mut highest = u32::MIN;
    let mut all = !0;
    let mut any = 0;
    let mut parity = 0;
    for i in 0..a.len() {
        sum += a[i];
        product *= a[i];
        lowest = lowest.min(a[i]);
        highest = std::cmp::max(highest, a[i]);
        all &= a[i];
        any |= a[i];
        parity ^= a[i];
    }
    (sum, product, lowest, highest, all, any, parity)
}

/// Every reduction of i64: `+`, `*`, `min`, `max`, `&`, `|` and `^`, returned as a tuple.
#[kernel]
pub fn reduce_i64(a: &[i64]) -> (i64, i64, i64, i64, i64, i64, i64) {
    let mut sum: i64 = 0;
    let mut product: i64 = 1;
    let mut lowest = i64::MAX;
    let mut highest = i64::MIN;
    let mut all = !0;
    let mut any = 0;
    let mut parity = 0;
    for i in 0..a.len() {
        sum += a[i];
        product *= a[i];
        lowest = lowest.min(a[i]);
        highest = std::cmp::max(highest, a[i]);
        all &= a[i];
        any |= a[i];
        parity ^= a[i];
    }
    (sum, product, lowest, highest, all, any, parity)
}

/// Every reduction of u64: `+`, `*`, `min`, `max`, `&`, `|` and `^`, returned as a tuple.
#[kernel]
pub fn reduce_u64(a: &[u64]) -> (u64, u64, u64, u64, u64, u64, u64) {
    let mut sum: u64 = 0;
    let mut product: u64 = 1;
    let mut lowest = u64::MAX;
    let mut highest = u64::MIN;
    let mut all = !0;
    let mut any = 0;
    let mut parity = 0;
    for i in 0..a.len() {
        sum += a[i];
        product *= a[i];
        lowest = lowest.min(a[i]);
        highest = std::cmp::max(highest, a[i]);
        all &= a[i];
        any |= a[i];
        parity ^= a[i];
    }
    (sum, product, lowest, highest, all, any, parity)
}

/// A scalar reduction over `usize`, a loop that starts at 1, and a result computed from the reduction.
#[kernel]
pub fn reduce_usize(a: &[usize]) -> usize {
    let mut total = 0;
    for i in 1..a.len() {
        total += a[i] * i;
    }
    total * 2 + 1
}

/// Two parallel loops in one kernel: two launches, the second reading what the first wrote.
#[kernel]
pub fn two_launches(a: &mut [f64], b: &mut [f64], c: &[f64]) {
    let n = a.len();
    let half = n / 2;
    for i in 0..n {
        a[i] = c[i] * SCALE;
    }
    for j in 0..half {
        b[2 * j] = a[2 * j] + a[2 * j + 1];
        b[2 * j + 1] = a[2 * j] - a[2 * j + 1];
    }
}

/// Where the smallest element is (first on ties) and where the largest is (last on ties).
#[kernel]
pub fn locate_extremes(a: &[f64]) -> (f64, usize, f64, usize) {
    let mut lowest = f64::INFINITY;
    let mut at_lowest = 0;
    let mut highest = f64::NEG_INFINITY;
    let mut at_highest = 0;
    for i in 0..a.len() {
        if a[i] < lowest {
            lowest = a[i];
            at_lowest = i;
        }
        if a[i] >= highest {
            highest = a[i];
            at_highest = i;
        }
    }
    (lowest, at_lowest, highest, at_highest)
}

/// Location reductions of integers, with the accumulator on either side of the comparison.
#[kernel]
pub fn locate_extremes_i32(a: &[i32]) -> (i32, u32, i32, u32) {
    let mut lowest = i32::MAX;
    let mut at_lowest = 0u32;
    let mut highest = i32::MIN;
    let mut at_highest = 0u32;
    for i in 0..a.len() {
        if lowest > a[i] {
            lowest = a[i];
            at_lowest = i as u32;
        }
        if highest <= a[i] {
            at_highest = i as u32;
            highest = a[i];
        }
    }
    (lowest, at_lowest, highest, at_highest)
}

/// Reductions written with the wrapping methods, which is what `+=` and `*=` do in a release build.
#[kernel]
pub fn reduce_wrapping(a: &[i64], b: &[u32]) -> (i64, i64, u32) {
    let mut sum = 0i64;
    let mut product = 1i64;
    let mut total = 0u32;
    for i in 0..a.len() {
        sum = sum.wrapping_add(a[i]);
        product = a[i].wrapping_mul(product);
        total = total.wrapping_add(b[i]);
    }
    (sum, product, total)
}

// ---------------------------------------------------------------- checks

/// A write through an index list (its values verified distinct on the device before the loop runs) under
/// a condition, and conditional reads whose range the host compares with the slices' lengths to choose
/// between the loop's two entry points.
#[kernel]
pub fn scatter_where_in_range(out: &mut [f64], values: &[f64], idx: &[u32], limits: &[u32]) {
    for i in 0..idx.len() {
        let k = idx[i] as usize;
        if k < out.len() && idx[i] < limits[i] {
            out[k] = values[i] * 2.0;
        }
    }
}

// ---------------------------------------------------------------- iterator loops

/// Element references of structs through `iter_mut`, copies of a local array, counters of `enumerate`.
#[kernel]
pub fn iterators(particles: &mut [Particle], out: &mut [f64], a: &[f64], table: &[f64; 16]) {
    for (i, p) in particles.iter_mut().enumerate() {
        p.mass = p.mass * 0.5 + i as f64;
        p.id = p.id.wrapping_add(1);
    }
    for (o, (x, &t)) in out.iter_mut().zip(a.iter().zip(table)) {
        let steps = [1.0, 0.5, 0.25];
        let mut acc = *x;
        for (k, mut s) in steps.iter().copied().enumerate() {
            s *= t;
            acc += s * k as f64;
        }
        *o = acc;
    }
}

// ---------------------------------------------------------------- signed loop indices

/// Signed loop variables of every width cast to usize (narrow ones as plain variables), and an i64
/// index with arithmetic before the cast.
#[kernel]
pub fn signed_indices(out: &mut [f32], wide: &mut [f64], a: &[f32], first: i16) {
    for i in first..(out.len() as i16) {
        out[i as usize] = a[i as usize] + 1.0;
    }
    let n = wide.len() as i64;
    for i in 1..n - 1 {
        wide[i as usize] = (a[(i - 1) as usize] as f64) * (a[(i + 1) as usize] as f64);
    }
}

// ---------------------------------------------------------------- generic kernels

/// One source, three instantiations: floats, an integer, and a #[repr(C)] struct.
#[kernel(types(f32, i64, Params))]
pub fn scatter_generic<T: Copy>(out: &mut [T], a: &[T], stride: usize) {
    let s = stride % 3 + 1;
    for i in 0..out.len() / s {
        out[s * i] = a[i];
    }
}

// ---------------------------------------------------------------- host loops

/// A host loop inside a host loop, with `let`s that the launches read and the host needs for a bound.
#[kernel]
pub fn host_loops(a: &mut [f64], b: &mut [i32], sweeps: u32, steps: i32) {
    for sweep in 0..sweeps {
        let scale = 1.0 / (sweep + 1) as f64;
        for step in 0..steps % 4 {
            let offset = (step as usize).min(a.len());
            for i in offset..a.len() {
                a[i] = a[i] * scale + step as f64;
            }
        }
        for i in 0..b.len() {
            b[i] = b[i].wrapping_add(sweep as i32);
        }
    }
}
