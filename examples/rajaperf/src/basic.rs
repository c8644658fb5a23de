//! RAJAPerf Basic kernels, `i` in `0..N` unless a kernel says otherwise.
//!
//! RAJAPerf's atomic kernels (DAXPY_ATOMIC, PI_ATOMIC) are written without atomics: in DAXPY_ATOMIC every
//! iteration owns its element, and PI_ATOMIC's single accumulator is a `+` reduction.

use rs2gpu::kernel;

/// DAXPY: `y[i] += a * x[i]`
#[kernel]
pub fn daxpy(y: &mut [f64], x: &[f64], a: f64) {
    for i in 0..y.len() {
        y[i] += a * x[i];
    }
}

/// INIT3: `out1[i] = out2[i] = out3[i] = -in1[i] - in2[i]`
#[kernel]
pub fn init3(out1: &mut [f64], out2: &mut [f64], out3: &mut [f64], in1: &[f64], in2: &[f64]) {
    for i in 0..out1.len() {
        let value = -in1[i] - in2[i];
        out1[i] = value;
        out2[i] = value;
        out3[i] = value;
    }
}

/// MULADDSUB: `out1[i] = in1[i] * in2[i]; out2[i] = in1[i] + in2[i]; out3[i] = in1[i] - in2[i]`
#[kernel]
pub fn muladdsub(out1: &mut [f64], out2: &mut [f64], out3: &mut [f64], in1: &[f64], in2: &[f64]) {
    for i in 0..out1.len() {
        out1[i] = in1[i] * in2[i];
        out2[i] = in1[i] + in2[i];
        out3[i] = in1[i] - in2[i];
    }
}

/// IF_QUAD: `s = b²-4ac`; if `s >= 0`, `x2 = (-b+√s)/(2a)`, `x1 = (-b-√s)/(2a)`, else `x1 = x2 = 0`.
#[kernel]
pub fn if_quad(a: &[f64], b: &[f64], c: &[f64], x1: &mut [f64], x2: &mut [f64]) {
    for i in 0..x1.len() {
        let mut s = b[i] * b[i] - 4.0 * a[i] * c[i];
        if s >= 0.0 {
            s = s.sqrt();
            x2[i] = (-b[i] + s) / (2.0 * a[i]);
            x1[i] = (-b[i] - s) / (2.0 * a[i]);
        } else {
            x2[i] = 0.0;
            x1[i] = 0.0;
        }
    }
}

/// INIT_VIEW1D: `a[i] = (i + 1) * v`
#[kernel]
pub fn init_view1d(a: &mut [f64], v: f64) {
    for i in 0..a.len() {
        a[i] = (i + 1) as f64 * v;
    }
}

/// INIT_VIEW1D_OFFSET: `a[i - 1] = i * v` for `i` in `1..=N`
#[kernel]
pub fn init_view1d_offset(a: &mut [f64], v: f64) {
    for i in 1..a.len() + 1 {
        a[i - 1] = i as f64 * v;
    }
}

/// Rows of ARRAY_OF_PTRS's input: RAJAPerf's largest `--array_of_ptrs_array_size`.
pub const ARRAY_OF_PTRS_SIZE: usize = 26;

/// ARRAY_OF_PTRS: `y[i] = x[0][i] + x[1][i] + ... + x[25][i]`, summed in that order from `0.0`.
///
/// RAJAPerf passes an array of 26 pointers into one allocation by value. A kernel parameter cannot be an
/// array of slices, so `x` is that allocation itself: 26 rows of `y.len()` elements, row `a` at `x[a * n..]`.
#[kernel]
pub fn array_of_ptrs(y: &mut [f64], x: &[f64]) {
    let n = y.len();
    for i in 0..n {
        let mut yi = 0.0;
        for a in 0..ARRAY_OF_PTRS_SIZE {
            yi += x[a * n + i];
        }
        y[i] = yi;
    }
}

