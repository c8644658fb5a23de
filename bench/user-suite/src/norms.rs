//! Row-wise softmax, layer norm and RMS norm, as written in a model's forward pass: each row of `x`
//! (`cols` wide) is read in passes (its maximum or mean, then its sum, then the output).

use rs2gpu::kernel;

/// `out[r] = exp(x[r] - max(x[r])) / Σ exp(x[r] - max(x[r]))`
#[kernel]
pub fn softmax_f32(out: &mut [f32], x: &[f32], cols: usize) {
    let rows = x.len() / cols;
    for r in 0..rows {
        let row = r * cols;
        let mut max = f32::NEG_INFINITY;
        for j in 0..cols {
            max = max.max(x[row + j]);
        }
        let mut sum = 0.0;
        for j in 0..cols {
            sum += (x[row + j] - max).exp();
        }
        for j in 0..cols {
            out[row + j] = (x[row + j] - max).exp() / sum;
        }
    }
}

/// `out[r] = (x[r] - mean) / sqrt(var + eps) * gamma + beta`, with the biased variance of the row.
#[kernel]
pub fn layer_norm_f32(out: &mut [f32], x: &[f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let cols = gamma.len();
    let rows = x.len() / cols;
    for r in 0..rows {
        let row = r * cols;
        let mut sum = 0.0;
        for j in 0..cols {
            sum += x[row + j];
        }
        let mean = sum / cols as f32;
        let mut squares = 0.0;
        for j in 0..cols {
            let d = x[row + j] - mean;
            squares += d * d;
        }
        let inv = 1.0 / (squares / cols as f32 + eps).sqrt();
        for j in 0..cols {
            out[row + j] = (x[row + j] - mean) * inv * gamma[j] + beta[j];
        }
    }
}

/// `out[r] = x[r] / sqrt(mean(x[r]²) + eps) * gamma`
#[kernel]
pub fn rms_norm_f32(out: &mut [f32], x: &[f32], gamma: &[f32], eps: f32) {
    let cols = gamma.len();
    let rows = x.len() / cols;
    for r in 0..rows {
        let row = r * cols;
        let mut squares = 0.0;
        for j in 0..cols {
            squares += x[row + j] * x[row + j];
        }
        let inv = 1.0 / (squares / cols as f32 + eps).sqrt();
        for j in 0..cols {
            out[row + j] = x[row + j] * inv * gamma[j];
        }
    }
}
