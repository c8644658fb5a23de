//! Loop nests in the shapes the launch distinguishes: 2-D and 3-D nests (one thread per iteration where the
//! grid covers the nest, the general grid-stride entry point past that), `continue` in a nest, ranges that
//! start past zero, plain matrix products (tiled through shared memory on the GPU), and updates in place,
//! `y[i] += v` and `y[i] -= v` (atomic adds in the L2 on the GPU where the slices fit there).
use rs2gpu::kernel;

/// Rows `first..rows` of a row-major `rows` x `cols` plane.
#[kernel]
pub fn plane(out: &mut [f64], first: usize, rows: usize, cols: usize) {
    for r in first..rows {
        for c in 0..cols {
            out[r * cols + c] = (r * 3 + c) as f64 * 0.5;
        }
    }
}

/// Every cell of an `nk` x `nj` x `ni` volume but every fifth diagonal one, which keeps its value.
#[kernel]
pub fn volume(out: &mut [u32], nk: usize, nj: usize, ni: usize) {
    for k in 0..nk {
        for j in 0..nj {
            for i in 0..ni {
                if (i + j + k) % 5 == 0 {
                    continue;
                }
                out[i + ni * (j + nj * k)] = (i + 7 * j + 13 * k) as u32;
            }
        }
    }
}

/// `c` (m x p) = `a` (m x n) times `b` (n x p), row-major.
#[kernel]
pub fn matmul(c: &mut [f64], a: &[f64], b: &[f64], m: usize, n: usize, p: usize) {
    for row in 0..m {
        for col in 0..p {
            let mut sum = 0.0;
            for k in 0..n {
                sum += a[row * n + k] * b[k * p + col];
            }
            c[row * p + col] = sum;
        }
    }
}

/// A product in f32 that starts from `bias`, skips k = 0 and names the column operand first.
#[kernel]
pub fn matmul_from_bias(c: &mut [f32], a: &[f32], b: &[f32], m: usize, n: usize, p: usize, bias: f32) {
    for row in 0..m {
        for col in 0..p {
            let mut acc = bias;
            for k in 1..n {
                acc += b[k * p + col] * a[row * n + k];
            }
            c[row * p + col] = acc;
        }
    }
}

/// A product with one fused multiply-add per term (one rounding each), over the rows from `first`.
#[kernel]
pub fn matmul_fused(c: &mut [f64], a: &[f64], b: &[f64], first: usize, m: usize, n: usize, p: usize) {
    for row in first..m {
        for col in 0..p {
            let mut acc = 0.0f64;
            for k in 0..n {
                acc = a[row * n + k].mul_add(b[k * p + col], acc);
            }
            c[row * p + col] = acc;
        }
    }
}

/// `out = aᵀ` for a row-major `a` of `rows × cols`, from row `first`.
#[kernel]
pub fn transpose(out: &mut [u32], a: &[u32], first: usize, rows: usize, cols: usize) {
    for i in first..rows {
        for j in 0..cols {
            out[j * rows + i] = a[i * cols + j];
        }
    }
}

/// `y += a * x`, in place.
#[kernel]
pub fn add_scaled(y: &mut [f64], x: &[f64], a: f64) {
    for i in 0..y.len() {
        y[i] += a * x[i];
    }
}

/// `y -= x * z`, in place.
#[kernel]
pub fn subtract_product(y: &mut [f64], x: &[f64], z: &[f64]) {
    for i in 0..y.len() {
        y[i] -= x[i] * z[i];
    }
}

/// TRIDIAG_ELIM's loop: from 1, storing at its variable, reading the element before.
#[kernel]
pub fn eliminate(xout: &mut [f64], xin: &[f64], y: &[f64], z: &[f64]) {
    for i in 1..xout.len() {
        xout[i] = z[i] * (y[i] - xin[i - 1]);
    }
}
