//! Small numeric kernels written the way Rust programmers write them, as rs2gpu kernels.
//!
//! Each `#[kernel]` function is plain safe Rust built by rustc (the CPU reference). Unlike the RAJAPerf
//! crate, whose kernels are index loops by design, these use what Rust code usually holds: iterators,
//! `match`, `while` and `loop` with early exits, tuples, shadowing, closures, `impl` blocks on `#[repr(C)]`
//! structs and `const fn` helpers. Some of them rs2gpu rejects today: those are kept as plain functions,
//! without `#[kernel]`, so that the crate translates as a whole; docs/corpus.md lists them, with the
//! diagnostic and what to write instead.

// Index loops over several slices are how many people write these kernels (and the parallel loops of the
// kernel language); clippy would turn each into a chain of zips.
#![allow(clippy::needless_range_loop, clippy::manual_memcpy)]

pub mod const_fn;
pub mod control_flow;
pub mod integers;
pub mod iterators;
pub mod nests;
pub mod reductions;
pub mod structs;
pub mod tuples;

#[cfg(test)]
mod tests {
    use super::structs::{Aabb, Complex, Particle, Rgb, Vec3};
    use super::{const_fn, control_flow, integers, iterators, nests, reductions, structs, tuples};

    // ---------------------------------------------------------------- iterators

    #[test]
    fn saxpy_zip_accumulates_a_times_x() {
        let mut y = [1.0f32, 2.0];
        iterators::saxpy_zip(&mut y, &[3.0, -1.0], 2.0);
        assert_eq!(y, [7.0, 0.0]);
    }

    #[test]
    fn ramp_enumerate_multiplies_by_the_index() {
        let mut out = [9.0; 3];
        iterators::ramp_enumerate(&mut out, &[5.0, 5.0, 5.0]);
        assert_eq!(out, [0.0, 5.0, 10.0]);
    }

    #[test]
    fn dot_zip_stops_at_the_shorter_slice() {
        assert_eq!(iterators::dot_zip(&[1.0, 2.0, 3.0], &[4.0, 5.0]), 14.0);
    }

    #[test]
    fn clamp_copied_keeps_values_inside_the_bounds() {
        let mut out = [0.0f32; 3];
        iterators::clamp_copied(&mut out, &[-2.0, 0.5, 3.0], -1.0, 1.0);
        assert_eq!(out, [-1.0, 0.5, 1.0]);
    }

    #[test]
    fn max_abs_pattern_finds_the_largest_magnitude() {
        assert_eq!(iterators::max_abs_pattern(&[1.0, -4.0, 3.0]), 4.0);
    }

    #[test]
    fn sum_squares_map_sums_squares() {
        assert_eq!(iterators::sum_squares_map(&[1.0, -2.0, 3.0]), 14.0);
    }

    #[test]
    fn reverse_zip_reverses() {
        let mut out = [0.0; 3];
        iterators::reverse_zip(&mut out, &[1.0, 2.0, 3.0]);
        assert_eq!(out, [3.0, 2.0, 1.0]);
    }

