//! A stand-in for the `half` crate: a crate of that name whose `f16` and `bf16` have the `half` crate's
//! layout and the methods kernels use (`from_f32`, `to_f32`, the operators, the constants). Kernels that
//! name `half::f16` must translate as those naming `rs2gpu::f16` do.
pub use rs2gpu::{bf16, f16};
