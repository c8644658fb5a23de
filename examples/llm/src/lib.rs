//! One decoder layer of a Llama-style transformer, as plain kernels: bf16 weights and activations, f32
//! sums. Matrices are row-major; a linear layer's weight is `out_features` rows of `in_features` (as
//! PyTorch stores `nn.Linear`), so `y = x · Wᵀ`. Activations are `tokens` rows of `hidden` values; the
//! key/value cache holds `context` rows of `hidden` values (all heads of a position side by side), each
//! head `HEAD_DIM` of them.
//!
//! One step of the layer (llm.py runs it; `x` is the residual stream):
//!
//! ```text
//! h = rms_norm(x) · attention_norm        q, k, v = h·Wqᵀ, h·Wkᵀ, h·Wvᵀ    rotary(q), rotary(k)
//! k, v appended to the cache              a = softmax(q·kᵀ / √head_dim, causal) · v   per head
//! x = x + a·Woᵀ                           h = rms_norm(x) · mlp_norm
//! x = x + (silu(h·Wgᵀ) ⊙ h·Wuᵀ)·Wdᵀ
//! ```

// Kernels are index loops by design: each `for i in range` is one parallel loop on the GPU.
#![allow(clippy::needless_range_loop)]
#![allow(clippy::too_many_arguments)]

use rs2gpu::{bf16, kernel};

/// The values of one attention head (Llama's).
pub const HEAD_DIM: usize = 128;
/// Half of a head: the values a rotary embedding turns together are this far apart.
const HALF: usize = HEAD_DIM / 2;
/// The positions of one part of a decode step's attention output (`decode_mix_parts`).
pub const CHUNK: usize = 128;

/// `out = x / rms(x) · weight` for each of the rows of `x` (`hidden` values each), the mean of squares
/// summed in f32.
#[kernel]
pub fn rms_norm(out: &mut [bf16], x: &[bf16], weight: &[bf16], hidden: usize, eps: f32) {
    let rows = x.len() / hidden;
    for t in 0..rows {
        let mut squares = 0.0f32;
        for j in 0..hidden {
            let v = x[t * hidden + j].to_f32();
            squares += v * v;
        }
        let scale = 1.0 / (squares / hidden as f32 + eps).sqrt();
        for j in 0..hidden {
            out[t * hidden + j] = bf16::from_f32(x[t * hidden + j].to_f32() * scale * weight[j].to_f32());
        }
    }
}

/// `y = x · wᵀ` for `tokens` rows of `x`: `w` is `outputs` rows of `inputs` weights. Each output is
/// summed in f32 and rounded once to bf16.
#[kernel]
pub fn linear(y: &mut [bf16], x: &[bf16], w: &[bf16], tokens: usize, inputs: usize, outputs: usize) {
    for t in 0..tokens {
        for o in 0..outputs {
            let mut acc = 0.0f32;
            for k in 0..inputs {
                acc += x[t * inputs + k].to_f32() * w[o * inputs + k].to_f32();
            }
            y[t * outputs + o] = bf16::from_f32(acc);
        }
    }
}

/// `y = x · wᵀ` for one token (a decode step): one output per iteration, its row of `w` read in turn.
#[kernel]
pub fn matvec(y: &mut [bf16], x: &[bf16], w: &[bf16]) {
    let inputs = x.len();
    for o in 0..y.len() {
        let mut acc = 0.0f32;
        for k in 0..inputs {
            acc += w[o * inputs + k].to_f32() * x[k].to_f32();
        }
        y[o] = bf16::from_f32(acc);
    }
}

/// Rotary position embedding of `x` (`tokens` rows of `hidden` values, heads of `HEAD_DIM`, the first token
/// at position `first`) into `out`: in each head, value `i` of the first half and value `i` of the second
/// turn together by the angle `position · base^(-2i / HEAD_DIM)` (the rotate-half convention of Llama's
/// PyTorch code). `cos` and `sin` hold `positions` rows of `HEAD_DIM / 2` values.
#[kernel]
pub fn rotary(out: &mut [bf16], x: &[bf16], cos: &[f32], sin: &[f32], first: usize, hidden: usize) {
    let tokens = x.len() / hidden;
    let heads = hidden / HEAD_DIM;
    for t in 0..tokens {
        for h in 0..heads {
            for i in 0..HALF {
                let at = t * hidden + h * HEAD_DIM + i;
                let angle = (first + t) * HALF + i;
                out[at] = bf16::from_f32(x[at].to_f32() * cos[angle] - x[at + HALF].to_f32() * sin[angle]);
            }
        }
    }
    for t in 0..tokens {
        for h in 0..heads {
            for i in 0..HALF {
                let at = t * hidden + h * HEAD_DIM + i;
                let angle = (first + t) * HALF + i;
                out[at + HALF] = bf16::from_f32(x[at + HALF].to_f32() * cos[angle] + x[at].to_f32() * sin[angle]);
            }
        }
    }
}

