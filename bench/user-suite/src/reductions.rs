//! Sums along the rows and along the columns of a row-major matrix.

use rs2gpu::kernel;

/// `sums[i] = Σ_j a[i][j]`, one row per output.
#[kernel]
pub fn row_sums_f32(sums: &mut [f32], a: &[f32], cols: usize) {
    for (i, s) in sums.iter_mut().enumerate() {
        let mut total = 0.0;
        for j in 0..cols {
            total += a[i * cols + j];
        }
        *s = total;
    }
}

/// `sums[j] = Σ_i a[i][j]`, one column per output.
#[kernel]
pub fn col_sums_f32(sums: &mut [f32], a: &[f32], rows: usize) {
    let cols = sums.len();
    for j in 0..cols {
        let mut total = 0.0;
        for i in 0..rows {
            total += a[i * cols + j];
        }
        sums[j] = total;
    }
}
