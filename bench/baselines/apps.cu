// Hand-written CUDA baselines for RAJAPerf's Apps kernels, in the style of its Base_CUDA variants:
// block 256, one thread per element (or per zone) with an index guard, plain (not __restrict__)
// pointers, node pointers offset on the host, FIR's coefficients in __constant__ memory.
// Written from the kernels' formulas; compiled by NVRTC with the same flags as rs2gpu's generated code.

typedef double Real_type;
typedef Real_type* Real_ptr;   // RAJAPerf's Real_ptr carries no __restrict__
typedef long long Index_type;  // RAJAPerf's Index_type is std::ptrdiff_t
typedef Index_type* Index_ptr;

constexpr unsigned long long block_size = 256;

// ---------------------------------------------------------------------------------------------------
// ENERGY: six loops of a LULESH-style energy update, one kernel each

// The sound-speed term: tiny values are clamped, others square-rooted.
__device__ Real_type energy_ssc(Real_type ssc)
{
    if (ssc <= 0.1111111e-36) {
        ssc = 0.3333333e-18;
    } else {
        ssc = sqrt(ssc);
    }
    return ssc;
}

extern "C" __global__ void __launch_bounds__(256)
base_energy_1(Real_ptr e_new, Real_ptr e_old, Real_ptr delvc, Real_ptr p_old, Real_ptr q_old, Real_ptr work,
              Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        e_new[i] = e_old[i] - 0.5 * delvc[i] * (p_old[i] + q_old[i]) + 0.5 * work[i];
    }
}

extern "C" __global__ void __launch_bounds__(256)
base_energy_2(Real_ptr delvc, Real_ptr q_new, Real_ptr compHalfStep, Real_ptr pHalfStep, Real_ptr e_new,
              Real_ptr bvc, Real_ptr pbvc, Real_ptr ql_old, Real_ptr qq_old, Real_type rho0, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        if (delvc[i] > 0.0) {
            q_new[i] = 0.0;
        } else {
            const Real_type vhalf = 1.0 / (1.0 + compHalfStep[i]);
            const Real_type ssc = energy_ssc((pbvc[i] * e_new[i] + vhalf * vhalf * bvc[i] * pHalfStep[i]) / rho0);
            q_new[i] = ssc * ql_old[i] + qq_old[i];
        }
    }
}

extern "C" __global__ void __launch_bounds__(256)
base_energy_3(Real_ptr e_new, Real_ptr delvc, Real_ptr p_old, Real_ptr q_old, Real_ptr pHalfStep, Real_ptr q_new,
              Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        e_new[i] = e_new[i] + 0.5 * delvc[i] * (3.0 * (p_old[i] + q_old[i]) - 4.0 * (pHalfStep[i] + q_new[i]));
    }
}

extern "C" __global__ void __launch_bounds__(256)
base_energy_4(Real_ptr e_new, Real_ptr work, Real_type e_cut, Real_type emin, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        e_new[i] += 0.5 * work[i];
        if (fabs(e_new[i]) < e_cut) {
            e_new[i] = 0.0;
        }
        if (e_new[i] < emin) {
            e_new[i] = emin;
        }
    }
}

extern "C" __global__ void __launch_bounds__(256)
base_energy_5(Real_ptr delvc, Real_ptr pbvc, Real_ptr e_new, Real_ptr vnewc, Real_ptr bvc, Real_ptr p_new,
              Real_ptr ql_old, Real_ptr qq_old, Real_ptr p_old, Real_ptr q_old, Real_ptr pHalfStep, Real_ptr q_new,
              Real_type rho0, Real_type e_cut, Real_type emin, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        Real_type q_tilde;
        if (delvc[i] > 0.0) {
            q_tilde = 0.0;
        } else {
            const Real_type ssc = energy_ssc((pbvc[i] * e_new[i] + vnewc[i] * vnewc[i] * bvc[i] * p_new[i]) / rho0);
            q_tilde = ssc * ql_old[i] + qq_old[i];
        }
        e_new[i] = e_new[i] - (7.0 * (p_old[i] + q_old[i]) - 8.0 * (pHalfStep[i] + q_new[i])
                               + (p_new[i] + q_tilde)) * delvc[i] / 6.0;
        if (fabs(e_new[i]) < e_cut) {
            e_new[i] = 0.0;
        }
        if (e_new[i] < emin) {
            e_new[i] = emin;
        }
    }
}

