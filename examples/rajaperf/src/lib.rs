//! RAJAPerf kernels (Stream, Basic, Lcals, Apps) written in the rs2gpu kernel language.
//!
//! Each `#[kernel]` function is plain safe Rust: built by rustc it is the CPU reference, and rs2gpu translates
//! the same source to CUDA and HIP. Names are the RAJAPerf kernel names in snake case; the formulas keep
//! RAJAPerf's order of floating-point operations.

// Kernels are index loops by design: each `for i in range` is one parallel loop on the GPU. Their arrays and
// scalars are parameters, as many as the RAJAPerf kernel has.
#![allow(clippy::needless_range_loop, clippy::manual_memcpy, clippy::too_many_arguments)]

pub mod apps;
pub mod basic;
pub mod lcals;
pub mod stream;

#[cfg(test)]
mod tests {
    use super::{basic, lcals, stream};

    #[test]
    fn copy_copies_every_element() {
        let mut c = [0.0; 3];
        stream::copy(&mut c, &[1.5, -2.0, 0.25]);
        assert_eq!(c, [1.5, -2.0, 0.25]);
    }

    #[test]
    fn mul_scales_by_alpha() {
        let mut b = [0.0; 2];
        stream::mul(&mut b, &[1.0, 2.5], 2.0);
        assert_eq!(b, [2.0, 5.0]);
    }

    #[test]
    fn add_sums_elementwise() {
        let mut c = [0.0; 2];
        stream::add(&mut c, &[1.0, 2.0], &[3.0, 4.0]);
        assert_eq!(c, [4.0, 6.0]);
    }

    #[test]
    fn triad_is_b_plus_alpha_c() {
        let mut a = [0.0; 2];
        stream::triad(&mut a, &[1.0, 2.0], &[3.0, 4.0], 0.5);
        assert_eq!(a, [2.5, 4.0]);
    }

    #[test]
    fn dot_sums_products() {
        assert_eq!(stream::dot(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), 32.0);
    }

    #[test]
    fn dot_of_empty_slices_is_zero() {
        assert_eq!(stream::dot(&[], &[]), 0.0);
    }

    #[test]
    fn daxpy_accumulates_into_y() {
        let mut y = [1.0, 1.0];
        basic::daxpy(&mut y, &[1.0, 2.0], 2.0);
        assert_eq!(y, [3.0, 5.0]);
    }

    #[test]
    fn init3_writes_the_same_value_to_three_outputs() {
        let (mut out1, mut out2, mut out3) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        basic::init3(&mut out1, &mut out2, &mut out3, &[1.0, 2.0], &[3.0, -5.0]);
        assert_eq!(out1, [-4.0, 3.0]);
        assert_eq!(out2, out1);
        assert_eq!(out3, out1);
    }

    #[test]
    fn muladdsub_multiplies_adds_and_subtracts() {
        let (mut out1, mut out2, mut out3) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        basic::muladdsub(&mut out1, &mut out2, &mut out3, &[2.0, 3.0], &[4.0, -1.0]);
        assert_eq!(out1, [8.0, -3.0]);
        assert_eq!(out2, [6.0, 2.0]);
        assert_eq!(out3, [-2.0, 4.0]);
    }

    #[test]
    fn if_quad_finds_real_roots_and_zeroes_complex_ones() {
        // x² - 3x + 2 = (x-1)(x-2); x² + 2x + 1 = (x+1)²; x² + 1 has no real root.
        let (mut x1, mut x2) = ([9.0; 3], [9.0; 3]);
        basic::if_quad(&[1.0, 1.0, 1.0], &[-3.0, 2.0, 0.0], &[2.0, 1.0, 1.0], &mut x1, &mut x2);
        assert_eq!(x1, [1.0, -1.0, 0.0]);
        assert_eq!(x2, [2.0, -1.0, 0.0]);
    }

    #[test]
    fn init_view1d_is_one_based_multiple_of_v() {
        let mut a = [0.0; 3];
        basic::init_view1d(&mut a, 0.5);
        assert_eq!(a, [0.5, 1.0, 1.5]);
    }

    #[test]
    fn init_view1d_offset_matches_init_view1d() {
        let v = 0.00000123;
        let (mut plain, mut offset) = ([0.0; 5], [0.0; 5]);
        basic::init_view1d(&mut plain, v);
        basic::init_view1d_offset(&mut offset, v);
        assert_eq!(offset, plain);
    }

    #[test]
    fn eos_of_ones_sums_its_nine_terms() {
        let mut x = [0.0; 2];
        let ones = [1.0; 9];
        lcals::eos(&mut x, &ones, &ones, &ones, 1.0, 1.0, 1.0);
        assert_eq!(x, [9.0, 9.0]);
    }

    #[test]
    fn eos_reads_u_at_offsets_three_and_six() {
        // With q = r = 0 and t = 1 the formula reduces to u[i] + u[i+3] + u[i+6].
        let mut x = [0.0; 2];
        let u = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        lcals::eos(&mut x, &[0.0; 2], &[0.0; 2], &u, 0.0, 0.0, 1.0);
        assert_eq!(x, [9.0, 12.0]);
    }

    #[test]
    fn first_diff_is_forward_difference() {
        let mut x = [0.0; 3];
        lcals::first_diff(&mut x, &[1.0, 4.0, 9.0, 16.0]);
        assert_eq!(x, [3.0, 5.0, 7.0]);
    }

    #[test]
    fn hydro_1d_reads_z_at_offsets_ten_and_eleven() {
        let mut x = [0.0; 2];
        let z: Vec<f64> = (0..13).map(|k| k as f64).collect();
        lcals::hydro_1d(&mut x, &[1.0, 2.0], &z, 1.0, 1.0, 1.0);
        // x[i] = 1 + y[i] * (z[i+10] + z[i+11]) = 1 + y[i] * (2i + 21)
        assert_eq!(x, [22.0, 47.0]);
    }

    #[test]
    fn planckian_writes_ratio_and_planck_term() {
        let (mut y, mut w) = ([0.0; 2], [0.0; 2]);
        lcals::planckian(&[1.0, 2.0], &mut y, &[2.0, 6.0], &[2.0, 3.0], &mut w);
        assert_eq!(y, [1.0, 2.0]);
        let expected = [1.0 / (1.0f64.exp() - 1.0), 2.0 / (2.0f64.exp() - 1.0)];
        for (got, want) in w.iter().zip(expected) {
            assert!((got - want).abs() <= 1e-15 * want.abs(), "{got} != {want}");
        }
    }
}
