// Loops whose iterations run inner loops over a row: the warps entry point runs one warp per row, its
// lanes splitting the inner loops; over a column: the blocks entry point runs a warp's width of columns
// per block, its warps splitting the inner loops (tests/runtime/test_warps.py).
use rs2gpu::kernel;

#[kernel]
pub fn row_sum(a: &[f32], out: &mut [f32], cols: usize) {
    for (i, o) in out.iter_mut().enumerate() {
        let mut s = 0.0f32;
        for j in 0..cols {
            s += a[i * cols + j];
        }
        *o = s;
    }
}

#[kernel]
pub fn row_sum_i32(a: &[i32], out: &mut [i32], cols: usize) {
    for i in 0..out.len() {
        let mut s = 7i32;
        for j in 0..cols {
            s += a[i * cols + j];
        }
        out[i] = s;
    }
}

#[kernel]
pub fn row_sum_u64(a: &[u64], out: &mut [u64], cols: usize) {
    for i in 0..out.len() {
        let row = i * cols;
        let mut s = 0u64;
        for j in 0..cols {
            s += a[row + j] * 3;
        }
        out[i] = s;
    }
}

#[kernel]
pub fn row_bits(a: &[u32], low: &mut [u32], high: &mut [u32], cols: usize) {
    for i in 0..low.len() {
        let mut all = u32::MAX;
        let mut any = 0u32;
        let mut odd = 0u32;
        for j in 0..cols {
            let x = a[i * cols + j];
            all &= x;
            any |= x;
            odd ^= x;
        }
        low[i] = all ^ odd;
        high[i] = any;
    }
}

// Elements skipped with `continue`, and counted under a condition.
#[kernel]
pub fn row_filtered(a: &[i64], sums: &mut [i64], counts: &mut [u32], cols: usize) {
    for i in 0..sums.len() {
        let mut s = 0i64;
        let mut c = 0u32;
        for j in 0..cols {
            let x = a[i * cols + j];
            if x & 3 == 0 {
                continue;
            }
            s += x;
            if x > 0 {
                c += 1;
            } else {
                c += 2;
            }
        }
        sums[i] = s;
        counts[i] = c;
    }
}

#[kernel]
pub fn row_extremes(a: &[f32], low: &mut [f32], high: &mut [f32], scaled: &mut [i64], cols: usize) {
    for i in 0..low.len() {
        let mut m = f32::INFINITY;
        let mut big = f32::NEG_INFINITY;
        let mut top = i64::MIN;
        for j in 0..cols {
            m = m.min(a[i * cols + j]);
            big = big.max(a[i * cols + j]);
            top = top.max((a[i * cols + j] * 1000.0) as i64);
        }
        low[i] = m;
        high[i] = big;
        scaled[i] = top;
    }
}

#[kernel]
pub fn softmax(x: &[f32], out: &mut [f32], rows: usize, n: usize) {
    for i in 0..rows {
        let mut m = f32::NEG_INFINITY;
        for j in 0..n {
            m = m.max(x[i * n + j]);
        }
        let mut s = 0.0f32;
        for j in 0..n {
            s += (x[i * n + j] - m).exp();
        }
        for j in 0..n {
            out[i * n + j] = (x[i * n + j] - m).exp() / s;
        }
    }
}

#[kernel]
pub fn layer_norm(x: &[f32], gamma: &[f32], out: &mut [f32], rows: usize, n: usize, eps: f32) {
    for i in 0..rows {
        let mut s = 0.0f32;
        for j in 0..n {
            s += x[i * n + j];
        }
        let mean = s / n as f32;
        let mut v = 0.0f32;
        for j in 0..n {
            let d = x[i * n + j] - mean;
            v += d * d;
        }
        let inv = 1.0 / (v / n as f32 + eps).sqrt();
        for j in 0..n {
            out[i * n + j] = (x[i * n + j] - mean) * inv * gamma[j];
        }
    }
}

// A thread reads 16 bytes of a row at a time where the row starts on the 16-byte grid: 16 bytes here,
// and 4-byte rows beside a vector of bytes, which stays one element a read.
#[kernel]
pub fn byte_row_sum(a: &[u8], out: &mut [u32], cols: usize) {
    for i in 0..out.len() {
        let mut s = 0u32;
        for j in 0..cols {
            s += a[i * cols + j] as u32;
        }
        out[i] = s;
    }
}

#[kernel]
pub fn weighted_row_sum(a: &[i32], w: &[u8], out: &mut [i64], cols: usize) {
    for i in 0..out.len() {
        let mut s = 0i64;
        for j in 0..cols {
            if w[j] == 0 {
                continue;
            }
            s += a[i * cols + j] as i64 * (w[j] as i64 - j as i64);
        }
        out[i] = s;
    }
}

// Lane 0 looks the row's sum up after the loop: an index past the table panics on the device, and the
// call raises the panic of the first row that has one.
#[kernel]
pub fn row_lookup(a: &[u32], table: &[f32], out: &mut [f32], cols: usize) {
    for i in 0..out.len() {
        let mut s = 0u32;
        for j in 0..cols {
            s += a[i * cols + j];
        }
        out[i] = table[s as usize];
    }
}

// Consecutive threads read consecutive elements: one thread per column, or, where the columns are fewer
// than the device holds threads, the warps of a block splitting each column's rows.
#[kernel]
pub fn column_sum(a: &[f32], out: &mut [f32], rows: usize) {
    let cols = out.len();
    for i in 0..cols {
        let mut s = 0.0f32;
        for j in 0..rows {
            s += a[j * cols + i];
        }
        out[i] = s;
    }
}

#[kernel]
pub fn column_stats(a: &[i32], sums: &mut [i32], highs: &mut [i32], rows: usize) {
    let cols = sums.len();
    for i in 0..cols {
        let mut s = 0i32;
        let mut m = i32::MIN;
        for j in 0..rows {
            s += a[j * cols + i];
            m = m.max(a[j * cols + i]);
        }
        sums[i] = s;
        highs[i] = m;
    }
}
