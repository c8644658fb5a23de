//! Kernels written the way ordinary Rust is written, using what rustc accepts beyond the basic forms:
//! coercions at call sites, `use` declarations, the integer methods of std, and stepped and reversed
//! ranges. rustc's build of this file (the cpu backend) gives the values every device must compute.

use rs2gpu::kernel;

/// Reads its slice only: callers may pass a `&mut [f64]`, which rustc reborrows as `&[f64]`.
fn heat_point(s: &[f64], i: usize) -> f64 {
    let left = if i > 0 { s[i - 1] } else { s[i] };
    let right = if i + 1 < s.len() { s[i + 1] } else { s[i] };
    0.25 * left + 0.5 * s[i] + 0.25 * right
}

/// Two sweeps of a 1-D heat stencil, `a` → `b` → `a`: each loop reads through the helper the slice
/// that it does not write, both of them `&mut` parameters.
#[kernel]
pub fn heat_steps(a: &mut [f64], b: &mut [f64], steps: usize) {
    for _ in 0..steps {
        for i in 0..a.len().min(b.len()) {
            b[i] = heat_point(a, i);
        }
        for i in 0..a.len().min(b.len()) {
            a[i] = heat_point(b, i);
        }
    }
}