/// COPY8: `y0[i] = x0[i]; ...; y7[i] = x7[i]`
#[kernel]
pub fn copy8(
    y0: &mut [f64],
    y1: &mut [f64],
    y2: &mut [f64],
    y3: &mut [f64],
    y4: &mut [f64],
    y5: &mut [f64],
    y6: &mut [f64],
    y7: &mut [f64],
    x0: &[f64],
    x1: &[f64],
    x2: &[f64],
    x3: &[f64],
    x4: &[f64],
    x5: &[f64],
    x6: &[f64],
    x7: &[f64],
) {
    for i in 0..y0.len() {
        y0[i] = x0[i];
        y1[i] = x1[i];
        y2[i] = x2[i];
        y3[i] = x3[i];
        y4[i] = x4[i];
        y5[i] = x5[i];
        y6[i] = x6[i];
        y7[i] = x7[i];
    }
}

/// DAXPY_ATOMIC: `y[i] += a * x[i]`
///
/// RAJAPerf adds with `atomicAdd`, but no two iterations touch the same `y[i]`: each iteration owns its
/// element, so the plain `+=` is race-free and needs no atomics.
#[kernel]
pub fn daxpy_atomic(y: &mut [f64], x: &[f64], a: f64) {
    for i in 0..y.len() {
        y[i] += a * x[i];
    }
}

/// INDEXLIST: `if x[i] < 0.0 { list[count] = i; count += 1; }`; returns `count`.
///
/// A stream compaction: the position of each entry is the number of negative values before it, so the
/// loop carries `count` from one iteration to the next.
///
/// Not a `#[kernel]`: every iteration depends on all earlier ones (a scan), which a parallel loop cannot
/// express; rs2gpu rejects it with RG0104. It stays here as plain Rust, the CPU reference.
pub fn indexlist(x: &[f64], list: &mut [i32]) -> usize {
    let mut count = 0;
    for i in 0..x.len() {
        if x[i] < 0.0 {
            list[count] = i as i32;
            count += 1;
        }
    }
    count
}

/// INDEXLIST_3LOOP: INDEXLIST as three loops; returns the length of the list.
///
/// 1. `counts[i] = 1` if `x[i] < 0.0`, else `0`, for `i` in `0..N`;
/// 2. an exclusive prefix sum over `counts[0..=N]`, which leaves the list length in `counts[N]`;
/// 3. `list[counts[i]] = i` wherever `counts[i] != counts[i + 1]`.
///
/// `counts` needs `x.len() + 1` elements. The second loop is a scan: each iteration needs the running sum
/// of all earlier ones.
///
/// Not a `#[kernel]`, for the same reason as `indexlist`: the scan loop carries its running sum.
pub fn indexlist_3loop(x: &[f64], counts: &mut [usize], list: &mut [i32]) -> usize {
    let n = x.len();
    for i in 0..n {
        counts[i] = if x[i] < 0.0 { 1 } else { 0 };
    }
    let mut count = 0;
    for i in 0..n + 1 {
        let c = counts[i];
        counts[i] = count;
        count += c;
    }
    for i in 0..n {
        if counts[i] != counts[i + 1] {
            list[counts[i]] = i as i32;
        }
    }
    counts[n]
}

/// MAT_MAT_SHARED: `C = A * B` for row-major `n`×`n` matrices:
/// `c[row * n + col] = Σ_k a[row * n + k] * b[k * n + col]`.
///
/// RAJAPerf tiles the product through 16×16 shared-memory blocks; the sum over `k` still runs in order
/// from `0.0`, which the inner loop keeps.
#[kernel]
pub fn mat_mat_shared(c: &mut [f64], a: &[f64], b: &[f64], n: usize) {
    for row in 0..n {
        for col in 0..n {
            let mut sum = 0.0;
            for k in 0..n {
                sum += a[row * n + k] * b[k * n + col];
            }
            c[row * n + col] = sum;
        }
    }
}