/// Copies the rows of `rows` into `cache` from row `first` on (the keys or values of new positions).
#[kernel]
pub fn append(cache: &mut [bf16], rows: &[bf16], first: usize, hidden: usize) {
    for c in 0..rows.len() {
        cache[first * hidden + c] = rows[c];
    }
}

/// The attention scores of one decode step: for each head and each position of `0..length`, `q`'s part of
/// the head against the position's cached key, scaled by 1/√HEAD_DIM.
#[kernel]
pub fn decode_scores(scores: &mut [f32], q: &[bf16], keys: &[bf16], length: usize) {
    let hidden = q.len();
    let heads = hidden / HEAD_DIM;
    let scale = 1.0 / (HEAD_DIM as f32).sqrt();
    for h in 0..heads {
        for s in 0..length {
            let mut acc = 0.0f32;
            for d in 0..HEAD_DIM {
                acc += q[h * HEAD_DIM + d].to_f32() * keys[s * hidden + h * HEAD_DIM + d].to_f32();
            }
            scores[h * length + s] = acc * scale;
        }
    }
}

/// `probs` = the softmax of each row of `length` scores.
#[kernel]
pub fn softmax_rows(probs: &mut [f32], scores: &[f32], length: usize) {
    let rows = scores.len() / length;
    for r in 0..rows {
        let mut largest = f32::NEG_INFINITY;
        for s in 0..length {
            largest = largest.max(scores[r * length + s]);
        }
        let mut total = 0.0f32;
        for s in 0..length {
            total += (scores[r * length + s] - largest).exp();
        }
        for s in 0..length {
            probs[r * length + s] = (scores[r * length + s] - largest).exp() / total;
        }
    }
}

/// The attention output of one decode step, in parts: for each chunk of `CHUNK` positions of `0..length`
/// and each of the `hidden` values, its head's sum over the chunk of the cached values weighted by the
/// head's row of `weights` (split so that the GPU has many threads' loads in flight, as flash-decoding
/// does; `decode_mix` adds the parts).
#[kernel]
pub fn decode_mix_parts(parts: &mut [f32], weights: &[f32], values: &[bf16], length: usize, hidden: usize) {
    let chunks = parts.len() / hidden;
    let heads = hidden / HEAD_DIM;
    for j in 0..chunks {
        for h in 0..heads {
            for d in 0..HEAD_DIM {
                let end = ((j + 1) * CHUNK).min(length);
                let mut acc = 0.0f32;
                for s in j * CHUNK..end {
                    acc += weights[h * length + s] * values[s * hidden + h * HEAD_DIM + d].to_f32();
                }
                parts[j * hidden + h * HEAD_DIM + d] = acc;
            }
        }
    }
}

/// The attention output of one decode step: the sum of each value's parts from `decode_mix_parts`.
#[kernel]
pub fn decode_mix(out: &mut [bf16], parts: &[f32]) {
    let hidden = out.len();
    let chunks = parts.len() / hidden;
    for c in 0..hidden {
        let mut acc = 0.0f32;
        for j in 0..chunks {
            acc += parts[j * hidden + c];
        }
        out[c] = bf16::from_f32(acc);
    }
}

/// The attention scores of a prompt (prefill): for each head, each of the `tokens` rows of `q` against the
/// cached keys of positions `0..tokens`, scaled by 1/√HEAD_DIM (every pair: `causal_softmax` leaves out
/// the later positions). A product per head, on the tensor cores.
#[kernel]
pub fn attention_scores(scores: &mut [f32], q: &[bf16], keys: &[bf16], tokens: usize, hidden: usize) {
    let heads = hidden / HEAD_DIM;
    let scale = 1.0 / (HEAD_DIM as f32).sqrt();
    for h in 0..heads {
        for t in 0..tokens {
            for s in 0..tokens {
                let mut acc = 0.0f32;
                for d in 0..HEAD_DIM {
                    acc += q[t * hidden + h * HEAD_DIM + d].to_f32() * keys[s * hidden + h * HEAD_DIM + d].to_f32();
                }
                scores[(h * tokens + t) * tokens + s] = acc * scale;
            }
        }
    }
}

