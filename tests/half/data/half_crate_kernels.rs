// Kernels that name the `half` crate's types (here a local crate of that name with the same surface): the
// frontend treats `half::f16` as `rs2gpu::f16`.
use half::f16;
use rs2gpu::kernel;

#[kernel]
pub fn scale(out: &mut [f16], x: &[f16], s: f16) {
    for i in 0..out.len() {
        out[i] = x[i] * s - half::f16::ONE;
    }
}

#[kernel]
pub fn narrow(out: &mut [half::bf16], x: &[f64]) {
    for i in 0..out.len() {
        out[i] = half::bf16::from_f64(x[i]).max(half::bf16::from_f32(-2.5));
    }
}