extern "C" __global__ void __launch_bounds__(256)
base_energy_6(Real_ptr delvc, Real_ptr pbvc, Real_ptr e_new, Real_ptr vnewc, Real_ptr bvc, Real_ptr p_new,
              Real_ptr q_new, Real_ptr ql_old, Real_ptr qq_old, Real_type rho0, Real_type q_cut, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        if (delvc[i] <= 0.0) {
            const Real_type ssc = energy_ssc((pbvc[i] * e_new[i] + vnewc[i] * vnewc[i] * bvc[i] * p_new[i]) / rho0);
            q_new[i] = ssc * ql_old[i] + qq_old[i];
            if (fabs(q_new[i]) < q_cut) {
                q_new[i] = 0.0;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// FIR: out[i] = sum over j < coefflen of coeff[j] * in[i + j], the coefficients in constant memory

__constant__ Real_type fir_coeff[16];

extern "C" __global__ void __launch_bounds__(256)
base_fir(Real_ptr out, Real_ptr in, Index_type coefflen, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        Real_type sum = 0.0;
        for (Index_type j = 0; j < coefflen; ++j) {
            sum += fir_coeff[j] * in[i + j];
        }
        out[i] = sum;
    }
}

// ---------------------------------------------------------------------------------------------------
// LTIMES / LTIMES_NOVIEW: phi[z][g][m] += sum over d of ell[m][d] * psi[z][g][d], accumulated in memory
// one d at a time. Block (32, 4, 2), grid (ceil(M/32), ceil(G/4), ceil(Z/2)): m on x, g on y, z on z.

#define LTIMES_BODY                                                                  \
    const Index_type m = blockIdx.x * 32 + threadIdx.x;                              \
    const Index_type g = blockIdx.y * 4 + threadIdx.y;                               \
    const Index_type z = blockIdx.z * 2 + threadIdx.z;                               \
    if (m < num_m && g < num_g && z < num_z) {                                       \
        for (Index_type d = 0; d < num_d; ++d) {                                     \
            phi[m + num_m * g + num_m * num_g * z] +=                                \
                ell[d + num_d * m] * psi[d + num_d * g + num_d * num_g * z];         \
        }                                                                            \
    }

extern "C" __global__ void __launch_bounds__(256)
base_ltimes(Real_ptr phi, Real_ptr ell, Real_ptr psi, Index_type num_d, Index_type num_g, Index_type num_m,
            Index_type num_z)
{
    LTIMES_BODY
}

extern "C" __global__ void __launch_bounds__(256)
base_ltimes_noview(Real_ptr phi, Real_ptr ell, Real_ptr psi, Index_type num_d, Index_type num_g, Index_type num_m,
                   Index_type num_z)
{
    LTIMES_BODY
}

// ---------------------------------------------------------------------------------------------------
// MATVEC_3D_STENCIL: b[i] = the 27-point stencil sum at zone i = real_zones[ii]. The 27 coefficient and
// 27 x pointers arrive offset on the host (13 coefficient arrays are views of the other 14).

extern "C" __global__ void __launch_bounds__(256)
base_matvec_3d_stencil(Real_ptr b,
    Real_ptr xdbl, Real_ptr xdbc, Real_ptr xdbr, Real_ptr xdcl, Real_ptr xdcc, Real_ptr xdcr,
    Real_ptr xdfl, Real_ptr xdfc, Real_ptr xdfr, Real_ptr xcbl, Real_ptr xcbc, Real_ptr xcbr,
    Real_ptr xccl, Real_ptr xccc, Real_ptr xccr, Real_ptr xcfl, Real_ptr xcfc, Real_ptr xcfr,
    Real_ptr xubl, Real_ptr xubc, Real_ptr xubr, Real_ptr xucl, Real_ptr xucc, Real_ptr xucr,
    Real_ptr xufl, Real_ptr xufc, Real_ptr xufr,
    Real_ptr dbl, Real_ptr dbc, Real_ptr dbr, Real_ptr dcl, Real_ptr dcc, Real_ptr dcr,
    Real_ptr dfl, Real_ptr dfc, Real_ptr dfr, Real_ptr cbl, Real_ptr cbc, Real_ptr cbr,
    Real_ptr ccl, Real_ptr ccc, Real_ptr ccr, Real_ptr cfl, Real_ptr cfc, Real_ptr cfr,
    Real_ptr ubl, Real_ptr ubc, Real_ptr ubr, Real_ptr ucl, Real_ptr ucc, Real_ptr ucr,
    Real_ptr ufl, Real_ptr ufc, Real_ptr ufr,
    Index_ptr real_zones, Index_type ibegin, Index_type iend)
{
    const Index_type ii = blockIdx.x * block_size + threadIdx.x;
    if (ii + ibegin < iend) {
        const Index_type i = real_zones[ii + ibegin];
        b[i] = dbl[i] * xdbl[i] + dbc[i] * xdbc[i] + dbr[i] * xdbr[i]
             + dcl[i] * xdcl[i] + dcc[i] * xdcc[i] + dcr[i] * xdcr[i]
             + dfl[i] * xdfl[i] + dfc[i] * xdfc[i] + dfr[i] * xdfr[i]
             + cbl[i] * xcbl[i] + cbc[i] * xcbc[i] + cbr[i] * xcbr[i]
             + ccl[i] * xccl[i] + ccc[i] * xccc[i] + ccr[i] * xccr[i]
             + cfl[i] * xcfl[i] + cfc[i] * xcfc[i] + cfr[i] * xcfr[i]
             + ubl[i] * xubl[i] + ubc[i] * xubc[i] + ubr[i] * xubr[i]
             + ucl[i] * xucl[i] + ucc[i] * xucc[i] + ucr[i] * xucr[i]
             + ufl[i] * xufl[i] + ufc[i] * xufc[i] + ufr[i] * xufr[i];
    }
}

// ---------------------------------------------------------------------------------------------------
// PRESSURE: two loops, one kernel each

extern "C" __global__ void __launch_bounds__(256)
base_pressure_1(Real_ptr bvc, Real_ptr compression, Real_type cls, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        bvc[i] = cls * (compression[i] + 1.0);
    }
}

extern "C" __global__ void __launch_bounds__(256)
base_pressure_2(Real_ptr p_new, Real_ptr bvc, Real_ptr e_old, Real_ptr vnewc, Real_type p_cut, Real_type eosvmax,
                Real_type pmin, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        p_new[i] = bvc[i] * e_old[i];
        if (fabs(p_new[i]) < p_cut) p_new[i] = 0.0;
        if (vnewc[i] >= eosvmax) p_new[i] = 0.0;
        if (p_new[i] < pmin) p_new[i] = pmin;
    }
}

