//! RAJAPerf Lcals kernels, `i` in `0..N` unless a kernel says otherwise, N the output length.
//! Stencil inputs are longer than the output; each kernel says by how much.

use rs2gpu::kernel;

/// EOS: `x[i] = u[i] + r*(z[i] + r*y[i]) + t*(u[i+3] + r*(u[i+2] + r*u[i+1]) + t*(u[i+6] + q*(u[i+5] + q*u[i+4])))`
///
/// `u` is read at `i..=i+6`, so it needs at least `x.len() + 6` elements (RAJAPerf allocates `N + 7`).
#[kernel]
pub fn eos(x: &mut [f64], y: &[f64], z: &[f64], u: &[f64], q: f64, r: f64, t: f64) {
    for i in 0..x.len() {
        x[i] = u[i]
            + r * (z[i] + r * y[i])
            + t * (u[i + 3] + r * (u[i + 2] + r * u[i + 1]) + t * (u[i + 6] + q * (u[i + 5] + q * u[i + 4])));
    }
}

/// FIRST_DIFF: `x[i] = y[i + 1] - y[i]`; `y` needs at least `x.len() + 1` elements.
#[kernel]
pub fn first_diff(x: &mut [f64], y: &[f64]) {
    for i in 0..x.len() {
        x[i] = y[i + 1] - y[i];
    }
}

/// HYDRO_1D: `x[i] = q + y[i] * (r * z[i + 10] + t * z[i + 11])`; `z` needs at least `x.len() + 11` elements
/// (RAJAPerf allocates `N + 12`).
#[kernel]
pub fn hydro_1d(x: &mut [f64], y: &[f64], z: &[f64], q: f64, r: f64, t: f64) {
    for i in 0..x.len() {
        x[i] = q + y[i] * (r * z[i + 10] + t * z[i + 11]);
    }
}

/// PLANCKIAN: `y[i] = u[i] / v[i]; w[i] = x[i] / (exp(y[i]) - 1.0)`; `y` and `w` are the outputs.
#[kernel]
pub fn planckian(x: &[f64], y: &mut [f64], u: &[f64], v: &[f64], w: &mut [f64]) {
    for i in 0..w.len() {
        y[i] = u[i] / v[i];
        w[i] = x[i] / (y[i].exp() - 1.0);
    }
}

/// DIFF_PREDICT: a ten-deep difference cascade through the planes `px[i + k * offset]`, `k` in `4..=13`.
///
/// `px` and `cx` hold 14 planes of `offset` elements each (RAJAPerf's `offset` is N). Each iteration reads
/// and writes only its own column `i` of the planes.
#[kernel]
pub fn diff_predict(px: &mut [f64], cx: &[f64], offset: usize) {
    for i in 0..offset {
        let mut ar = cx[i + 4 * offset];
        let mut br = ar - px[i + 4 * offset];
        px[i + 4 * offset] = ar;
        let mut cr = br - px[i + 5 * offset];
        px[i + 5 * offset] = br;
        ar = cr - px[i + 6 * offset];
        px[i + 6 * offset] = cr;
        br = ar - px[i + 7 * offset];
        px[i + 7 * offset] = ar;
        cr = br - px[i + 8 * offset];
        px[i + 8 * offset] = br;
        ar = cr - px[i + 9 * offset];
        px[i + 9 * offset] = cr;
        br = ar - px[i + 10 * offset];
        px[i + 10 * offset] = ar;
        cr = br - px[i + 11 * offset];
        px[i + 11 * offset] = br;
        px[i + 13 * offset] = cr - px[i + 12 * offset];
        px[i + 12 * offset] = cr;
    }
}

/// FIRST_MIN: the smallest `x[i]` and the first index where it occurs, starting from `(x[0], 0)`.
#[kernel]
pub fn first_min(x: &[f64]) -> (f64, usize) {
    let mut min = x[0];
    let mut loc = 0;
    for i in 0..x.len() {
        if x[i] < min {
            min = x[i];
            loc = i;
        }
    }
    (min, loc)
}

