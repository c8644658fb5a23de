//! Kernels for the GPU differential tests of the language features beyond element-wise loops:
//! 2-D and 3-D parallel loops, strides proved at launch, index-list writes, checks on the device,
//! min/max-location reductions, and several launches in one kernel. Sizes derive from slice lengths,
//! so any input lengths are valid.

use rs2gpu::kernel;

/// A row-major matrix of `w + 1` columns; each row scaled by its factor (2-D, strides proved here).
#[kernel]
pub fn scale_rows(m: &mut [f64], row_scale: &[f64], w: usize) {
    let cols = w + 1;
    let rows = m.len() / cols;
    for r in 0..rows {
        for c in 0..cols {
            m[r * cols + c] *= row_scale[r];
        }
    }
}

/// A cube of side `n + 1`, filled with the sum of its coordinates (3-D).
#[kernel]
pub fn fill_cube(a: &mut [f64], n: usize) {
    let side = (n % 4) + 1;
    for k in 0..side {
        for j in 0..side {
            for i in 0..side {
                a[(k * side + j) * side + i] = (i + 2 * j + 3 * k) as f64 + a[(k * side + j) * side + i];
            }
        }
    }
}

/// Matrix product of two `n`-by-`n` corners of the inputs, with a sequential inner loop.
#[kernel]
pub fn matmul(c: &mut [f64], a: &[f64], b: &[f64], n: usize) {
    let n = n % 8 + 1;
    for i in 0..n {
        for j in 0..n {
            let mut sum = 0.0;
            for k in 0..n {
                sum += a[i * n + k] * b[k * n + j];
            }
            c[i * n + j] = sum;
        }
    }
}

/// A gather through a computed index: checked on the device (it can fail for short inputs).
#[kernel]
pub fn gather(out: &mut [f64], a: &[f64], stride: usize) {
    for i in 0..out.len() {
        let k = (i * (stride % 3 + 1)) % (a.len() + 1);
        out[i] = a[k] * 0.5;
    }
}

/// Integer division by values that may be zero: the Rust panic must surface from the device.
#[kernel]
pub fn divide(q: &mut [i32], a: &[i32], b: &[i32]) {
    for i in 0..q.len() {
        q[i] = a[i] / (b[i] % 4);
    }
}

/// The smallest value and its first index, and the largest and its last index.
#[kernel]
pub fn extremes(x: &[f64]) -> (f64, usize, f64, usize) {
    let mut lo = f64::INFINITY;
    let mut lo_at = 0;
    let mut hi = f64::NEG_INFINITY;
    let mut hi_at = 0;
    for i in 0..x.len() {
        if x[i] < lo {
            lo = x[i];
            lo_at = i;
        }
        if x[i] >= hi {
            hi = x[i];
            hi_at = i;
        }
    }
    (lo, lo_at, hi, hi_at)
}

/// The first position of the minimum of rounded values (many ties), seeded with element 0.
#[kernel]
pub fn first_min_rounded(x: &[f64]) -> (f64, usize) {
    let mut m = x[0].round();
    let mut at = 0;
    for i in 0..x.len() {
        if x[i].round() < m {
            m = x[i].round();
            at = i;
        }
    }
    (m, at)
}

/// Two launches in one kernel: the second reads what the first wrote, with the data kept on the GPU.
#[kernel]
pub fn two_passes(a: &mut [f64], b: &mut [f64], c: &[f64]) {
    for i in 0..a.len() {
        a[i] = c[i] * 2.0;
    }
    for i in 0..b.len() {
        b[i] = b[i] + a[i % a.len()];
    }
}

/// A reduction over a 2-D iteration space.
#[kernel]
pub fn sum_grid(a: &[i64], w: usize) -> i64 {
    let cols = w % 5 + 1;
    let rows = a.len() / cols;
    let mut total = 0i64;
    for r in 0..rows {
        for c in 0..cols {
            total = total.wrapping_add(a[r * cols + c]);
        }
    }
    total
}