// ---------------------------------------------------------------------------------------------------
// VOL3D: the volume of the hexahedron whose low corner is node i, for i in [ibegin, iend). The 8 corner
// pointers of each coordinate arrive offset on the host. The grid is sized from iend, as RAJAPerf's is.

extern "C" __global__ void __launch_bounds__(256)
base_vol3d(Real_ptr x0, Real_ptr x1, Real_ptr x2, Real_ptr x3, Real_ptr x4, Real_ptr x5, Real_ptr x6, Real_ptr x7,
           Real_ptr y0, Real_ptr y1, Real_ptr y2, Real_ptr y3, Real_ptr y4, Real_ptr y5, Real_ptr y6, Real_ptr y7,
           Real_ptr z0, Real_ptr z1, Real_ptr z2, Real_ptr z3, Real_ptr z4, Real_ptr z5, Real_ptr z6, Real_ptr z7,
           Real_ptr vol, Real_type vnormq, Index_type ibegin, Index_type iend)
{
    const Index_type i = ibegin + blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        const Real_type x71 = x7[i] - x1[i], x72 = x7[i] - x2[i], x74 = x7[i] - x4[i];
        const Real_type x30 = x3[i] - x0[i], x50 = x5[i] - x0[i], x60 = x6[i] - x0[i];
        const Real_type y71 = y7[i] - y1[i], y72 = y7[i] - y2[i], y74 = y7[i] - y4[i];
        const Real_type y30 = y3[i] - y0[i], y50 = y5[i] - y0[i], y60 = y6[i] - y0[i];
        const Real_type z71 = z7[i] - z1[i], z72 = z7[i] - z2[i], z74 = z7[i] - z4[i];
        const Real_type z30 = z3[i] - z0[i], z50 = z5[i] - z0[i], z60 = z6[i] - z0[i];

        Real_type xps = x71 + x60, yps = y71 + y60, zps = z71 + z60;
        Real_type cyz = y72 * z30 - z72 * y30;
        Real_type czx = z72 * x30 - x72 * z30;
        Real_type cxy = x72 * y30 - y72 * x30;
        vol[i] = xps * cyz + yps * czx + zps * cxy;

        xps = x72 + x50; yps = y72 + y50; zps = z72 + z50;
        cyz = y74 * z60 - z74 * y60;
        czx = z74 * x60 - x74 * z60;
        cxy = x74 * y60 - y74 * x60;
        vol[i] += xps * cyz + yps * czx + zps * cxy;

        xps = x74 + x30; yps = y74 + y30; zps = z74 + z30;
        cyz = y74 * z60 - z74 * y60;
        czx = z74 * x60 - x74 * z60;
        cxy = x74 * y60 - y74 * x60;
        vol[i] += xps * cyz + yps * czx + zps * cxy;

        xps = x74 + x30; yps = y74 + y30; zps = z74 + z30;
        cyz = y71 * z50 - z71 * y50;
        czx = z71 * x50 - x71 * z50;
        cxy = x71 * y50 - y71 * x50;
        vol[i] += xps * cyz + yps * czx + zps * cxy;

        vol[i] *= vnormq;
    }
}

