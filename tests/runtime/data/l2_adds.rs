//! Loops whose updates `y[i] += v` and `y[i] -= v` run as atomic adds in the L2 where the slices fit there
//! (`emit/l2_adds.py`).
use rs2gpu::kernel;

#[kernel]
pub fn daxpy(y: &mut [f64], x: &[f64], a: f64) {
    for i in 0..y.len() {
        y[i] += a * x[i];
    }
}

#[kernel]
pub fn drain(y: &mut [f64], x: &[f64], a: f64) {
    for i in 0..y.len() {
        y[i] -= a * x[i];
    }
}

#[kernel]
pub fn energy_step(e: &mut [f64], d: &[f64], p: &[f64], q: &[f64]) {
    for i in 0..e.len() {
        e[i] += 0.5 * d[i] * (p[i] - q[i]);
    }
}
