//! Small numeric kernels written the way Rust programmers write them, as rs2gpu kernels.
//!
//! Each `#[kernel]` function is plain safe Rust built by rustc (the CPU reference). Unlike the RAJAPerf
//! crate, whose kernels are index loops by design, these use what Rust code usually holds: iterators,
//! `match`, `while` and `loop` with early exits, tuples, shadowing, closures, `impl` blocks on `#[repr(C)]`
//! structs and `const fn` helpers. Some of them rs2gpu rejects today; docs/corpus.md lists which, with the
//! diagnostic and what to write instead.

#![allow(clippy::needless_range_loop, clippy::manual_memcpy)]

pub mod const_fn;
pub mod control_flow;
pub mod integers;
pub mod iterators;
pub mod nests;
pub mod reductions;
pub mod structs;
pub mod tuples;
