//! What rs2gpu kernels `use`: the `#[kernel]` attribute, and the half-precision float types `f16` (IEEE
//! binary16) and `bf16` (bfloat16).
//!
//! rs2gpu reads the Rust source of a `#[kernel]` function itself and translates it to CUDA/HIP C++. For rustc
//! the attribute is only a marker: it hands the function back unchanged, so the same source compiles on the
//! CPU and its results are the reference the GPU must reproduce. `f16` and `bf16` are that reference for
//! half-precision arithmetic: every operation rounds exactly as the generated GPU code does. The crate has
//! no dependencies, so it builds offline.

pub use rs2gpu_macros::kernel;

mod half;

pub use half::{bf16, f16};