/// MULTI_REDUCE: `values[bins[i]] += data[i]`.
///
/// Iterations with the same bin add into one element, so on the GPU their additions are atomics, applied in
/// no fixed order: each bin's sum may differ from this loop's by rounding.
#[kernel]
pub fn multi_reduce(values: &mut [f64], data: &[f64], bins: &[usize]) {
    for i in 0..data.len() {
        values[bins[i]] += data[i];
    }
}

/// NESTED_INIT: `array[i + ni * (j + nj * k)] = 0.00000001 * i * j * k` over the `nk`×`nj`×`ni` box.
#[kernel]
pub fn nested_init(array: &mut [f64], ni: usize, nj: usize, nk: usize) {
    for k in 0..nk {
        for j in 0..nj {
            for i in 0..ni {
                array[i + ni * (j + nj * k)] = 0.00000001 * i as f64 * j as f64 * k as f64;
            }
        }
    }
}

/// PI_ATOMIC: `x = (i + 0.5) * dx; pi += dx / (1.0 + x * x)`; returns `4.0 * pi`.
///
/// RAJAPerf adds into one address with `atomicAdd`; the accumulator is a `+` reduction.
#[kernel]
pub fn pi_atomic(dx: f64, n: usize) -> f64 {
    let mut pi = 0.0;
    for i in 0..n {
        let x = (i as f64 + 0.5) * dx;
        pi += dx / (1.0 + x * x);
    }
    4.0 * pi
}

/// PI_REDUCE: `x = (i + 0.5) * dx; pi += dx / (1.0 + x * x)`; returns `4.0 * pi`.
#[kernel]
pub fn pi_reduce(dx: f64, n: usize) -> f64 {
    let mut pi = 0.0;
    for i in 0..n {
        let x = (i as f64 + 0.5) * dx;
        pi += dx / (1.0 + x * x);
    }
    4.0 * pi
}

/// REDUCE3_INT: the sum, minimum and maximum of `vec`, from `0`, `i32::MAX` and `i32::MIN`.
#[kernel]
pub fn reduce3_int(vec: &[i32]) -> (i32, i32, i32) {
    let mut vsum = 0;
    let mut vmin = i32::MAX;
    let mut vmax = i32::MIN;
    for i in 0..vec.len() {
        vsum += vec[i];
        vmin = vmin.min(vec[i]);
        vmax = vmax.max(vec[i]);
    }
    (vsum, vmin, vmax)
}

/// REDUCE_STRUCT: sum, minimum and maximum of the points' `x` and of their `y` coordinates, returned as
/// `(xsum, xmin, xmax, ysum, ymin, ymax)`. The sums start at `0.0`, the minima at `f64::MAX` and the maxima
/// at `f64::MIN`.
#[kernel]
pub fn reduce_struct(x: &[f64], y: &[f64]) -> (f64, f64, f64, f64, f64, f64) {
    let mut xsum = 0.0;
    let mut xmin = f64::MAX;
    let mut xmax = f64::MIN;
    let mut ysum = 0.0;
    let mut ymin = f64::MAX;
    let mut ymax = f64::MIN;
    for i in 0..x.len() {
        xsum += x[i];
        xmin = xmin.min(x[i]);
        xmax = xmax.max(x[i]);
        ysum += y[i];
        ymin = ymin.min(y[i]);
        ymax = ymax.max(y[i]);
    }
    (xsum, xmin, xmax, ysum, ymin, ymax)
}

/// The integrand of TRAP_INT: `1 / sqrt((x - xp)² + (y - yp)²)`.
fn trap_int_func(x: f64, y: f64, xp: f64, yp: f64) -> f64 {
    let mut denom = (x - xp) * (x - xp) + (y - yp) * (y - yp);
    denom = 1.0 / denom.sqrt();
    denom
}

