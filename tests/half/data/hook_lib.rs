// Half-precision kernels behind the Cargo hook's generated API, which takes the support crate's types.
use rs2gpu::{bf16, f16, kernel};

#[kernel]
pub fn axpy_f16(y: &mut [f16], x: &[f16], a: f16) {
    for i in 0..y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[kernel]
pub fn mixed_bf16(out: &mut [bf16], wide: &mut [f32], x: &[bf16], s: bf16) {
    for i in 0..out.len() {
        out[i] = (x[i] / s).sqrt() - x[i] % s;
        wide[i] = x[i].to_f32() * 3.0;
    }
}

pub mod kernels {
    include!(concat!(env!("OUT_DIR"), "/rs2gpu_kernels.rs"));
}
