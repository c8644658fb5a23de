//! One kernel whose reductions cover their launch ABI: a scalar reduction and a min/max-location one.
use rs2gpu::kernel;

/// Reductions: each takes its seed (the value before the loop) by value at its exact width, then pointers
/// to the blocks' partial results and to its result; the location of a min/max-location reduction too.
#[kernel]
pub fn extremes(a: &[f32], bias: i64) -> (i64, f32, usize) {
    let mut total = bias;
    let mut low = f32::MAX;
    let mut at = 0;
    for i in 0..a.len() {
        total += a[i] as i64;
        if a[i] < low {
            low = a[i];
            at = i;
        }
    }
    (total, low, at)
}
