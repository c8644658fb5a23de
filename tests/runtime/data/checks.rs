//! Kernels whose checks land in every place rs2gpu puts them: conditional accesses (a guarded host check
//! and a checked launch variant), the right side of `&&`, a sequential loop around an access, and
//! writes through index lists with gathers through them (verified on the device before the loop).
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
