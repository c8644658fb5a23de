//! RAJAPerf Apps kernels (the ones of the paper and the mesh kernels of RAJAPerf's Apps group).
//!
//! The mesh kernels index nodes and zones of a box mesh linearly, `i + j * jp + k * kp`; zone `i`'s corner
//! nodes are `i`, `i + 1`, `i + jp`, `i + 1 + jp` and the same four plus `kp`. `real_zones` lists the zones
//! that are not ghost zones, each once.

use rs2gpu::kernel;

/// ENERGY's sound-speed clamp: tiny or negative values become `0.3333333e-18`, the others their square root.
fn ssc_clamp(ssc: f64) -> f64 {
    if ssc <= 0.1111111e-36 {
        0.3333333e-18
    } else {
        ssc.sqrt()
    }
}

/// ENERGY: six loops of LULESH's energy update, in order: the half-step energy, the half-step artificial
/// viscosity `q_new`, two energy corrections with the `e_cut` and `emin` cut-offs, the full-step energy, and the
/// full-step `q_new` with the `q_cut` cut-off.
#[kernel]
pub fn energy(
    e_new: &mut [f64],
    e_old: &[f64],
    delvc: &[f64],
    p_new: &[f64],
    p_old: &[f64],
    q_new: &mut [f64],
    q_old: &[f64],
    work: &[f64],
    comp_half_step: &[f64],
    p_half_step: &[f64],
    bvc: &[f64],
    pbvc: &[f64],
    ql_old: &[f64],
    qq_old: &[f64],
    vnewc: &[f64],
    rho0: f64,
    e_cut: f64,
    emin: f64,
    q_cut: f64,
) {
    let n = e_new.len();
    for i in 0..n {
        e_new[i] = e_old[i] - 0.5 * delvc[i] * (p_old[i] + q_old[i]) + 0.5 * work[i];
    }
    for i in 0..n {
        if delvc[i] > 0.0 {
            q_new[i] = 0.0;
        } else {
            let vhalf = 1.0 / (1.0 + comp_half_step[i]);
            let ssc = ssc_clamp((pbvc[i] * e_new[i] + vhalf * vhalf * bvc[i] * p_half_step[i]) / rho0);
            q_new[i] = ssc * ql_old[i] + qq_old[i];
        }
    }
    for i in 0..n {
        e_new[i] += 0.5 * delvc[i] * (3.0 * (p_old[i] + q_old[i]) - 4.0 * (p_half_step[i] + q_new[i]));
    }
    for i in 0..n {
        e_new[i] += 0.5 * work[i];
        if e_new[i].abs() < e_cut {
            e_new[i] = 0.0;
        }
        if e_new[i] < emin {
            e_new[i] = emin;
        }
    }
    for i in 0..n {
        let q_tilde = if delvc[i] > 0.0 {
            0.0
        } else {
            let ssc = ssc_clamp((pbvc[i] * e_new[i] + vnewc[i] * vnewc[i] * bvc[i] * p_new[i]) / rho0);
            ssc * ql_old[i] + qq_old[i]
        };
        e_new[i] -= (7.0 * (p_old[i] + q_old[i]) - 8.0 * (p_half_step[i] + q_new[i]) + (p_new[i] + q_tilde))
            * delvc[i]
            / 6.0;
        if e_new[i].abs() < e_cut {
            e_new[i] = 0.0;
        }
        if e_new[i] < emin {
            e_new[i] = emin;
        }
    }
    for i in 0..n {
        if delvc[i] <= 0.0 {
            let ssc = ssc_clamp((pbvc[i] * e_new[i] + vnewc[i] * vnewc[i] * bvc[i] * p_new[i]) / rho0);
            q_new[i] = ssc * ql_old[i] + qq_old[i];
            if q_new[i].abs() < q_cut {
                q_new[i] = 0.0;
            }
        }
    }
}

/// Taps of FIR's filter.
pub const FIR_COEFFLEN: usize = 16;

/// FIR: `out[i] = Σ_j coeff[j] * input[i + j]`, `j` in `0..16` in order from `0.0`; `input` needs at least
/// `out.len() + 15` elements.
#[kernel]
pub fn fir(out: &mut [f64], input: &[f64], coeff: &[f64; FIR_COEFFLEN]) {
    for i in 0..out.len() {
        let mut sum = 0.0;
        for j in 0..FIR_COEFFLEN {
            sum += coeff[j] * input[i + j];
        }
        out[i] = sum;
    }
}