// ---------------------------------------------------------------------------------------------------
// DEL_DOT_VEC_2D: the divergence of (xdot, ydot) on the 2D zone i = real_zones[ii], corners
// n4 = i, n1 = i+1, n2 = i+1+jp, n3 = i+jp, passed as offset pointers.

extern "C" __global__ void __launch_bounds__(256)
base_del_dot_vec_2d(Real_ptr x1, Real_ptr x2, Real_ptr x3, Real_ptr x4,
                    Real_ptr y1, Real_ptr y2, Real_ptr y3, Real_ptr y4,
                    Real_ptr fx1, Real_ptr fx2, Real_ptr fx3, Real_ptr fx4,
                    Real_ptr fy1, Real_ptr fy2, Real_ptr fy3, Real_ptr fy4,
                    Real_ptr div, Index_ptr real_zones, Real_type half, Real_type ptiny, Index_type iend)
{
    const Index_type ii = blockIdx.x * block_size + threadIdx.x;
    if (ii < iend) {
        const Index_type i = real_zones[ii];

        const Real_type xi = half * (x1[i] + x2[i] - x3[i] - x4[i]);
        const Real_type xj = half * (x2[i] + x3[i] - x4[i] - x1[i]);
        const Real_type yi = half * (y1[i] + y2[i] - y3[i] - y4[i]);
        const Real_type yj = half * (y2[i] + y3[i] - y4[i] - y1[i]);
        const Real_type fxi = half * (fx1[i] + fx2[i] - fx3[i] - fx4[i]);
        const Real_type fxj = half * (fx2[i] + fx3[i] - fx4[i] - fx1[i]);
        const Real_type fyi = half * (fy1[i] + fy2[i] - fy3[i] - fy4[i]);
        const Real_type fyj = half * (fy2[i] + fy3[i] - fy4[i] - fy1[i]);

        const Real_type rarea = 1.0 / (xi * yj - xj * yi + ptiny);
        const Real_type dfxdx = rarea * (fxi * yj - fxj * yi);
        const Real_type dfydy = rarea * (fyj * xi - fyi * xj);
        const Real_type affine = (fy1[i] + fy2[i] + fy3[i] + fy4[i]) / (y1[i] + y2[i] + y3[i] + y4[i]);
        div[i] = dfxdx + dfydy + affine;
    }
}

// ---------------------------------------------------------------------------------------------------
// ZONAL_ACCUMULATION_3D: vol[i] = 0.125 * (sum of the 8 corner values), zone i = real_zones[ii]

extern "C" __global__ void __launch_bounds__(256)
base_zonal_accumulation_3d(Real_ptr vol, Real_ptr x0, Real_ptr x1, Real_ptr x2, Real_ptr x3, Real_ptr x4,
                           Real_ptr x5, Real_ptr x6, Real_ptr x7, Index_ptr real_zones, Index_type ibegin,
                           Index_type iend)
{
    const Index_type ii = blockIdx.x * block_size + threadIdx.x;
    if (ii + ibegin < iend) {
        const Index_type i = real_zones[ii + ibegin];
        vol[i] = 0.125 * (x0[i] + x1[i] + x2[i] + x3[i] + x4[i] + x5[i] + x6[i] + x7[i]);
    }
}

// NODAL_ACCUMULATION_3D: each zone adds 0.125 * vol[i] to its 8 corner nodes (atomics: zones share nodes)

extern "C" __global__ void __launch_bounds__(256)
base_nodal_accumulation_3d(Real_ptr vol, Real_ptr x0, Real_ptr x1, Real_ptr x2, Real_ptr x3, Real_ptr x4,
                           Real_ptr x5, Real_ptr x6, Real_ptr x7, Index_ptr real_zones, Index_type ibegin,
                           Index_type iend)
{
    const Index_type ii = blockIdx.x * block_size + threadIdx.x;
    if (ii + ibegin < iend) {
        const Index_type i = real_zones[ii + ibegin];
        const Real_type val = 0.125 * vol[i];
        atomicAdd(&x0[i], val);
        atomicAdd(&x1[i], val);
        atomicAdd(&x2[i], val);
        atomicAdd(&x3[i], val);
        atomicAdd(&x4[i], val);
        atomicAdd(&x5[i], val);
        atomicAdd(&x6[i], val);
        atomicAdd(&x7[i], val);
    }
}
