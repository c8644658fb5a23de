//! Kernels whose last launch reduces, and so sets the call's done word after its results
//! (`signals_done`), and kernels whose results the host waits for on the stream.
use rs2gpu::kernel;

#[kernel]
pub fn sum_and_max(x: &[i32]) -> (i32, i32) {
    let mut total = 0i32;
    let mut top = i32::MIN;
    for i in 0..x.len() {
        total = total.wrapping_add(x[i]);
        top = top.max(x[i]);
    }
    (total, top)
}

#[kernel]
pub fn sum_from(x: &[f64], first: usize) -> f64 {
    let mut total = 0.0;
    for i in first..x.len() {
        total += x[i];
    }
    total
}

#[kernel]
pub fn scale_then_sum(y: &mut [f64], x: &[f64], a: f64) -> f64 {
    for i in 0..y.len() {
        y[i] = a * x[i];
    }
    let mut total = 0.0;
    for i in 0..y.len() {
        total += y[i];
    }
    total
}

#[kernel]
pub fn sum_then_scale(y: &mut [f64], x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i];
    }
    for i in 0..y.len() {
        y[i] = 2.0 * x[i];
    }
    total
}

#[kernel]
pub fn sum_at(x: &[f64], at: &[usize]) -> f64 {
    let mut total = 0.0;
    for i in 0..at.len() {
        total += x[at[i]];
    }
    total
}