/// The extents of LTIMES's arrays: `psi[z][g][d]`, `ell[m][d]` and `phi[z][g][m]`, row-major.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LtimesDims {
    pub num_d: usize,
    pub num_g: usize,
    pub num_m: usize,
    pub num_z: usize,
}

/// Where `psi[z][g][d]` is.
fn psi_index(dims: LtimesDims, z: usize, g: usize, d: usize) -> usize {
    d + dims.num_d * (g + dims.num_g * z)
}

/// Where `ell[m][d]` is.
fn ell_index(dims: LtimesDims, m: usize, d: usize) -> usize {
    d + dims.num_d * m
}

/// Where `phi[z][g][m]` is.
fn phi_index(dims: LtimesDims, z: usize, g: usize, m: usize) -> usize {
    m + dims.num_m * (g + dims.num_g * z)
}

/// LTIMES: `phi[z][g][m] += ell[m][d] * psi[z][g][d]`, `d` in order, each step added into `phi`.
///
/// RAJAPerf's LTIMES reads its arrays through RAJA views; here the views are the index functions
/// `psi_index`, `ell_index` and `phi_index` over the extents in `dims`.
#[kernel]
pub fn ltimes(phi: &mut [f64], ell: &[f64], psi: &[f64], dims: LtimesDims) {
    for z in 0..dims.num_z {
        for g in 0..dims.num_g {
            for m in 0..dims.num_m {
                for d in 0..dims.num_d {
                    phi[phi_index(dims, z, g, m)] += ell[ell_index(dims, m, d)] * psi[psi_index(dims, z, g, d)];
                }
            }
        }
    }
}

/// LTIMES_NOVIEW: LTIMES with the index arithmetic written out: `phi[m + g*M + z*M*G] += ell[d + m*D] *
/// psi[d + g*D + z*D*G]`.
#[kernel]
pub fn ltimes_noview(
    phi: &mut [f64],
    ell: &[f64],
    psi: &[f64],
    num_d: usize,
    num_g: usize,
    num_m: usize,
    num_z: usize,
) {
    for z in 0..num_z {
        for g in 0..num_g {
            for m in 0..num_m {
                for d in 0..num_d {
                    phi[m + g * num_m + z * num_m * num_g] +=
                        ell[d + m * num_d] * psi[d + g * num_d + z * num_d * num_g];
                }
            }
        }
    }
}

/// MATVEC_3D_STENCIL: `b[i] = Σ coef_P[i] * x[i + o(P)]` over the 27 points `P` of the 3×3×3 stencil around
/// each real zone `i`, added left to right in RAJAPerf's order (`k` offset, then `j`, then `i`, each -1, 0, +1).
///
/// Only 14 of the 27 coefficient arrays are stored: the matrix is symmetric, so the coefficient of the
/// point at offset `o` of zone `i` is the one of offset `-o` of zone `i + o` (`ccr[i] = ccl[i + 1]`, ...).
/// Names: `d`/`c`/`u` for `k` -1/0/+1, `b`/`c`/`f` for `j`, `l`/`c`/`r` for `i`.
#[kernel]
pub fn matvec_3d_stencil(
    b: &mut [f64],
    x: &[f64],
    dbl: &[f64],
    dbc: &[f64],
    dbr: &[f64],
    dcl: &[f64],
    dcc: &[f64],
    dcr: &[f64],
    dfl: &[f64],
    dfc: &[f64],
    dfr: &[f64],
    cbl: &[f64],
    cbc: &[f64],
    cbr: &[f64],
    ccl: &[f64],
    ccc: &[f64],
    real_zones: &[usize],
    jp: usize,
    kp: usize,
) {
    for ii in 0..real_zones.len() {
        let i = real_zones[ii];
        b[i] = dbl[i] * x[i - kp - jp - 1]
            + dbc[i] * x[i - kp - jp]
            + dbr[i] * x[i - kp - jp + 1]
            + dcl[i] * x[i - kp - 1]
            + dcc[i] * x[i - kp]
            + dcr[i] * x[i - kp + 1]
            + dfl[i] * x[i - kp + jp - 1]
            + dfc[i] * x[i - kp + jp]
            + dfr[i] * x[i - kp + jp + 1]
            + cbl[i] * x[i - jp - 1]
            + cbc[i] * x[i - jp]
            + cbr[i] * x[i - jp + 1]
            + ccl[i] * x[i - 1]
            + ccc[i] * x[i]
            + ccl[i + 1] * x[i + 1]
            + cbr[i + jp - 1] * x[i + jp - 1]
            + cbc[i + jp] * x[i + jp]
            + cbl[i + jp + 1] * x[i + jp + 1]
            + dfr[i + kp - jp - 1] * x[i + kp - jp - 1]
            + dfc[i + kp - jp] * x[i + kp - jp]
            + dfl[i + kp - jp + 1] * x[i + kp - jp + 1]
            + dcr[i + kp - 1] * x[i + kp - 1]
            + dcc[i + kp] * x[i + kp]
            + dcl[i + kp + 1] * x[i + kp + 1]
            + dbr[i + kp + jp - 1] * x[i + kp + jp - 1]
            + dbc[i + kp + jp] * x[i + kp + jp]
            + dbl[i + kp + jp + 1] * x[i + kp + jp + 1];
    }
}

