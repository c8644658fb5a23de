//! One kernel whose arguments cover the launch ABI: slices of several element types, scalars of every
//! width (1, 2, 4 and 8 bytes, integer and floating point), a bool, and a #[repr(C)] struct by value
//! with padding inside and at its end.
use rs2gpu::kernel;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Coeffs {
    pub flag: u8,
    pub scale: f64,
    pub shift: i32,
}

#[kernel]
pub fn mixed(out: &mut [f64], a: &[f32], idx: &[i32], small: i8, half: i16, word: u32, wide: u64,
             single: f32, c: Coeffs, on: bool) {
    for i in 0..out.len() {
        let base = a[i] as f64 * c.scale + (idx[i] + c.shift) as f64;
        let extra = (small as i64 + half as i64 + word as i64 + wide as i64) as f64 + single as f64;
        out[i] = if on && c.flag != 0 { base + extra } else { base - extra };
    }
}

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
