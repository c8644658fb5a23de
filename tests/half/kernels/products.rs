// Matrix products of half values into f32 sums, written as the triple loop people write: the tiles entry
// point runs them on the tensor cores where the GPU has them. `first` is the product's first row, as a
// kernel over part of a larger matrix starts.
use rs2gpu::{bf16, f16, kernel};

/// c = a · bᵀ: both operands k-contiguous (a row-major m x n, b row-major p x n), f32 results.
#[kernel]
pub fn product_nt(c: &mut [f32], a: &[bf16], b: &[bf16], first: usize, m: usize, n: usize, p: usize) {
    for row in first..m {
        for col in 0..p {
            let mut acc = 0.0f32;
            for k in 0..n {
                acc += a[row * n + k].to_f32() * b[col * n + k].to_f32();
            }
            c[row * p + col] = acc;
        }
    }
}

/// c = a · b with b row-major n x p (its columns strided), the sums rounded once to f16.
#[kernel]
pub fn product_nn(c: &mut [f16], a: &[f16], b: &[f16], m: usize, n: usize, p: usize) {
    for row in 0..m {
        for col in 0..p {
            let mut acc = 0.0;
            for k in 0..n {
                acc = acc + f32::from(a[row * n + k]) * f32::from(b[k * p + col]);
            }
            c[row * p + col] = f16::from_f32(acc);
        }
    }
}

/// c = aᵀ · b with a row-major n x m: both operands' rows and columns are their unit-stride axes.
#[kernel]
pub fn product_tn(c: &mut [f32], a: &[bf16], b: &[bf16], m: usize, n: usize, p: usize) {
    for row in 0..m {
        for col in 0..p {
            let mut acc = 0.0f32;
            for k in 0..n {
                acc += a[k * m + row].to_f32() * b[k * p + col].to_f32();
            }
            c[row * p + col] = acc;
        }
    }
}

/// The same product with a fused multiply-add per term: a chain of roundings Rust fixes, which stays in k
/// order (no tensor cores).
#[kernel]
pub fn product_fused(c: &mut [f32], a: &[bf16], b: &[bf16], m: usize, n: usize, p: usize) {
    for row in 0..m {
        for col in 0..p {
            let mut acc = 0.0f32;
            for k in 0..n {
                acc = a[row * n + k].to_f32().mul_add(b[col * n + k].to_f32(), acc);
            }
            c[row * p + col] = acc;
        }
    }
}

/// A product per head, as attention's scores are: for each of `heads` heads, q's rows of the head against
/// k's, both `tokens` rows of `heads * width` values (a 3-D nest: the head, then the product's rows and
/// columns).
#[kernel]
pub fn scores_per_head(scores: &mut [f32], q: &[bf16], k: &[bf16], heads: usize, width: usize) {
    let hidden = heads * width;
    let tokens = q.len() / hidden;
    for h in 0..heads {
        for t in 0..tokens {
            for s in 0..tokens {
                let mut acc = 0.0f32;
                for d in 0..width {
                    acc += q[t * hidden + h * width + d].to_f32() * k[s * hidden + h * width + d].to_f32();
                }
                scores[(h * tokens + t) * tokens + s] = acc;
            }
        }
    }
}

/// A matrix-vector product, as a decode step's projections are: one output per row of `w`, a row's sum
/// split over a block's or a warp's threads, which read the row 8 halves (16 bytes) at a time.
#[kernel]
pub fn matrix_vector(y: &mut [f32], w: &[bf16], x: &[bf16]) {
    let inputs = x.len();
    for o in 0..y.len() {
        let mut acc = 0.0f32;
        for k in 0..inputs {
            acc += w[o * inputs + k].to_f32() * x[k].to_f32();
        }
        y[o] = acc;
    }
}
