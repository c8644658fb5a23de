//! RAJAPerf Stream kernels: one pass over the arrays, `i` in `0..N`.

use rs2gpu::kernel;

/// COPY: `c[i] = a[i]`
#[kernel]
pub fn copy(c: &mut [f64], a: &[f64]) {
    for i in 0..c.len() {
        c[i] = a[i];
    }
}

/// MUL: `b[i] = alpha * c[i]`
#[kernel]
pub fn mul(b: &mut [f64], c: &[f64], alpha: f64) {
    for i in 0..b.len() {
        b[i] = alpha * c[i];
    }
}

/// ADD: `c[i] = a[i] + b[i]`
#[kernel]
pub fn add(c: &mut [f64], a: &[f64], b: &[f64]) {
    for i in 0..c.len() {
        c[i] = a[i] + b[i];
    }
}

/// TRIAD: `a[i] = b[i] + alpha * c[i]`
#[kernel]
pub fn triad(a: &mut [f64], b: &[f64], c: &[f64], alpha: f64) {
    for i in 0..a.len() {
        a[i] = b[i] + alpha * c[i];
    }
}

/// DOT: `dot += a[i] * b[i]`, returned as the sum over all `i`.
#[kernel]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut dot = 0.0;
    for i in 0..a.len() {
        dot += a[i] * b[i];
    }
    dot
}
