//! Kernels whose checks land in every place rs2gpu puts them: conditional accesses (a guarded host check
//! and a checked entry point), the right side of `&&`, a sequential loop around an access, and
//! writes through index lists with gathers through them (checked in the loop, and verified distinct after
//! it where the indices were out of order).
//! The cpu backend (rustc) is the reference for what they compute and where they panic.

use rs2gpu::kernel;

#[kernel]
pub fn roots(x1: &mut [f64], x2: &mut [f64], s: &[f64]) {
    for i in 0..x1.len() {
        x1[i] = s[i];
        if s[i] >= 0.0 {
            x2[i] = s[i].sqrt();
        }
    }
}

#[kernel]
pub fn next_positive(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        out[i] = if i + 1 < a.len() && a[i + 1] > 0.0 { 1.0 } else { 0.0 };
    }
}

#[kernel]
pub fn repeat_sum(out: &mut [f64], a: &[f64], m: usize) {
    for i in 0..out.len() {
        let mut s = 0.0;
        for k in 0..m {
            s += a[i];
        }
        out[i] = s;
    }
}

#[kernel]
pub fn scatter(out: &mut [f64], x: &[f64], zones: &[usize], shift: usize) {
    for ii in 0..zones.len() {
        let i = zones[ii];
        out[i] = x[i] + x[i + shift];
    }
}

#[kernel]
pub fn scatter_where(out: &mut [f64], zones: &[usize], keep: &[u8]) {
    for ii in 0..zones.len() {
        if keep[ii] != 0 {
            out[zones[ii]] = ii as f64;
        }
    }
}

#[kernel]
pub fn interleave(out: &mut [f64], zones: &[usize], x: &[f64]) {
    for ii in 1..zones.len() {
        out[2 * zones[ii - 1] + 1] = x[ii];
    }
}

#[kernel]
pub fn twice(out: &mut [f64], zones: &[usize], x: &[f64]) {
    for ii in 0..zones.len() {
        let i = zones[ii];
        out[i] = x[ii];
        out[i] = out[i] * 2.0 + 1.0;
    }
}

#[kernel]
pub fn split(a: &mut [f64], b: &mut [f64], zones: &[usize], others: &[usize]) {
    for ii in 0..zones.len() {
        a[zones[ii]] = ii as f64;
        b[others[ii]] = -(ii as f64);
    }
}

#[kernel]
pub fn steps(out: &mut [f64], zones: &[usize], x: &[f64], steps: usize) {
    for step in 0..steps {
        for ii in 0..zones.len() {
            out[zones[ii]] = x[zones[ii] + step] + step as f64;
        }
    }
}

#[kernel]
pub fn gather_two(out: &mut [f64], x: &[f64], y: &[f64], zones: &[usize]) {
    for ii in 0..zones.len() {
        let i = zones[ii];
        out[i] = y[i + 3] + x[2 * i + 1] + y[i];
    }
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Shift {
    pub by: usize,
}

#[kernel]
pub fn gather_shifted(out: &mut [f64], x: &[f64], zones: &[usize], shift: Shift) {
    for ii in 0..zones.len() {
        let i = zones[ii];
        out[i] = x[i + shift.by];
    }
}