/// PRESSURE: `bvc[i] = cls * (compression[i] + 1.0)`, then `p_new[i] = bvc[i] * e_old[i]` with the `p_cut`,
/// `eosvmax` and `pmin` cut-offs applied in that order.
#[kernel]
pub fn pressure(
    bvc: &mut [f64],
    p_new: &mut [f64],
    compression: &[f64],
    e_old: &[f64],
    vnewc: &[f64],
    cls: f64,
    p_cut: f64,
    pmin: f64,
    eosvmax: f64,
) {
    let n = p_new.len();
    for i in 0..n {
        bvc[i] = cls * (compression[i] + 1.0);
    }
    for i in 0..n {
        p_new[i] = bvc[i] * e_old[i];
        if p_new[i].abs() < p_cut {
            p_new[i] = 0.0;
        }
        if vnewc[i] >= eosvmax {
            p_new[i] = 0.0;
        }
        if p_new[i] < pmin {
            p_new[i] = pmin;
        }
    }
}

/// VOL3D: the volume of each hexahedral zone `i` in `ibegin..iend` from its eight corner nodes, a sum of
/// triple products scaled by `vnormq` (RAJAPerf's 1/12).
///
/// The third triple product repeats the second's cross product with the fourth's sum of differences, as
/// RAJAPerf's body does.
#[kernel]
pub fn vol3d(
    vol: &mut [f64],
    x: &[f64],
    y: &[f64],
    z: &[f64],
    vnormq: f64,
    jp: usize,
    kp: usize,
    ibegin: usize,
    iend: usize,
) {
    for i in ibegin..iend {
        let n0 = i;
        let n1 = i + 1;
        let n2 = i + jp;
        let n3 = i + 1 + jp;
        let n4 = i + kp;
        let n5 = i + 1 + kp;
        let n6 = i + jp + kp;
        let n7 = i + 1 + jp + kp;

        let x71 = x[n7] - x[n1];
        let x72 = x[n7] - x[n2];
        let x74 = x[n7] - x[n4];
        let x30 = x[n3] - x[n0];
        let x50 = x[n5] - x[n0];
        let x60 = x[n6] - x[n0];

        let y71 = y[n7] - y[n1];
        let y72 = y[n7] - y[n2];
        let y74 = y[n7] - y[n4];
        let y30 = y[n3] - y[n0];
        let y50 = y[n5] - y[n0];
        let y60 = y[n6] - y[n0];

        let z71 = z[n7] - z[n1];
        let z72 = z[n7] - z[n2];
        let z74 = z[n7] - z[n4];
        let z30 = z[n3] - z[n0];
        let z50 = z[n5] - z[n0];
        let z60 = z[n6] - z[n0];

        let mut xps = x71 + x60;
        let mut yps = y71 + y60;
        let mut zps = z71 + z60;

        let mut cyz = y72 * z30 - z72 * y30;
        let mut czx = z72 * x30 - x72 * z30;
        let mut cxy = x72 * y30 - y72 * x30;
        vol[i] = xps * cyz + yps * czx + zps * cxy;

        xps = x72 + x50;
        yps = y72 + y50;
        zps = z72 + z50;

        cyz = y74 * z60 - z74 * y60;
        czx = z74 * x60 - x74 * z60;
        cxy = x74 * y60 - y74 * x60;
        vol[i] += xps * cyz + yps * czx + zps * cxy;

        xps = x74 + x30;
        yps = y74 + y30;
        zps = z74 + z30;
        vol[i] += xps * cyz + yps * czx + zps * cxy;

        cyz = y71 * z50 - z71 * y50;
        czx = z71 * x50 - x71 * z50;
        cxy = x71 * y50 - y71 * x50;
        vol[i] += xps * cyz + yps * czx + zps * cxy;

        vol[i] *= vnormq;
    }
}

