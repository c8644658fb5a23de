//! RAJAPerf Lcals kernels (the one-dimensional, non-reduction ones), `i` in `0..N`, N the output length.
//! Stencil inputs are longer than the output; each kernel says by how much.

use rs2gpu::kernel;

/// EOS: `x[i] = u[i] + r*(z[i] + r*y[i]) + t*(u[i+3] + r*(u[i+2] + r*u[i+1]) + t*(u[i+6] + q*(u[i+5] + q*u[i+4])))`
///
/// `u` is read at `i..=i+6`, so it needs at least `x.len() + 6` elements (RAJAPerf allocates `N + 7`).
#[kernel]
pub fn eos(x: &mut [f64], y: &[f64], z: &[f64], u: &[f64], q: f64, r: f64, t: f64) {
    for i in 0..x.len() {
        x[i] = u[i]
            + r * (z[i] + r * y[i])
            + t * (u[i + 3] + r * (u[i + 2] + r * u[i + 1]) + t * (u[i + 6] + q * (u[i + 5] + q * u[i + 4])));
    }
}

/// FIRST_DIFF: `x[i] = y[i + 1] - y[i]`; `y` needs at least `x.len() + 1` elements.
#[kernel]
pub fn first_diff(x: &mut [f64], y: &[f64]) {
    for i in 0..x.len() {
        x[i] = y[i + 1] - y[i];
    }
}

/// HYDRO_1D: `x[i] = q + y[i] * (r * z[i + 10] + t * z[i + 11])`; `z` needs at least `x.len() + 11` elements
/// (RAJAPerf allocates `N + 12`).
#[kernel]
pub fn hydro_1d(x: &mut [f64], y: &[f64], z: &[f64], q: f64, r: f64, t: f64) {
    for i in 0..x.len() {
        x[i] = q + y[i] * (r * z[i + 10] + t * z[i + 11]);
    }
}

/// PLANCKIAN: `y[i] = u[i] / v[i]; w[i] = x[i] / (exp(y[i]) - 1.0)`; `y` and `w` are the outputs.
#[kernel]
pub fn planckian(x: &[f64], y: &mut [f64], u: &[f64], v: &[f64], w: &mut [f64]) {
    for i in 0..w.len() {
        y[i] = u[i] / v[i];
        w[i] = x[i] / (y[i].exp() - 1.0);
    }
}
