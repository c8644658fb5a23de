//! rs2gpu's Rust runtime (`rs2gpu_runtime.rs`) and its CUDA driver loader (`rs2gpu_driver.rs`), compiled
//! the way a generated kernel module compiles them, with tests of what they compute on the host.
//!
//! rs2gpu's Cargo hook copies both files unchanged into a crate's OUT_DIR, beside the generated
//! `rs2gpu_kernels.rs`, whose private `runtime` module defines the block size and includes the runtime;
//! the runtime includes the driver from OUT_DIR. This crate does the same (its build script puts the driver
//! in OUT_DIR), so what cargo compiles, lints and tests here is what every generated module compiles. The
//! tests are child modules of `runtime`, where its private functions are in reach.

#[allow(dead_code, unsafe_code)]
mod runtime {
    /// The manifest's block size, which every generated module defines here.
    const BLOCK_SIZE: u32 = 256;
    include!("rs2gpu_runtime.rs");

    #[cfg(test)]
    mod argument_tests;
    #[cfg(test)]
    mod arithmetic_tests;
    #[cfg(test)]
    mod bounds_tests;
    #[cfg(test)]
    mod geometry_tests;
    #[cfg(test)]
    mod record_tests;
}

/// What the driver loader's `use super::Error` names in its copy below.
#[cfg(test)]
use runtime::Error;

/// The driver loader once more, on its own: the runtime's copy is private to the runtime, and the tests of
/// the compile cache need the loader's private functions.
#[cfg(test)]
#[allow(dead_code, unsafe_code)]
mod driver {
    include!("rs2gpu_driver.rs");

    mod cache_tests;
}