/// TRAP_INT: `x = x0 + i * h; sumx += trap_int_func(x, y, xp, yp)`; returns `sumx * h`.
#[kernel]
pub fn trap_int(x0: f64, xp: f64, y: f64, yp: f64, h: f64, n: usize) -> f64 {
    let mut sumx = 0.0;
    for i in 0..n {
        let x = x0 + i as f64 * h;
        sumx += trap_int_func(x, y, xp, yp);
    }
    sumx * h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_of_ptrs_sums_the_26_rows() {
        // Row a holds (a + 1) * (i + 1): y[i] = (i + 1) * (1 + 2 + ... + 26) = (i + 1) * 351.
        let n = 2;
        let x: Vec<f64> = (0..ARRAY_OF_PTRS_SIZE * n).map(|k| ((k / n + 1) * (k % n + 1)) as f64).collect();
        let mut y = [0.0; 2];
        array_of_ptrs(&mut y, &x);
        assert_eq!(y, [351.0, 702.0]);
    }

    #[test]
    fn copy8_copies_each_input_to_its_output() {
        let x: Vec<[f64; 2]> = (0..8).map(|k| [k as f64, -0.5 * k as f64]).collect();
        let mut y = [[9.0; 2]; 8];
        let [y0, y1, y2, y3, y4, y5, y6, y7] = &mut y;
        copy8(y0, y1, y2, y3, y4, y5, y6, y7, &x[0], &x[1], &x[2], &x[3], &x[4], &x[5], &x[6], &x[7]);
        assert_eq!(y.to_vec(), x);
    }

    #[test]
    fn daxpy_atomic_accumulates_like_daxpy() {
        let mut y = [1.0, 1.0];
        daxpy_atomic(&mut y, &[1.0, 2.0], 2.0);
        assert_eq!(y, [3.0, 5.0]);
        let mut plain = [0.25, -1.5, 3.0];
        let mut atomic = plain;
        let x = [0.1, 0.2, 0.3];
        daxpy(&mut plain, &x, 0.7);
        daxpy_atomic(&mut atomic, &x, 0.7);
        assert_eq!(atomic, plain);
    }

    const SIGNS: [f64; 5] = [1.0, -2.0, 0.0, -0.5, -3.0];

    #[test]
    fn indexlist_lists_the_negative_entries_in_order() {
        let mut list = [-1; 5];
        assert_eq!(indexlist(&SIGNS, &mut list), 3);
        assert_eq!(list, [1, 3, 4, -1, -1]);
    }

    #[test]
    fn indexlist_of_no_negatives_is_empty() {
        let mut list = [-1; 2];
        assert_eq!(indexlist(&[0.0, 1.0], &mut list), 0);
        assert_eq!(list, [-1, -1]);
    }

    #[test]
    fn indexlist_3loop_scans_the_flags_and_scatters() {
        // Flags 0 1 0 1 1; their exclusive prefix sums 0 0 1 1 2 and the total 3. counts[5] is scratch.
        let mut counts = [7; 6];
        let mut list = [-1; 5];
        assert_eq!(indexlist_3loop(&SIGNS, &mut counts, &mut list), 3);
        assert_eq!(counts, [0, 0, 1, 1, 2, 3]);
        assert_eq!(list, [1, 3, 4, -1, -1]);
    }

    #[test]
    fn mat_mat_shared_multiplies_row_major_matrices() {
        let mut c = [0.0; 4];
        mat_mat_shared(&mut c, &[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], 2);
        assert_eq!(c, [19.0, 22.0, 43.0, 50.0]);
    }

    #[test]
    fn mat_mat_shared_of_ones_is_n_everywhere() {
        // RAJAPerf's data: A = B = 1, so every entry of C is N.
        let mut c = [0.0; 9];
        mat_mat_shared(&mut c, &[1.0; 9], &[1.0; 9], 3);
        assert_eq!(c, [3.0; 9]);
    }

    #[test]
    fn multi_reduce_adds_each_value_to_its_bin() {
        let mut values = [0.5, 0.0, 0.0];
        multi_reduce(&mut values, &[1.0, 2.0, 3.0, 4.0, 5.0], &[0, 2, 0, 1, 2]);
        assert_eq!(values, [4.5, 4.0, 7.0]);
    }

    #[test]
    fn multi_reduce_leaves_bins_without_data_alone() {
        let mut values = [-1.0, 2.5, 0.0, 7.0];
        multi_reduce(&mut values, &[1.0, 1.0, 1.0], &[3, 3, 3]);
        assert_eq!(values, [-1.0, 2.5, 0.0, 10.0]);
    }

    #[test]
    fn nested_init_writes_the_product_of_the_indices() {
        // ni = 2, nj = 3, nk = 2: only (i, j, k) = (1, 1, 1) and (1, 2, 1) have no zero index.
        let mut array = [9.0; 12];
        nested_init(&mut array, 2, 3, 2);
        let mut expected = [0.0; 12];
        expected[1 + 2 * (1 + 3)] = 0.00000001;
        expected[1 + 2 * (2 + 3)] = 0.00000001 * 2.0;
        assert_eq!(array, expected);
    }

    #[test]
    fn pi_reduce_of_one_midpoint() {
        // x = 0.5: 4 * 1 / (1 + 0.25) = 3.2
        assert_eq!(pi_reduce(1.0, 1), 3.2);
    }

    #[test]
    fn pi_reduce_approaches_pi() {
        let n = 1000;
        let pi = pi_reduce(1.0 / n as f64, n);
        assert!((pi - std::f64::consts::PI).abs() < 1e-6, "{pi}");
    }

    #[test]
    fn pi_atomic_matches_pi_reduce() {
        assert_eq!(pi_atomic(1.0, 1), 3.2);
        assert_eq!(pi_atomic(0.001, 1000), pi_reduce(0.001, 1000));
    }

    #[test]
    fn reduce3_int_finds_sum_min_and_max() {
        assert_eq!(reduce3_int(&[1, -1, -58, 1, 19, -1]), (-39, -58, 19));
    }

    #[test]
    fn reduce3_int_of_nothing_is_the_initial_values() {
        assert_eq!(reduce3_int(&[]), (0, i32::MAX, i32::MIN));
    }

    #[test]
    fn reduce_struct_reduces_both_coordinates() {
        // RAJAPerf's points for N = 4: x[i] = i * 100 / N, y[i] = i * 50 / N.
        let x = [0.0, 25.0, 50.0, 75.0];
        let y = [0.0, 12.5, 25.0, 37.5];
        assert_eq!(reduce_struct(&x, &y), (150.0, 0.0, 75.0, 75.0, 0.0, 37.5));
    }

    #[test]
    fn reduce_struct_of_nothing_is_the_initial_values() {
        assert_eq!(reduce_struct(&[], &[]), (0.0, f64::MAX, f64::MIN, 0.0, f64::MAX, f64::MIN));
    }

    #[test]
    fn trap_int_func_is_the_inverse_distance() {
        assert_eq!(trap_int_func(0.0, 0.0, -3.0, 4.0), 0.2);
    }

    #[test]
    fn trap_int_sums_the_integrand_and_scales_by_h() {
        // x = 0 and x = 1 from (xp, yp) = (-3, 0): distances 3 and 4.
        assert_eq!(trap_int(0.0, -3.0, 0.0, 0.0, 1.0, 2), 1.0 / 3.0 + 0.25);
        // h = 2: x = 1 and x = 3 from (-2, 0), y = 4: distances 5 and sqrt(41).
        assert_eq!(trap_int(1.0, -2.0, 4.0, 0.0, 2.0, 2), (0.2 + 1.0 / 41.0f64.sqrt()) * 2.0);
    }
}
