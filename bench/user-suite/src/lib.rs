//! The user-style benchmark suite's kernels: ordinary Rust, written the way people write these loops
//! (row-major matrices in flat slices, an index loop over rows or elements, inner loops for each row's
//! work), then timed against the libraries a user would call instead (`bench/user_suite.py`).
//!
//! Each `#[kernel]` is safe Rust that stable rustc builds; that build is the reference the GPU's results
//! are checked against before anything is timed.

// Row-major matrices are indexed by hand, as users write them, and the kernels take the shapes they need.
#![allow(clippy::needless_range_loop, clippy::too_many_arguments)]

pub mod linalg;
pub mod norms;
pub mod reductions;
pub mod scatter;
pub mod stencils;
