//! Row-major 2-D nests: row operations, stencils, transposes, matrix-vector products.

use rs2gpu::kernel;

/// Scales row `r` of a `cols`-column matrix by `s[r]`.
#[kernel]
pub fn scale_rows(m: &mut [f64], s: &[f64], cols: usize) {
    let rows = m.len() / cols;
    for r in 0..rows {
        for c in 0..cols {
            m[r * cols + c] *= s[r];
        }
    }
}

/// Five-point Jacobi sweep over the interior of a `rows` x `cols` grid.
#[kernel]
pub fn jacobi_5pt(out: &mut [f64], u: &[f64], rows: usize, cols: usize) {
    for r in 1..rows - 1 {
        for c in 1..cols - 1 {
            let k = r * cols + c;
            out[k] = 0.25 * (u[k - 1] + u[k + 1] + u[k - cols] + u[k + cols]);
        }
    }
}

/// Transpose of a `rows` x `cols` matrix.
#[kernel]
pub fn transpose(out: &mut [f32], a: &[f32], rows: usize, cols: usize) {
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = a[r * cols + c];
        }
    }
}

/// `y = A x` for a row-major `A` of `x.len()` columns.
#[kernel]
pub fn matvec(y: &mut [f64], a: &[f64], x: &[f64]) {
    let cols = x.len();
    for r in 0..y.len() {
        let mut s = 0.0;
        for c in 0..cols {
            s += a[r * cols + c] * x[c];
        }
        y[r] = s;
    }
}

/// 3x3 box blur of a `rows` x `cols` image, neighbours outside it skipped with `continue`.
#[kernel]
pub fn box_blur_3x3(out: &mut [f32], img: &[f32], rows: usize, cols: usize) {
    for r in 0..rows {
        for c in 0..cols {
            let mut s = 0.0f32;
            let mut n = 0.0f32;
            for dr in 0..3 {
                if r + dr < 1 || r + dr > rows {
                    continue;
                }
                for dc in 0..3 {
                    if c + dc < 1 || c + dc > cols {
                        continue;
                    }
                    s += img[(r + dr - 1) * cols + (c + dc - 1)];
                    n += 1.0;
                }
            }
            out[r * cols + c] = s / n;
        }
    }
}

/// Subtracts `f` times row `pivot` from every row below it (one step of Gaussian elimination).
pub fn eliminate_below(m: &mut [f64], f: &[f64], rows: usize, cols: usize, pivot: usize) {
    for r in pivot + 1..rows {
        for c in 0..cols {
            m[r * cols + c] -= f[r] * m[pivot * cols + c];
        }
    }
}

/// Rows of a matrix iterated as `chunks_exact_mut`, each scaled to unit maximum magnitude.
pub fn normalize_rows_chunks(m: &mut [f64], cols: usize) {
    for row in m.chunks_exact_mut(cols) {
        let mut big = 0.0f64;
        for v in row.iter() {
            big = big.max(v.abs());
        }
        for v in row.iter_mut() {
            *v /= big;
        }
    }
}
