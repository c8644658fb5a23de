//! One kernel whose arguments cover the launch ABI: slices of several element types (the length of one read by the body, the others' not passed), scalars of every
//! width (1, 2, 4 and 8 bytes, integer and floating point), a bool, a #[repr(C)] struct by value
//! with padding inside and at its end, and a small read-only array passed by value (6 bytes, 2-aligned).
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
             single: f32, c: Coeffs, on: bool, taps: &[i16; 3]) {
    for i in 0..out.len() {
        let base = a[i] as f64 * c.scale + (idx[i] + c.shift) as f64 + idx.len() as f64;
        let extra = (small as i64 + half as i64 + word as i64 + wide as i64 + taps[0] as i64 - taps[2] as i64) as f64
            + single as f64;
        out[i] = if on && c.flag != 0 { base + extra } else { base - extra };
    }
}
