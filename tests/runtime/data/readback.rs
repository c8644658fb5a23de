//! Kernels for tests/runtime/test_readback.py: reductions whose results the device writes into host
//! memory, and one seeded with an element at an index the host computes. A minimum seeded with `x[0]` is
//! RAJAPerf's FIRST_MIN (examples/rajaperf/src/lcals.rs), and a sum whose gathers are checked on the device
//! (so that a call copies back its panic record) is first_panics.rs's `gathered_sum`.
//! The cpu backend (rustc) is the reference for what they compute and where they panic.

use rs2gpu::kernel;

/// The sum of `v`, from 0.
#[kernel]
pub fn total(v: &[i64]) -> i64 {
    let mut s = 0;
    for i in 0..v.len() {
        s += v[i];
    }
    s
}

/// The least of `x[k]` and `x[first..]`: a seed whose index the host knows only from the call, and a loop
/// that runs no iteration where `first` is `x.len()`.
#[kernel]
pub fn least_from(x: &[f64], k: usize, first: usize) -> f64 {
    let mut m = x[k];
    for i in first..x.len() {
        m = m.min(x[i]);
    }
    m
}