    #[test]
    fn double_even_step_by_leaves_odd_positions() {
        let mut out = [0.0; 4];
        iterators::double_even_step_by(&mut out, &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(out, [2.0, 0.0, 6.0, 0.0]);
    }

    // ---------------------------------------------------------------- control flow

    #[test]
    fn sign_match_gives_minus_one_zero_or_one() {
        let mut out = [7; 4];
        control_flow::sign_match(&mut out, &[i32::MIN, -3, 0, 12]);
        assert_eq!(out, [-1, -1, 0, 1]);
    }

    #[test]
    fn first_above_finds_the_first_column_or_minus_one() {
        let mut out = [0; 2];
        control_flow::first_above(&mut out, &[0.0, 2.0, 3.0, 0.0, 0.0, 0.0], 3, 1.0);
        assert_eq!(out, [1, -1]);
    }

    #[test]
    fn positive_row_sums_skip_the_rest() {
        let mut out = [0.0; 2];
        control_flow::positive_row_sums(&mut out, &[1.0, -5.0, 2.0, -1.0, 0.0, 4.0], 3);
        assert_eq!(out, [3.0, 4.0]);
    }

    #[test]
    fn newton_sqrt_converges() {
        let mut out = [0.0; 3];
        control_flow::newton_sqrt(&mut out, &[4.0, -9.0, 0.25]);
        assert_eq!(out, [2.0, 3.0, 0.5]);
    }

    #[test]
    fn collatz_steps_counts_to_one() {
        let mut out = [0; 3];
        control_flow::collatz_steps(&mut out, &[1, 6, 27]);
        assert_eq!(out, [0, 8, 111]);
    }

    #[test]
    fn sqrt_non_negative_leaves_negative_positions() {
        let mut out = [-1.0; 2];
        control_flow::sqrt_non_negative(&mut out, &[9.0, -4.0]);
        assert_eq!(out, [3.0, -1.0]);
    }

    #[test]
    fn rows_with_repeat_flags_rows_holding_a_value_twice() {
        let mut out = [9; 2];
        control_flow::rows_with_repeat(&mut out, &[1, 2, 1, 4, 5, 6], 3);
        assert_eq!(out, [1, 0]);
    }

    #[test]
    fn next_or_zero_reads_past_the_end_as_zero() {
        let mut out = [9.0; 2];
        control_flow::next_or_zero(&mut out, &[1.0, 2.0]);
        assert_eq!(out, [2.0, 0.0]);
    }

    // ---------------------------------------------------------------- structs

    fn rgb(r: u8, g: u8, b: u8) -> Rgb {
        Rgb { r, g, b }
    }

    #[test]
    fn gray_from_rgb_weights_the_channels() {
        let mut out = [0.0f32; 2];
        structs::gray_from_rgb(&mut out, &[rgb(0, 0, 0), rgb(0, 100, 0)]);
        assert_eq!(out, [0.0, 0.587 * 100.0]);
    }

    #[test]
    fn gray_from_rgb_method_matches_the_helper() {
        let px = [rgb(10, 200, 30), rgb(255, 255, 255)];
        let (mut a, mut b) = ([0.0f32; 2], [0.0f32; 2]);
        structs::gray_from_rgb(&mut a, &px);
        structs::gray_from_rgb_method(&mut b, &px);
        assert_eq!(a, b);
    }

    #[test]
    fn invert_rgb_inverts_each_channel() {
        let mut px = [rgb(0, 100, 255)];
        structs::invert_rgb(&mut px);
        assert_eq!((px[0].r, px[0].g, px[0].b), (255, 155, 0));
    }

    #[test]
    fn advance_particles_moves_by_velocity_times_dt() {
        let mut ps = [Particle { x: 1.0, y: 2.0, vx: 4.0, vy: -2.0 }];
        structs::advance_particles(&mut ps, 0.5);
        assert_eq!((ps[0].x, ps[0].y), (3.0, 1.0));
    }

    #[test]
    fn clip_to_box_clamps_each_coordinate() {
        let b = Aabb { lo: Vec3 { x: 0.0, y: 0.0, z: 0.0 }, hi: Vec3 { x: 1.0, y: 1.0, z: 1.0 } };
        let mut ps = [Vec3 { x: -1.0, y: 0.5, z: 2.0 }];
        structs::clip_to_box(&mut ps, &b);
        assert_eq!((ps[0].x, ps[0].y, ps[0].z), (0.0, 0.5, 1.0));
    }

    #[test]
    fn squared_lengths_method_is_the_dot_product_with_itself() {
        let mut out = [0.0];
        structs::squared_lengths_method(&mut out, &[Vec3 { x: 1.0, y: 2.0, z: 2.0 }]);
        assert_eq!(out, [9.0]);
    }

    #[test]
    fn complex_products_multiply() {
        let mut out = [Complex { re: 0.0, im: 0.0 }];
        structs::complex_products(&mut out, &[Complex { re: 1.0, im: 2.0 }], &[Complex { re: 3.0, im: -1.0 }]);
        assert_eq!((out[0].re, out[0].im), (5.0, 5.0));
    }

    #[test]
    fn conjugates_new_negates_the_imaginary_part() {
        let mut out = [Complex { re: 0.0, im: 0.0 }];
        structs::conjugates_new(&mut out, &[Complex { re: 1.0, im: 2.0 }]);
        assert_eq!((out[0].re, out[0].im), (1.0, -2.0));
    }

    // ---------------------------------------------------------------- tuples, shadowing, closures

    #[test]
    fn order_pairs_puts_the_smaller_first() {
        let (mut lo, mut hi) = ([3.0, 1.0], [2.0, 5.0]);
        tuples::order_pairs(&mut lo, &mut hi);
        assert_eq!((lo, hi), ([2.0, 1.0], [3.0, 5.0]));
    }

    #[test]
    fn order_pairs_destructured_matches_order_pairs() {
        let (mut lo, mut hi) = ([3.0, 1.0], [2.0, 5.0]);
        tuples::order_pairs_destructured(&mut lo, &mut hi);
        assert_eq!((lo, hi), ([2.0, 1.0], [3.0, 5.0]));
    }

    #[test]
    fn swap_destructured_swaps() {
        let (mut a, mut b) = ([1, 2], [3, 4]);
        tuples::swap_destructured(&mut a, &mut b);
        assert_eq!((a, b), ([3, 4], [1, 2]));
    }

    #[test]
    fn mean_and_max_of_three_values() {
        assert_eq!(tuples::mean_and_max(&[1.0, 5.0, 3.0]), (3.0, 5.0));
    }

    #[test]
    fn normalize_shadowed_maps_and_clamps() {
        let mut out = [0.0; 3];
        tuples::normalize_shadowed(&mut out, &[1.0, 2.0, 9.0], 0.0, 4.0);
        assert_eq!(out, [0.25, 0.5, 1.0]);
    }

    #[test]
    fn swap_through_tuple_swaps() {
        let (mut a, mut b) = ([1, 2], [3, 4]);
        tuples::swap_through_tuple(&mut a, &mut b);
        assert_eq!((a, b), ([3, 4], [1, 2]));
    }

    #[test]
    fn affine_closure_applies_a_x_plus_b() {
        let mut out = [0.0; 2];
        tuples::affine_closure(&mut out, &[1.0, -2.0], 3.0, 0.5);
        assert_eq!(out, [3.5, -5.5]);
    }

    #[test]
    fn harmonic_row_sums_weight_column_k_by_one_over_k_plus_one() {
        let mut out = [0.0];
        tuples::harmonic_row_sums(&mut out, &[1.0, 2.0, 4.0], 3);
        assert_eq!(out, [1.0 + 1.0 + 4.0 / 3.0]);
    }

    // ---------------------------------------------------------------- const fn

    #[test]
    fn cube_all_cubes() {
        let mut out = [0.0; 2];
        const_fn::cube_all(&mut out, &[2.0, -3.0]);
        assert_eq!(out, [8.0, -27.0]);
    }

    #[test]
    fn blend_interpolates() {
        let mut out = [0.0];
        const_fn::blend(&mut out, &[1.0], &[3.0], 0.25);
        assert_eq!(out, [1.5]);
    }

    #[test]
    fn flag_powers_of_two_flags_them_and_not_zero() {
        let mut out = [9; 4];
        const_fn::flag_powers_of_two(&mut out, &[0, 1, 6, 1 << 31]);
        assert_eq!(out, [0, 1, 0, 1]);
    }

    #[test]
    fn hash_keys_mixes() {
        let mut out = [0; 2];
        const_fn::hash_keys(&mut out, &[0, 1]);
        assert_eq!(out, [0, 0x9E37_79B1 ^ 0x9E37]);
    }

    #[test]
    fn transpose_at_transposes() {
        let mut out = [0.0f32; 6];
        const_fn::transpose_at(&mut out, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3);
        assert_eq!(out, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    }

    #[test]
    fn box_filter_averages_five_taps_inside() {
        assert_eq!(const_fn::TAPS, 5);
        let mut out = [0.0; 6];
        const_fn::box_filter(&mut out, &[0.0, 5.0, 10.0, 5.0, 0.0, 10.0]);
        assert_eq!(out, [0.0, 0.0, 4.0, 6.0, 0.0, 0.0]);
    }

    // ---------------------------------------------------------------- integers

    #[test]
    fn bin_index_clamps_into_the_end_bins() {
        let mut out = [9; 4];
        integers::bin_index(&mut out, &[-5.0, 0.5, 2.5, 99.0], 0.0, 1.0, 4);
        assert_eq!(out, [0, 0, 2, 3]);
    }

    #[test]
    fn gcd_pairs_by_euclid() {
        let mut out = [0; 3];
        integers::gcd_pairs(&mut out, &[12, 7, 0], &[18, 5, 4]);
        assert_eq!(out, [6, 1, 4]);
    }

    #[test]
    fn gcd_pairs_plain_by_euclid() {
        let mut out = [0; 3];
        integers::gcd_pairs_plain(&mut out, &[12, 7, 0], &[18, 5, 4]);
        assert_eq!(out, [6, 1, 4]);
    }

    #[test]
    fn parity_of_set_bits() {
        let mut out = [9; 3];
        integers::parity(&mut out, &[0, 0b1011, u64::MAX]);
        assert_eq!(out, [0, 1, 0]);
    }

    #[test]
    fn fixed_mul_q16_multiplies_fixed_point() {
        let mut out = [0; 2];
        integers::fixed_mul_q16(&mut out, &[3 << 15, -(1 << 16)], &[1 << 17, 5 << 16]);
        assert_eq!(out, [3 << 16, -(5 << 16)]);
    }

    #[test]
    fn brighten_saturating_stops_at_255() {
        let mut px = [10, 250];
        integers::brighten_saturating(&mut px, 10);
        assert_eq!(px, [20, 255]);
    }

    #[test]
    fn rotate_mix_rotates_then_xors() {
        let mut out = [0; 1];
        integers::rotate_mix(&mut out, &[0x8000_0001]);
        assert_eq!(out, [0b11_0000 ^ 0x5bd1_e995]);
    }

    #[test]
    fn abs_differences_never_overflow() {
        let mut out = [0; 2];
        integers::abs_differences(&mut out, &[i32::MIN, 3], &[i32::MAX, 5]);
        assert_eq!(out, [u32::MAX, 2]);
    }

    #[test]
    fn products_or_max_saturates_on_overflow() {
        let mut out = [0; 2];
        integers::products_or_max(&mut out, &[3, i64::MAX], &[-4, 2]);
        assert_eq!(out, [-12, i64::MAX]);
    }

    #[test]
    fn wrapping_deltas_wrap_below_zero() {
        let mut out = [0; 3];
        integers::wrapping_deltas(&mut out, &[5, 3, 10]);
        assert_eq!(out, [5, u16::MAX - 1, 7]);
    }

    // ---------------------------------------------------------------- 2-D nests

    #[test]
    fn scale_rows_scales_each_row() {
        let mut m = [1.0, 2.0, 3.0, 4.0];
        nests::scale_rows(&mut m, &[2.0, -1.0], 2);
        assert_eq!(m, [2.0, 4.0, -3.0, -4.0]);
    }

    #[test]
    fn jacobi_5pt_averages_the_four_neighbours() {
        let u: Vec<f64> = (0..9).map(|k| k as f64).collect();
        let mut out = [0.0; 9];
        nests::jacobi_5pt(&mut out, &u, 3, 3);
        assert_eq!(out, [0.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn transpose_transposes() {
        let mut out = [0.0f32; 6];
        nests::transpose(&mut out, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3, 2);
        assert_eq!(out, [1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    }

    #[test]
    fn matvec_multiplies() {
        let mut y = [0.0; 2];
        nests::matvec(&mut y, &[1.0, 2.0, 3.0, 4.0], &[1.0, -1.0]);
        assert_eq!(y, [-1.0, -1.0]);
    }

    #[test]
    fn box_blur_3x3_averages_the_neighbours_inside_the_image() {
        let mut out = [0.0f32; 4];
        nests::box_blur_3x3(&mut out, &[1.0, 2.0, 3.0, 6.0], 2, 2);
        assert_eq!(out, [3.0; 4]);
    }

    #[test]
    fn eliminate_below_subtracts_the_pivot_row() {
        let mut m = [1.0, 2.0, 3.0, 4.0];
        nests::eliminate_below(&mut m, &[0.0, 3.0], 2, 2, 0);
        assert_eq!(m, [1.0, 2.0, 0.0, -2.0]);
    }

    #[test]
    fn normalize_rows_chunks_divides_by_the_largest_magnitude() {
        let mut m = [1.0, -4.0, 2.0, 1.0];
        nests::normalize_rows_chunks(&mut m, 2);
        assert_eq!(m, [0.25, -1.0, 1.0, 0.5]);
    }

    // ---------------------------------------------------------------- reductions

    #[test]
    fn sum_abs_is_the_l1_norm() {
        assert_eq!(reductions::sum_abs(&[1.0, -2.0, 3.5]), 6.5);
    }

    #[test]
    fn l2_norm_of_a_3_4_vector_is_5() {
        assert_eq!(reductions::l2_norm(&[3.0, -4.0]), 5.0);
    }

    #[test]
    fn argmin_gives_the_first_smallest() {
        assert_eq!(reductions::argmin(&[3.0, -1.0, 2.0, -1.0]), (-1.0, 1));
    }

    #[test]
    fn count_in_range_is_half_open() {
        assert_eq!(reductions::count_in_range(&[0.0, 0.5, 1.0, -1.0], 0.0, 1.0), 2);
    }

    #[test]
    fn xor_checksum_cancels_pairs() {
        assert_eq!(reductions::xor_checksum(&[5, 9, 5]), 9);
    }

    #[test]
    fn all_finite_spots_an_infinity() {
        assert!(reductions::all_finite(&[1.0, -2.0]));
        assert!(!reductions::all_finite(&[1.0, f32::INFINITY]));
    }

    #[test]
    fn int_range_gives_min_and_max() {
        assert_eq!(reductions::int_range(&[4, -7, 12]), (-7, 12));
    }

    #[test]
    fn variance_two_pass_of_a_constant_is_zero() {
        assert_eq!(reductions::variance_two_pass(&[2.0, 2.0]), 0.0);
        assert_eq!(reductions::variance_two_pass(&[1.0, 3.0]), 1.0);
    }

    #[test]
    fn product_iter_multiplies() {
        assert_eq!(reductions::product_iter(&[2.0, -3.0, 0.5]), -3.0);
    }

    #[test]
    fn max_fold_finds_the_largest() {
        assert_eq!(reductions::max_fold(&[2.0, -3.0, 7.5]), 7.5);
    }
}
