//! Kernels written as plain safe Rust and run on the GPU through rs2gpu's Cargo build-script hook.
//!
//! Built by rustc, the `#[kernel]` functions are ordinary CPU functions: the reference the GPU must match.
//! At build time `build.rs` (written by `rs2gpu cargo init`) translates them; the `kernels` module below
//! includes the generated Rust API that launches the translated kernels: `kernels::triad(&gpu, ...)`
//! takes the same arguments (host slices), `kernels::triad_on(&gpu, ...)` takes `DeviceBuffer`s.

// Kernels are index loops by design: each `for i in range` is one parallel loop on the GPU.
#![allow(clippy::needless_range_loop)]

use rs2gpu::kernel;

/// TRIAD: `a[i] = b[i] + alpha * c[i]`. `a` is only written, so the GPU call never uploads it.
#[kernel]
pub fn triad(a: &mut [f64], b: &[f64], c: &[f64], alpha: f64) {
    for i in 0..a.len() {
        a[i] = b[i] + alpha * c[i];
    }
}

/// DOT: the sum of `a[i] * b[i]`, a reduction.
#[kernel]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut sum = 0.0;
    for i in 0..a.len() {
        sum += a[i] * b[i];
    }
    sum
}

/// SCALE, in place: `x[i] *= s`.
#[kernel]
pub fn scale(x: &mut [f32], s: f32) {
    for i in 0..x.len() {
        x[i] *= s;
    }
}

/// A three-point stencil over the interior `1..n - 1`; the two ends of `out` keep their values.
#[kernel]
pub fn smooth(out: &mut [f32], u: &[f32], w: f32) {
    let n = u.len();
    for i in 1..n - 1 {
        out[i] = u[i] + w * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
    }
}

/// Forward differences, `x[i] = y[i + 1] - y[i]`; `y` needs one element more than `x`.
#[kernel]
pub fn differences(x: &mut [f64], y: &[f64]) {
    for i in 0..x.len() {
        x[i] = y[i + 1] - y[i];
    }
}

/// AXPY, in place: `y[i] += a * x[i]`. Where `x` and `y` fit in the GPU's L2 cache, the GPU adds into `y`
/// there (atomic adds whose results are unused), without loading it.
#[kernel]
pub fn axpy(y: &mut [f64], x: &[f64], a: f64) {
    for i in 0..y.len() {
        y[i] += a * x[i];
    }
}

/// The smallest and the largest value, two reductions of one loop.
#[kernel]
pub fn min_max(a: &[i32]) -> (i32, i32) {
    let mut lo = i32::MAX;
    let mut hi = i32::MIN;
    for i in 0..a.len() {
        lo = lo.min(a[i]);
        hi = hi.max(a[i]);
    }
    (lo, hi)
}

/// A five-point stencil over the interior of a row-major `rows` x `cols` grid: each point the sum of its
/// neighbours less four times itself.
#[kernel]
pub fn laplacian(out: &mut [f64], u: &[f64], cols: usize, rows: usize) {
    for r in 1..rows - 1 {
        for c in 1..cols - 1 {
            let at = r * cols + c;
            out[at] = u[at - cols] + u[at - 1] + u[at + 1] + u[at + cols] - 4.0 * u[at];
        }
    }
}

/// The real square roots: `x[i] = sqrt(d[i])` and `flag[i] = 1` where `d[i] >= 0`, else 0 and -1. The
/// GPU version checks the writes to `flag` on the device only when `flag` is shorter than `x`.
#[kernel]
pub fn real_roots(x: &mut [f64], d: &[f64], flag: &mut [f64]) {
    for i in 0..x.len() {
        if d[i] >= 0.0 {
            x[i] = d[i].sqrt();
            flag[i] = 1.0;
        } else {
            x[i] = 0.0;
            flag[i] = -1.0;
        }
    }
}

/// The GPU versions of the kernels above, generated at build time by rs2gpu.
pub mod kernels {
    include!(concat!(env!("OUT_DIR"), "/rs2gpu_kernels.rs"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triad_is_b_plus_alpha_c() {
        let mut a = [0.0; 3];
        triad(&mut a, &[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.5);
        assert_eq!(a, [3.0, 4.5, 6.0]);
    }

    #[test]
    fn dot_sums_products() {
        assert_eq!(dot(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), 32.0);
        assert_eq!(dot(&[], &[]), 0.0);
    }

    #[test]
    fn scale_scales_in_place() {
        let mut x = [1.0, -2.0, 0.5];
        scale(&mut x, 4.0);
        assert_eq!(x, [4.0, -8.0, 2.0]);
    }

    #[test]
    fn smooth_leaves_the_ends() {
        let mut out = [9.0; 5];
        smooth(&mut out, &[0.0, 1.0, 0.0, 1.0, 0.0], 0.25);
        assert_eq!(out, [9.0, 0.5, 0.5, 0.5, 9.0]);
    }

    #[test]
    fn laplacian_of_a_plane_is_zero_inside() {
        // u = row + 2 col on a 3 x 4 grid: the interior points (1, 1) and (1, 2) have neighbours summing
        // to four times their value; the border keeps its 9s
        let u: Vec<f64> = (0..12).map(|k| (k / 4 + 2 * (k % 4)) as f64).collect();
        let mut out = [9.0; 12];
        laplacian(&mut out, &u, 4, 3);
        let mut expected = [9.0; 12];
        expected[5] = 0.0;
        expected[6] = 0.0;
        assert_eq!(out, expected);
    }

    #[test]
    fn differences_subtract_neighbours() {
        let mut x = [9.0; 3];
        differences(&mut x, &[1.0, 4.0, 9.0, 16.0]);
        assert_eq!(x, [3.0, 5.0, 7.0]);
    }

    #[test]
    fn axpy_adds_in_place() {
        let mut y = [1.0, 2.0, -3.0];
        axpy(&mut y, &[2.0, 0.5, 1.0], 4.0);
        assert_eq!(y, [9.0, 4.0, 1.0]);
    }

    #[test]
    fn min_max_finds_both() {
        assert_eq!(min_max(&[3, -7, 12, 0]), (-7, 12));
        assert_eq!(min_max(&[]), (i32::MAX, i32::MIN));
    }

    // The generated host code that sizes each launch and checks its indices before any device work: the
    // loop `1..n - 1` of `smooth` (n = u.len()), computed with Rust's wrapping arithmetic like the CPU build
    // in release mode, and the bounds of `b[i]` in `triad` when `b` is shorter than `a`.
    #[test]
    fn launch_ranges_follow_the_loop_bounds() {
        use kernels::{ranges, Dim, RangeError};
        assert_eq!(ranges::smooth_0(10, 10), Ok(Dim { start: 1, count: 8 }));
        assert_eq!(ranges::smooth_0(2, 2), Ok(Dim { start: 1, count: 0 }));
        assert_eq!(ranges::triad_0(7, 7, 7), Ok(Dim { start: 0, count: 7 }));
        assert_eq!(ranges::min_max_0(0), Ok(Dim { start: 0, count: 0 }));
        assert_eq!(
            ranges::triad_0(7, 5, 7),
            Err(RangeError::OutOfBounds { len: 5, index: 5, source: "src/lib.rs:17:16" })
        );
    }

    #[test]
    fn a_gpu_is_optional() {
        // Where there is no GPU (CI), the context says so instead of failing otherwise.
        if let Err(e) = kernels::Gpu::new() {
            assert!(e.is_unavailable() || matches!(e, kernels::Error::Driver { .. }), "{e}");
        }
    }
}
