//! Matrix products, a matrix-vector product and a transpose over row-major matrices: `a` is `m × k`,
//! `b` is `k × n`, element `(i, j)` of an `r × c` matrix is at `i * c + j`.

use rs2gpu::kernel;

/// `c = a · b` in f32, the textbook triple loop.
#[kernel]
pub fn matmul_f32(c: &mut [f32], a: &[f32], b: &[f32], k: usize, n: usize) {
    let m = c.len() / n;
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0;
            for p in 0..k {
                acc += a[i * k + p] * b[p * n + j];
            }
            c[i * n + j] = acc;
        }
    }
}

/// `c = a · b` in f64.
#[kernel]
pub fn matmul_f64(c: &mut [f64], a: &[f64], b: &[f64], k: usize, n: usize) {
    let m = c.len() / n;
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0;
            for p in 0..k {
                acc += a[i * k + p] * b[p * n + j];
            }
            c[i * n + j] = acc;
        }
    }
}

/// `c = a · b` in f32 with one fused multiply-add per term, as BLAS computes it.
#[kernel]
pub fn matmul_fma_f32(c: &mut [f32], a: &[f32], b: &[f32], k: usize, n: usize) {
    let m = c.len() / n;
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for p in 0..k {
                acc = a[i * k + p].mul_add(b[p * n + j], acc);
            }
            c[i * n + j] = acc;
        }
    }
}

/// `c = a · b` in f64 with one fused multiply-add per term.
#[kernel]
pub fn matmul_fma_f64(c: &mut [f64], a: &[f64], b: &[f64], k: usize, n: usize) {
    let m = c.len() / n;
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f64;
            for p in 0..k {
                acc = a[i * k + p].mul_add(b[p * n + j], acc);
            }
            c[i * n + j] = acc;
        }
    }
}

/// `y = a · x` for a row-major `a` of `y.len()` rows: one dot product per row.
#[kernel]
pub fn matvec_f32(y: &mut [f32], a: &[f32], x: &[f32]) {
    let cols = x.len();
    for (i, out) in y.iter_mut().enumerate() {
        let mut sum = 0.0;
        for j in 0..cols {
            sum += a[i * cols + j] * x[j];
        }
        *out = sum;
    }
}

/// `out = aᵀ` for a row-major `a` of `rows × cols`.
#[kernel]
pub fn transpose_f32(out: &mut [f32], a: &[f32], rows: usize, cols: usize) {
    for i in 0..rows {
        for j in 0..cols {
            out[j * rows + i] = a[i * cols + j];
        }
    }
}
