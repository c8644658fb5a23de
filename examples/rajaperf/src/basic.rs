//! RAJAPerf Basic kernels (the one-dimensional, non-atomic ones), `i` in `0..N`.

use rs2gpu::kernel;

/// DAXPY: `y[i] += a * x[i]`
#[kernel]
pub fn daxpy(y: &mut [f64], x: &[f64], a: f64) {
    for i in 0..y.len() {
        y[i] += a * x[i];
    }
}

/// INIT3: `out1[i] = out2[i] = out3[i] = -in1[i] - in2[i]`
#[kernel]
pub fn init3(out1: &mut [f64], out2: &mut [f64], out3: &mut [f64], in1: &[f64], in2: &[f64]) {
    for i in 0..out1.len() {
        let value = -in1[i] - in2[i];
        out1[i] = value;
        out2[i] = value;
        out3[i] = value;
    }
}

/// MULADDSUB: `out1[i] = in1[i] * in2[i]; out2[i] = in1[i] + in2[i]; out3[i] = in1[i] - in2[i]`
#[kernel]
pub fn muladdsub(out1: &mut [f64], out2: &mut [f64], out3: &mut [f64], in1: &[f64], in2: &[f64]) {
    for i in 0..out1.len() {
        out1[i] = in1[i] * in2[i];
        out2[i] = in1[i] + in2[i];
        out3[i] = in1[i] - in2[i];
    }
}

/// IF_QUAD: `s = b²-4ac`; if `s >= 0`, `x2 = (-b+√s)/(2a)`, `x1 = (-b-√s)/(2a)`, else `x1 = x2 = 0`.
#[kernel]
pub fn if_quad(a: &[f64], b: &[f64], c: &[f64], x1: &mut [f64], x2: &mut [f64]) {
    for i in 0..x1.len() {
        let mut s = b[i] * b[i] - 4.0 * a[i] * c[i];
        if s >= 0.0 {
            s = s.sqrt();
            x2[i] = (-b[i] + s) / (2.0 * a[i]);
            x1[i] = (-b[i] - s) / (2.0 * a[i]);
        } else {
            x2[i] = 0.0;
            x1[i] = 0.0;
        }
    }
}

/// INIT_VIEW1D: `a[i] = (i + 1) * v`
#[kernel]
pub fn init_view1d(a: &mut [f64], v: f64) {
    for i in 0..a.len() {
        a[i] = (i + 1) as f64 * v;
    }
}

/// INIT_VIEW1D_OFFSET: `a[i - 1] = i * v` for `i` in `1..=N`
#[kernel]
pub fn init_view1d_offset(a: &mut [f64], v: f64) {
    for i in 1..a.len() + 1 {
        a[i - 1] = i as f64 * v;
    }
}