/// `probs` = the softmax of each row of `tokens` scores over the positions up to the row's own (row `r` is
/// token `r % tokens` of its head), zero after it; rounded once to bf16. Each pass reads the whole row and
/// leaves out the later positions by value, so that the row's threads can split it.
#[kernel]
pub fn causal_softmax(probs: &mut [bf16], scores: &[f32], tokens: usize) {
    let rows = scores.len() / tokens;
    for r in 0..rows {
        let last = r % tokens;
        let mut largest = f32::NEG_INFINITY;
        for s in 0..tokens {
            let score = if s <= last { scores[r * tokens + s] } else { f32::NEG_INFINITY };
            largest = largest.max(score);
        }
        let mut total = 0.0f32;
        for s in 0..tokens {
            let score = if s <= last { scores[r * tokens + s] } else { f32::NEG_INFINITY };
            total += (score - largest).exp();
        }
        for s in 0..tokens {
            let score = if s <= last { scores[r * tokens + s] } else { f32::NEG_INFINITY };
            probs[r * tokens + s] = bf16::from_f32((score - largest).exp() / total);
        }
    }
}

/// The attention output of a prompt: for each head and token, the cached values of positions `0..tokens`
/// weighted by the token's row of `probs`. A product per head, on the tensor cores.
#[kernel]
pub fn attention_mix(out: &mut [bf16], probs: &[bf16], values: &[bf16], tokens: usize, hidden: usize) {
    let heads = hidden / HEAD_DIM;
    for h in 0..heads {
        for t in 0..tokens {
            for d in 0..HEAD_DIM {
                let mut acc = 0.0f32;
                for s in 0..tokens {
                    acc += probs[(h * tokens + t) * tokens + s].to_f32() * values[s * hidden + h * HEAD_DIM + d].to_f32();
                }
                out[t * hidden + h * HEAD_DIM + d] = bf16::from_f32(acc);
            }
        }
    }
}

/// `x += y`, rounded to bf16 (a residual add).
#[kernel]
pub fn add_into(x: &mut [bf16], y: &[bf16]) {
    for i in 0..x.len() {
        x[i] = x[i] + y[i];
    }
}

/// SwiGLU: `out = silu(gate) · up`, with silu(g) = g / (1 + e^-g), in f32 and rounded once.
#[kernel]
pub fn swiglu(out: &mut [bf16], gate: &[bf16], up: &[bf16]) {
    for i in 0..out.len() {
        let g = gate[i].to_f32();
        out[i] = bf16::from_f32(g / (1.0 + (-g).exp()) * up[i].to_f32());
    }
}

#[cfg(test)]
mod tests {
    use super::{rms_norm, rotary, softmax_rows, HALF, HEAD_DIM};
    use rs2gpu::bf16;

    fn halves(values: &[f32]) -> Vec<bf16> {
        values.iter().map(|&v| bf16::from_f32(v)).collect()
    }

    #[test]
    fn rms_norm_of_a_constant_row_is_the_weight() {
        let x = halves(&[3.0; 8]);
        let weight = halves(&[0.5, 1.0, 2.0, 4.0, 0.5, 1.0, 2.0, 4.0]);
        let mut out = halves(&[0.0; 8]);
        rms_norm(&mut out, &x, &weight, 8, 0.0);
        assert_eq!(out, weight);
    }

    #[test]
    fn rotary_at_position_zero_leaves_the_values_as_they_are() {
        let values: Vec<f32> = (0..HEAD_DIM).map(|i| i as f32 - 60.5).collect();
        let x = halves(&values);
        let (cos, sin) = ([1.0f32; HALF], [0.0f32; HALF]);
        let mut out = halves(&[0.0; HEAD_DIM]);
        rotary(&mut out, &x, &cos, &sin, 0, HEAD_DIM);
        assert_eq!(out, x);
    }

    #[test]
    fn rotary_by_a_quarter_turn_moves_the_second_half_to_the_first_negated() {
        let values: Vec<f32> = (0..HEAD_DIM).map(|i| i as f32).collect();
        let x = halves(&values);
        let (cos, sin) = ([0.0f32; HALF], [1.0f32; HALF]);
        let mut out = halves(&[0.0; HEAD_DIM]);
        rotary(&mut out, &x, &cos, &sin, 0, HEAD_DIM);
        for i in 0..HALF {
            assert_eq!(out[i], -x[i + HALF]);
            assert_eq!(out[i + HALF], x[i]);
        }
    }

    #[test]
    fn softmax_rows_sum_to_one_and_keep_the_order() {
        let scores = [1.0f32, 2.0, 3.0, -1.0, -1.0, -1.0];
        let mut probs = [0.0f32; 6];
        softmax_rows(&mut probs, &scores, 3);
        assert!((probs[..3].iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(probs[0] < probs[1] && probs[1] < probs[2]);
        assert_eq!(probs[3..], [1.0 / 3.0; 3]);
    }
}