/// FIRST_SUM: `x[i] = y[i - 1] + y[i]` for `i` in `1..N`; `x[0]` is left as it is.
#[kernel]
pub fn first_sum(x: &mut [f64], y: &[f64]) {
    for i in 1..x.len() {
        x[i] = y[i - 1] + y[i];
    }
}

/// GEN_LIN_RECUR: `b5[k + kb5i] = sa[k] + stb5[k] * sb[k]; stb5[k] = b5[k + kb5i] - stb5[k]`, first for `k`
/// in `0..N`, then again for `k = N - i`, `i` in `1..=N` (RAJAPerf's `kb5i` is 0).
#[kernel]
pub fn gen_lin_recur(b5: &mut [f64], stb5: &mut [f64], sa: &[f64], sb: &[f64], kb5i: usize) {
    let n = stb5.len();
    for k in 0..n {
        b5[k + kb5i] = sa[k] + stb5[k] * sb[k];
        stb5[k] = b5[k + kb5i] - stb5[k];
    }
    for i in 1..n + 1 {
        let k = n - i;
        b5[k + kb5i] = sa[k] + stb5[k] * sb[k];
        stb5[k] = b5[k + kb5i] - stb5[k];
    }
}

/// HYDRO_2D: three stencil loops over the interior `k` in `1..kn - 1`, `j` in `1..jn - 1` of row-major
/// `kn`×`jn` grids, element `(k, j)` at `k * jn + j`:
///
/// 1. `za`, `zb` from `zp`, `zq`, `zr`, `zm`;
/// 2. `zu += s * (...)`, `zv += s * (...)` from `za`, `zb`, `zz`, `zr`;
/// 3. `zrout = zr + t * zu`, `zzout = zz + t * zv`.
#[kernel]
pub fn hydro_2d(
    za: &mut [f64],
    zb: &mut [f64],
    zu: &mut [f64],
    zv: &mut [f64],
    zrout: &mut [f64],
    zzout: &mut [f64],
    zp: &[f64],
    zq: &[f64],
    zr: &[f64],
    zm: &[f64],
    zz: &[f64],
    s: f64,
    t: f64,
    jn: usize,
    kn: usize,
) {
    for k in 1..kn - 1 {
        for j in 1..jn - 1 {
            let kj = k * jn + j;
            za[kj] = (zp[kj + jn - 1] + zq[kj + jn - 1] - zp[kj - 1] - zq[kj - 1]) * (zr[kj] + zr[kj - 1])
                / (zm[kj - 1] + zm[kj + jn - 1]);
            zb[kj] = (zp[kj - 1] + zq[kj - 1] - zp[kj] - zq[kj]) * (zr[kj] + zr[kj - jn]) / (zm[kj] + zm[kj - 1]);
        }
    }
    for k in 1..kn - 1 {
        for j in 1..jn - 1 {
            let kj = k * jn + j;
            zu[kj] += s
                * (za[kj] * (zz[kj] - zz[kj + 1]) - za[kj - 1] * (zz[kj] - zz[kj - 1])
                    - zb[kj] * (zz[kj] - zz[kj - jn])
                    + zb[kj + jn] * (zz[kj] - zz[kj + jn]));
            zv[kj] += s
                * (za[kj] * (zr[kj] - zr[kj + 1]) - za[kj - 1] * (zr[kj] - zr[kj - 1])
                    - zb[kj] * (zr[kj] - zr[kj - jn])
                    + zb[kj + jn] * (zr[kj] - zr[kj + jn]));
        }
    }
    for k in 1..kn - 1 {
        for j in 1..jn - 1 {
            let kj = k * jn + j;
            zrout[kj] = zr[kj] + t * zu[kj];
            zzout[kj] = zz[kj] + t * zv[kj];
        }
    }
}