/// DEL_DOT_VEC_2D: the divergence of the nodal velocity `(xdot, ydot)` on each real zone `i` of a 2-D mesh,
/// written to `div[i]` through the zone list. The zone's nodes, counter-clockwise from its low corner, are
/// `i`, `i + 1`, `i + 1 + jp`, `i + jp` (RAJAPerf's nodes 4, 1, 2, 3).
#[kernel]
pub fn del_dot_vec_2d(
    div: &mut [f64],
    x: &[f64],
    y: &[f64],
    xdot: &[f64],
    ydot: &[f64],
    real_zones: &[usize],
    half: f64,
    ptiny: f64,
    jp: usize,
) {
    for ii in 0..real_zones.len() {
        let i = real_zones[ii];
        let n4 = i;
        let n1 = i + 1;
        let n2 = i + 1 + jp;
        let n3 = i + jp;

        let xi = half * (x[n1] + x[n2] - x[n3] - x[n4]);
        let xj = half * (x[n2] + x[n3] - x[n4] - x[n1]);

        let yi = half * (y[n1] + y[n2] - y[n3] - y[n4]);
        let yj = half * (y[n2] + y[n3] - y[n4] - y[n1]);

        let fxi = half * (xdot[n1] + xdot[n2] - xdot[n3] - xdot[n4]);
        let fxj = half * (xdot[n2] + xdot[n3] - xdot[n4] - xdot[n1]);

        let fyi = half * (ydot[n1] + ydot[n2] - ydot[n3] - ydot[n4]);
        let fyj = half * (ydot[n2] + ydot[n3] - ydot[n4] - ydot[n1]);

        let rarea = 1.0 / (xi * yj - xj * yi + ptiny);

        let dfxdx = rarea * (fxi * yj - fxj * yi);
        let dfydy = rarea * (fyj * xi - fyi * xj);
        let affine = (ydot[n1] + ydot[n2] + ydot[n3] + ydot[n4]) / (y[n1] + y[n2] + y[n3] + y[n4]);

        div[i] = dfxdx + dfydy + affine;
    }
}

/// ZONAL_ACCUMULATION_3D: `vol[i] = 0.125 * (x[n0] + x[n1] + ... + x[n7])` for each real zone `i`, its
/// eight corner nodes added in order.
#[kernel]
pub fn zonal_accumulation_3d(vol: &mut [f64], x: &[f64], real_zones: &[usize], jp: usize, kp: usize) {
    for ii in 0..real_zones.len() {
        let i = real_zones[ii];
        vol[i] = 0.125
            * (x[i] + x[i + 1] + x[i + jp] + x[i + 1 + jp] + x[i + kp] + x[i + 1 + kp] + x[i + jp + kp]
                + x[i + 1 + jp + kp]);
    }
}

