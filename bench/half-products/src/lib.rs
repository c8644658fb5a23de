//! Matrix products of half values as people write them: a row-major `m × k` matrix `a`, `b` either
//! `k × n` (`c = a · b`) or `n × k` (`c = a · bᵀ`, as a linear layer stores its weights), each sum in f32
//! and rounded once to the output's half type.

// Row-major matrices are indexed by hand, as users write them.
#![allow(clippy::needless_range_loop)]

use rs2gpu::{bf16, f16, kernel};

/// `c = a · b` in bf16 with f32 sums.
#[kernel]
pub fn matmul_bf16(c: &mut [bf16], a: &[bf16], b: &[bf16], k: usize, n: usize) {
    let m = c.len() / n;
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for p in 0..k {
                acc += a[i * k + p].to_f32() * b[p * n + j].to_f32();
            }
            c[i * n + j] = bf16::from_f32(acc);
        }
    }
}

/// `c = a · b` in f16 with f32 sums.
#[kernel]
pub fn matmul_f16(c: &mut [f16], a: &[f16], b: &[f16], k: usize, n: usize) {
    let m = c.len() / n;
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for p in 0..k {
                acc += a[i * k + p].to_f32() * b[p * n + j].to_f32();
            }
            c[i * n + j] = f16::from_f32(acc);
        }
    }
}

/// `c = a · bᵀ` in bf16 with f32 sums.
#[kernel]
pub fn matmul_nt_bf16(c: &mut [bf16], a: &[bf16], b: &[bf16], k: usize, n: usize) {
    let m = c.len() / n;
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for p in 0..k {
                acc += a[i * k + p].to_f32() * b[j * k + p].to_f32();
            }
            c[i * n + j] = bf16::from_f32(acc);
        }
    }
}

/// `c = a · bᵀ` in f16 with f32 sums.
#[kernel]
pub fn matmul_nt_f16(c: &mut [f16], a: &[f16], b: &[f16], k: usize, n: usize) {
    let m = c.len() / n;
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for p in 0..k {
                acc += a[i * k + p].to_f32() * b[j * k + p].to_f32();
            }
            c[i * n + j] = f16::from_f32(acc);
        }
    }
}