/// INT_PREDICT: `px[i] = dm28 * px[i + 12o] + dm27 * px[i + 11o] + ... + dm22 * px[i + 6o]
/// + c0 * (px[i + 4o] + px[i + 5o]) + px[i + 2o]`, `o = offset`.
///
/// `px` holds 13 planes of `offset` elements (RAJAPerf's `offset` is N); only the first plane is written.
#[kernel]
pub fn int_predict(
    px: &mut [f64],
    offset: usize,
    dm22: f64,
    dm23: f64,
    dm24: f64,
    dm25: f64,
    dm26: f64,
    dm27: f64,
    dm28: f64,
    c0: f64,
) {
    for i in 0..offset {
        px[i] = dm28 * px[i + 12 * offset]
            + dm27 * px[i + 11 * offset]
            + dm26 * px[i + 10 * offset]
            + dm25 * px[i + 9 * offset]
            + dm24 * px[i + 8 * offset]
            + dm23 * px[i + 7 * offset]
            + dm22 * px[i + 6 * offset]
            + c0 * (px[i + 4 * offset] + px[i + 5 * offset])
            + px[i + 2 * offset];
    }
}

/// TRIDIAG_ELIM: `xout[i] = z[i] * (y[i] - xin[i - 1])` for `i` in `1..N`; `xout[0]` is left as it is.
#[kernel]
pub fn tridiag_elim(xout: &mut [f64], xin: &[f64], y: &[f64], z: &[f64]) {
    for i in 1..xout.len() {
        xout[i] = z[i] * (y[i] - xin[i - 1]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_predict_runs_the_cascade_in_each_column() {
        // offset 2: column 0 starts with px[k] = k in plane k and cx = 10 in plane 4; column 1 with zeros and
        // cx = 1. Planes 0..4 are not touched.
        let offset = 2;
        let mut px = [0.0; 28];
        for k in 0..14 {
            px[2 * k] = k as f64;
        }
        let mut cx = [0.0; 28];
        cx[8] = 10.0;
        cx[9] = 1.0;
        diff_predict(&mut px, &cx, offset);
        let column0: Vec<f64> = (0..14).map(|k| px[2 * k]).collect();
        let column1: Vec<f64> = (0..14).map(|k| px[2 * k + 1]).collect();
        let expected0 = [0.0, 1.0, 2.0, 3.0, 10.0, 6.0, 1.0, -5.0, -12.0, -20.0, -29.0, -39.0, -50.0, -62.0];
        let expected1 = [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        assert_eq!(column0, expected0);
        assert_eq!(column1, expected1);
    }

    #[test]
    fn first_min_returns_the_first_smallest_value() {
        assert_eq!(first_min(&[0.0, 3.0, -1.0, 2.0, -1.0]), (-1.0, 2));
    }

    #[test]
    fn first_min_of_rajaperf_data_is_at_the_middle() {
        let mut x = [0.0; 9];
        x[4] = -1.0e10;
        assert_eq!(first_min(&x), (-1.0e10, 4));
        assert_eq!(first_min(&[0.0, 0.0]), (0.0, 0));
    }

    #[test]
    fn first_sum_adds_neighbours_from_one() {
        let mut x = [9.0; 4];
        first_sum(&mut x, &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(x, [9.0, 3.0, 5.0, 7.0]);
    }

    #[test]
    fn gen_lin_recur_runs_forward_then_backward() {
        // Forward:  b5 = [10 + 1*3, 20 + 2*4] = [13, 28], stb5 = [12, 26].
        // Backward: k = 1: b5[1] = 20 + 26*4 = 124, stb5[1] = 98; k = 0: b5[0] = 10 + 12*3 = 46, stb5[0] = 34.
        let (mut b5, mut stb5) = ([0.0; 2], [1.0, 2.0]);
        gen_lin_recur(&mut b5, &mut stb5, &[10.0, 20.0], &[3.0, 4.0], 0);
        assert_eq!(b5, [46.0, 124.0]);
        assert_eq!(stb5, [34.0, 98.0]);
    }

    #[test]
    fn gen_lin_recur_writes_b5_at_the_offset() {
        let (mut b5, mut stb5) = ([7.0; 3], [1.0, 2.0]);
        gen_lin_recur(&mut b5, &mut stb5, &[10.0, 20.0], &[3.0, 4.0], 1);
        assert_eq!(b5, [7.0, 46.0, 124.0]);
        assert_eq!(stb5, [34.0, 98.0]);
    }

    #[test]
    fn hydro_2d_updates_the_one_interior_point_of_a_3x3_grid() {
        // (k, j) = (1, 1) is element 4; its neighbours are 3, 5 (j -+ 1), 1, 7 (k -+ 1) and 6 = (2, 0).
        let zp: Vec<f64> = (0..9).map(|n| n as f64).collect();
        let zq: Vec<f64> = (0..9).map(|n| 2.0 * n as f64).collect();
        let zr: Vec<f64> = (0..9).map(|n| 1.0 + n as f64).collect();
        let zm = [1.0; 9];
        let zz: Vec<f64> = (0..9).map(|n| (n * n) as f64).collect();
        let (mut za, mut zb) = ([0.0; 9], [0.0; 9]);
        za[3] = 0.5;
        zb[7] = 0.25;
        let (mut zu, mut zv) = ([1.0; 9], [2.0; 9]);
        let (mut zrout, mut zzout) = ([0.0; 9], [0.0; 9]);
        hydro_2d(
            &mut za, &mut zb, &mut zu, &mut zv, &mut zrout, &mut zzout, &zp, &zq, &zr, &zm, &zz, 0.5, 2.0, 3, 3,
        );
        // za = (18 - 9) * (5 + 4) / 2, zb = (9 - 12) * (5 + 2) / 2
        assert_eq!(za, [0.0, 0.0, 0.0, 0.5, 40.5, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(zb, [0.0, 0.0, 0.0, 0.0, -10.5, 0.0, 0.0, 0.25, 0.0]);
        // zu += 0.5 * (40.5 * -9 - 0.5 * 7 - -10.5 * 15 + 0.25 * -33) = 1 - 109.375
        // zv += 0.5 * (40.5 * -1 - 0.5 * 1 - -10.5 * 3 + 0.25 * -3) = 2 - 5.125
        assert_eq!(zu, [1.0, 1.0, 1.0, 1.0, -108.375, 1.0, 1.0, 1.0, 1.0]);
        assert_eq!(zv, [2.0, 2.0, 2.0, 2.0, -3.125, 2.0, 2.0, 2.0, 2.0]);
        assert_eq!(zrout, [0.0, 0.0, 0.0, 0.0, 5.0 + 2.0 * -108.375, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(zzout, [0.0, 0.0, 0.0, 0.0, 16.0 + 2.0 * -3.125, 0.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn int_predict_combines_the_planes_into_the_first() {
        // offset 2: column 0 has px[2k] = k, column 1 has ones; dm22..dm28 = 1..7, c0 = 0.5.
        let mut px = [0.0; 26];
        for k in 0..13 {
            px[2 * k] = k as f64;
            px[2 * k + 1] = 1.0;
        }
        px[0] = 100.0;
        let before = px;
        int_predict(&mut px, 2, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 0.5);
        // 7*12 + 6*11 + 5*10 + 4*9 + 3*8 + 2*7 + 1*6 + 0.5*(4 + 5) + 2 and (7+6+5+4+3+2+1) + 0.5*2 + 1
        assert_eq!(px[0], 286.5);
        assert_eq!(px[1], 30.0);
        assert_eq!(px[2..], before[2..]);
    }

    #[test]
    fn tridiag_elim_eliminates_from_one() {
        let mut xout = [9.0; 4];
        tridiag_elim(&mut xout, &[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 30.0, 40.0], &[2.0, 2.0, 2.0, 0.5]);
        assert_eq!(xout, [9.0, 38.0, 56.0, 18.5]);
    }
}