/// NODAL_ACCUMULATION_3D: each real zone `i` adds `0.125 * vol[i]` to its eight corner nodes, in the order
/// `i`, `i + 1`, `i + jp`, `i + 1 + jp`, `i + kp`, `i + 1 + kp`, `i + jp + kp`, `i + 1 + jp + kp`.
///
/// Neighbouring zones share nodes, so iterations add into the same elements of `x`: on the GPU the additions
/// are atomics, applied in no fixed order, and a node's sum may differ from this loop's by rounding.
#[kernel]
pub fn nodal_accumulation_3d(x: &mut [f64], vol: &[f64], real_zones: &[usize], jp: usize, kp: usize) {
    for ii in 0..real_zones.len() {
        let i = real_zones[ii];
        let val = 0.125 * vol[i];
        x[i] += val;
        x[i + 1] += val;
        x[i + jp] += val;
        x[i + 1 + jp] += val;
        x[i + kp] += val;
        x[i + 1 + kp] += val;
        x[i + jp + kp] += val;
        x[i + 1 + jp + kp] += val;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssc_clamp_replaces_tiny_values_and_takes_roots() {
        assert_eq!(ssc_clamp(4.0), 2.0);
        assert_eq!(ssc_clamp(0.0), 0.3333333e-18);
        assert_eq!(ssc_clamp(-1.0), 0.3333333e-18);
    }

    #[test]
    fn energy_takes_each_branch() {
        // 0: compression (delvc > 0): e = 1 - 1 + 1 = 1, then 2, then 3, then 3 - 6 / 6 = 2; q = 0.
        // 1: expansion (delvc = 0): e = 2; q from sqrt((1 * 2 + 0.25 * 4 * 1) / 0.75) = 2, so q = 2 * 1 + 1 = 3;
        //    e = 3 after loop 4, unchanged by loop 5; loop 6 recomputes q from e = 3: sqrt(3 / 0.75) * 1 + 1 = 3.
        // 2: e stays 0, below e_cut, so it is cut to 0 and raised to emin = 0.25.
        // 3: expansion with a zero argument: the clamp gives 0.3333333e-18, q = 0.25 + 3.3e-19 = 0.25, below q_cut.
        let mut e_new = [99.0; 4];
        let mut q_new = [99.0; 4];
        energy(
            &mut e_new,
            &[1.0, 1.0, 0.0, 1.0],
            &[1.0, 0.0, 1.0, 0.0],
            &[0.0; 4],
            &[1.0, 1.0, 0.0, 0.0],
            &mut q_new,
            &[1.0, 1.0, 0.0, 0.0],
            &[2.0, 2.0, 0.0, 0.0],
            &[0.0, 1.0, 0.0, 0.0],
            &[1.0, 1.0, 0.0, 0.0],
            &[0.0, 4.0, 0.0, 0.0],
            &[0.0, 1.0, 0.0, 0.0],
            &[0.0, 1.0, 0.0, 1.0],
            &[0.0, 1.0, 0.0, 0.25],
            &[0.0; 4],
            0.75,
            0.5,
            0.25,
            0.5,
        );
        assert_eq!(e_new, [2.0, 3.0, 0.25, 1.0]);
        assert_eq!(q_new, [0.0, 3.0, 0.0, 0.0]);
    }

    #[test]
    fn fir_reverses_an_impulse() {
        // An impulse at 15 meets tap 15 - i in output i.
        let coeff: [f64; FIR_COEFFLEN] = std::array::from_fn(|j| (j + 1) as f64);
        let mut input = [0.0; FIR_COEFFLEN + 15];
        input[15] = 1.0;
        let mut out = [9.0; FIR_COEFFLEN];
        fir(&mut out, &input, &coeff);
        let expected: [f64; FIR_COEFFLEN] = std::array::from_fn(|i| (FIR_COEFFLEN - i) as f64);
        assert_eq!(out, expected);
    }

    #[test]
    fn fir_with_rajaperf_taps_sums_rows_of_the_matrix() {
        let coeff = [3.0, -1.0, -1.0, -1.0, -1.0, 3.0, -1.0, -1.0, -1.0, -1.0, 3.0, -1.0, -1.0, -1.0, -1.0, 3.0];
        let mut out = [0.0; 2];
        fir(&mut out, &[1.0; 17], &coeff);
        assert_eq!(out, [0.0, 0.0]);
    }

    /// LTIMES data with psi[z][g][d] = 100z + 10g + d and ell[m][d] = (m + 1)(d + 1), two d's: the sum is
    /// (m + 1) * (1 * (100z + 10g) + 2 * (100z + 10g + 1)) = (m + 1) * (300z + 30g + 2).
    fn ltimes_data(dims: LtimesDims) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let LtimesDims { num_d, num_g, num_m, num_z } = dims;
        let mut psi = vec![0.0; num_z * num_g * num_d];
        for z in 0..num_z {
            for g in 0..num_g {
                for d in 0..num_d {
                    psi[d + num_d * (g + num_g * z)] = (100 * z + 10 * g + d) as f64;
                }
            }
        }
        let ell = (0..num_m * num_d).map(|k| ((k / num_d + 1) * (k % num_d + 1)) as f64).collect();
        (vec![1.0; num_z * num_g * num_m], ell, psi)
    }

    fn ltimes_expected(dims: LtimesDims) -> Vec<f64> {
        let mut phi = vec![0.0; dims.num_z * dims.num_g * dims.num_m];
        for z in 0..dims.num_z {
            for g in 0..dims.num_g {
                for m in 0..dims.num_m {
                    phi[m + dims.num_m * (g + dims.num_g * z)] = 1.0 + ((m + 1) * (300 * z + 30 * g + 2)) as f64;
                }
            }
        }
        phi
    }

    const DIMS: LtimesDims = LtimesDims { num_d: 2, num_g: 2, num_m: 3, num_z: 2 };

    #[test]
    fn ltimes_adds_the_d_sum_into_phi() {
        let (mut phi, ell, psi) = ltimes_data(DIMS);
        ltimes(&mut phi, &ell, &psi, DIMS);
        assert_eq!(phi, ltimes_expected(DIMS));
    }

    #[test]
    fn ltimes_noview_matches_ltimes() {
        let (mut phi, ell, psi) = ltimes_data(DIMS);
        ltimes_noview(&mut phi, &ell, &psi, DIMS.num_d, DIMS.num_g, DIMS.num_m, DIMS.num_z);
        assert_eq!(phi, ltimes_expected(DIMS));
        let mut again = phi.clone();
        ltimes(&mut again, &ell, &psi, DIMS);
        ltimes_noview(&mut phi, &ell, &psi, DIMS.num_d, DIMS.num_g, DIMS.num_m, DIMS.num_z);
        assert_eq!(again, phi);
    }

    /// Runs MATVEC_3D_STENCIL on the centre zone 13 of a 3×3×3 node box (jp = 3, kp = 9).
    fn matvec_centre(x: &[f64], coefficient: impl Fn(usize, usize) -> f64) -> Vec<f64> {
        let c: Vec<Vec<f64>> = (0..14).map(|a| (0..27).map(|n| coefficient(a, n)).collect()).collect();
        let mut b = vec![0.0; 27];
        matvec_3d_stencil(
            &mut b, x, &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], &c[7], &c[8], &c[9], &c[10], &c[11], &c[12],
            &c[13], &[13], 3, 9,
        );
        b
    }

    #[test]
    fn matvec_3d_stencil_uses_each_stored_coefficient_twice_and_ccc_once() {
        // Array a holds 4^a: every array but ccc serves a point and its mirror, so the sum has the base-4 digits
        // 2 2 ... 2 1.
        let b = matvec_centre(&[1.0; 27], |a, _| 4.0f64.powi(a as i32));
        let expected = (0..13).map(|a| 2.0 * 4.0f64.powi(a)).sum::<f64>() + 4.0f64.powi(13);
        assert_eq!(b[13], expected);
        assert_eq!(b.iter().filter(|&&v| v != 0.0).count(), 1);
    }

    #[test]
    fn matvec_3d_stencil_reads_mirrored_coefficients_at_the_neighbour() {
        // Coefficients equal their zone index and x is one at node p only: the coefficient of the points below
        // the centre is read at zone 13, the mirrored ones above it at zone p.
        for p in 0..27 {
            let mut x = [0.0; 27];
            x[p] = 1.0;
            let b = matvec_centre(&x, |_, n| n as f64);
            assert_eq!(b[13], p.max(13) as f64, "node {p}");
        }
    }

    #[test]
    fn pressure_applies_the_cut_offs_in_order() {
        // p = bvc * e_old = [1, 0.5, 1, -2]: kept; below p_cut; vnewc at eosvmax; negative. The last three end at pmin.
        let (mut bvc, mut p_new) = ([0.0; 4], [9.0; 4]);
        let (compression, e_old, vnewc) = ([1.0, 3.0, 1.0, 1.0], [1.0, 0.25, 1.0, -2.0], [0.0, 0.0, 1.0, 0.0]);
        pressure(&mut bvc, &mut p_new, &compression, &e_old, &vnewc, 0.5, 0.6, 0.25, 1.0);
        assert_eq!(bvc, [1.0, 2.0, 1.0, 1.0]);
        assert_eq!(p_new, [1.0, 0.25, 0.25, 0.25]);
    }

    /// The node coordinates of a 2×2×2 node box with spacing (1, 2, 4), shifted by `origin`.
    fn box_nodes(origin: f64) -> ([f64; 8], [f64; 8], [f64; 8]) {
        let x = std::array::from_fn(|n| origin + (n % 2) as f64);
        let y = std::array::from_fn(|n| origin + 2.0 * (n / 2 % 2) as f64);
        let z = std::array::from_fn(|n| origin + 4.0 * (n / 4) as f64);
        (x, y, z)
    }

    #[test]
    fn vol3d_of_a_box_is_twelve_times_its_volume_times_vnormq() {
        // The four triple products are 32, 32, 0 (the repeated one) and 32: 96 = 12 * 1 * 2 * 4.
        for origin in [0.0, 10.0] {
            let (x, y, z) = box_nodes(origin);
            let mut vol = [7.0; 8];
            vol3d(&mut vol, &x, &y, &z, 0.5, 2, 4, 0, 1);
            assert_eq!(vol, [48.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0]);
        }
    }

    #[test]
    fn del_dot_vec_2d_writes_through_the_zone_list() {
        // 3×2 nodes (jp = 3) with x = 2 * column, y = row; the velocity is (x, 4y). Zone 1's nodes are 1, 2, 5, 4:
        // xi = 2, yj = 1, fxi = 2, fyj = 4, so rarea = 1/2, dfxdx = 1, dfydy = 4 and affine = 8 / 2 = 4.
        let x: Vec<f64> = (0..6).map(|n| 2.0 * (n % 3) as f64).collect();
        let y: Vec<f64> = (0..6).map(|n| (n / 3) as f64).collect();
        let ydot: Vec<f64> = y.iter().map(|v| 4.0 * v).collect();
        let mut div = [0.0; 6];
        del_dot_vec_2d(&mut div, &x, &y, &x, &ydot, &[1], 0.5, 1.0e-20, 3);
        assert_eq!(div, [0.0, 9.0, 0.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn zonal_accumulation_3d_averages_the_corners() {
        // 3×2×2 nodes (jp = 3, kp = 6), x[n] = n: zone 1's corners 1, 2, 4, 5, 7, 8, 10, 11 average to 6.
        let x: Vec<f64> = (0..12).map(|n| n as f64).collect();
        let mut vol = [-1.0; 12];
        zonal_accumulation_3d(&mut vol, &x, &[1], 3, 6);
        let mut expected = [-1.0; 12];
        expected[1] = 6.0;
        assert_eq!(vol, expected);
    }

    #[test]
    fn zonal_accumulation_3d_of_ones_is_one() {
        // RAJAPerf's data: x = 1 everywhere.
        let mut vol = [0.0; 12];
        zonal_accumulation_3d(&mut vol, &[1.0; 12], &[0, 1], 3, 6);
        assert_eq!(vol[..2], [1.0, 1.0]);
        assert_eq!(vol[2..], [0.0; 10]);
    }

    #[test]
    fn nodal_accumulation_3d_adds_an_eighth_to_each_corner() {
        // 3×2×2 nodes (jp = 3, kp = 6): zone 1's corners are 1, 2, 4, 5, 7, 8, 10, 11.
        let mut x = [0.5; 12];
        let mut vol = [0.0; 12];
        vol[1] = 8.0;
        nodal_accumulation_3d(&mut x, &vol, &[1], 3, 6);
        let mut expected = [0.5; 12];
        for n in [1, 2, 4, 5, 7, 8, 10, 11] {
            expected[n] = 1.5;
        }
        assert_eq!(x, expected);
    }

    #[test]
    fn nodal_accumulation_3d_adds_shared_nodes_once_per_zone() {
        // RAJAPerf's data: x = 0, vol = 1. Zones 0 and 1 share the nodes 1, 4, 7 and 10.
        let mut x = [0.0; 12];
        nodal_accumulation_3d(&mut x, &[1.0; 12], &[0, 1], 3, 6);
        assert_eq!(x, [0.125, 0.25, 0.125, 0.125, 0.25, 0.125, 0.125, 0.25, 0.125, 0.125, 0.25, 0.125]);
    }
}
