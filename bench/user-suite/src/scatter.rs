//! Data-dependent indexing: a histogram, and a gather and a scatter through index lists.

use rs2gpu::kernel;

/// Counts the values of `x` in `counts.len()` equal bins over `[lo, hi)`; values outside go to the
/// first or the last bin.
#[kernel]
pub fn histogram_f32(counts: &mut [u32], x: &[f32], lo: f32, hi: f32) {
    let bins = counts.len();
    let scale = bins as f32 / (hi - lo);
    for &value in x {
        let bin = (((value - lo) * scale) as usize).min(bins - 1);
        counts[bin] += 1;
    }
}

/// `out[i] = src[idx[i]]`
#[kernel]
pub fn gather_f32(out: &mut [f32], src: &[f32], idx: &[u32]) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = src[idx[i] as usize];
    }
}

/// `out[idx[i]] = src[i]`; the indices are distinct.
#[kernel]
pub fn scatter_f32(out: &mut [f32], src: &[f32], idx: &[u32]) {
    for i in 0..src.len() {
        out[idx[i] as usize] = src[i];
    }
}
