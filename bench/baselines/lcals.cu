// Hand-written CUDA baselines for RAJAPerf's Lcals kernels, in the style of its Base_CUDA variants:
// block 256, one thread per element with an index guard, plain (not __restrict__) pointers.
// Written from the kernels' formulas; compiled by NVRTC with the same flags as rs2gpu's generated code.

typedef double Real_type;
typedef Real_type* Real_ptr;   // RAJAPerf's Real_ptr carries no __restrict__
typedef long long Index_type;  // RAJAPerf's Index_type is std::ptrdiff_t

constexpr unsigned long long block_size = 256;

// DIFF_PREDICT: a ten-deep difference cascade through the planes px[i + k*offset], k = 4..13
extern "C" __global__ void __launch_bounds__(256)
base_diff_predict(Real_ptr px, Real_ptr cx, Index_type offset, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        Real_type ar, br, cr;
        ar = cx[i + offset * 4];
        br = ar - px[i + offset * 4];
        px[i + offset * 4] = ar;
        cr = br - px[i + offset * 5];
        px[i + offset * 5] = br;
        ar = cr - px[i + offset * 6];
        px[i + offset * 6] = cr;
        br = ar - px[i + offset * 7];
        px[i + offset * 7] = ar;
        cr = br - px[i + offset * 8];
        px[i + offset * 8] = br;
        ar = cr - px[i + offset * 9];
        px[i + offset * 9] = cr;
        br = ar - px[i + offset * 10];
        px[i + offset * 10] = ar;
        cr = br - px[i + offset * 11];
        px[i + offset * 11] = br;
        px[i + offset * 13] = cr - px[i + offset * 12];
        px[i + offset * 12] = cr;
    }
}

// EOS: a 9-term polynomial stencil on u
extern "C" __global__ void __launch_bounds__(256)
base_eos(Real_ptr x, Real_ptr y, Real_ptr z, Real_ptr u, Real_type q, Real_type r, Real_type t, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        x[i] = u[i] + r * (z[i] + r * y[i])
             + t * (u[i + 3] + r * (u[i + 2] + r * u[i + 1])
             + t * (u[i + 6] + q * (u[i + 5] + q * u[i + 4])));
    }
}

// FIRST_DIFF: x[i] = y[i + 1] - y[i]
extern "C" __global__ void __launch_bounds__(256)
base_first_diff(Real_ptr x, Real_ptr y, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        x[i] = y[i + 1] - y[i];
    }
}

// FIRST_MIN: the first index of the smallest x[i]. Each block reduces its (value, index) pairs in
// shared memory and writes its winner to block_val/block_loc[blockIdx.x]; the host picks the winner of
// the blocks (RAJAPerf's "blkhst" tuning). Ties go to the lower index.
extern "C" __global__ void __launch_bounds__(256)
base_first_min(Real_ptr x, Real_ptr block_val, Index_type* block_loc, Real_type init_val, Index_type init_loc,
               Index_type iend)
{
    __shared__ Real_type vals[block_size];
    __shared__ Index_type locs[block_size];
    Real_type val = init_val;
    Index_type loc = init_loc;
    for (Index_type i = blockIdx.x * block_size + threadIdx.x; i < iend; i += gridDim.x * block_size) {
        if (x[i] < val) {
            val = x[i];
            loc = i;
        }
    }
    vals[threadIdx.x] = val;
    locs[threadIdx.x] = loc;
    __syncthreads();
    for (unsigned s = block_size / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) {
            const Real_type other_val = vals[threadIdx.x + s];
            const Index_type other_loc = locs[threadIdx.x + s];
            if (other_val < vals[threadIdx.x] || (other_val == vals[threadIdx.x] && other_loc < locs[threadIdx.x])) {
                vals[threadIdx.x] = other_val;
                locs[threadIdx.x] = other_loc;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        block_val[blockIdx.x] = vals[0];
        block_loc[blockIdx.x] = locs[0];
    }
}

// FIRST_SUM: x[i] = y[i - 1] + y[i] for i in [1, iend)
extern "C" __global__ void __launch_bounds__(256)
base_first_sum(Real_ptr x, Real_ptr y, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i > 0 && i < iend) {
        x[i] = y[i - 1] + y[i];
    }
}

// GEN_LIN_RECUR, loop 1: k in [0, N)
extern "C" __global__ void __launch_bounds__(256)
base_gen_lin_recur_1(Real_ptr b5, Real_ptr stb5, Real_ptr sa, Real_ptr sb, Index_type kb5i, Index_type N)
{
    const Index_type k = blockIdx.x * block_size + threadIdx.x;
    if (k < N) {
        b5[k + kb5i] = sa[k] + stb5[k] * sb[k];
        stb5[k] = b5[k + kb5i] - stb5[k];
    }
}

// GEN_LIN_RECUR, loop 2: i in [1, N], k = N - i
extern "C" __global__ void __launch_bounds__(256)
base_gen_lin_recur_2(Real_ptr b5, Real_ptr stb5, Real_ptr sa, Real_ptr sb, Index_type kb5i, Index_type N)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i > 0 && i < N + 1) {
        const Index_type k = N - i;
        b5[k + kb5i] = sa[k] + stb5[k] * sb[k];
        stb5[k] = b5[k + kb5i] - stb5[k];
    }
}

// HYDRO_1D: x[i] = q + y[i] * (r * z[i + 10] + t * z[i + 11])
extern "C" __global__ void __launch_bounds__(256)
base_hydro_1d(Real_ptr x, Real_ptr y, Real_ptr z, Real_type q, Real_type r, Real_type t, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        x[i] = q + y[i] * (r * z[i + 10] + t * z[i + 11]);
    }
}

// HYDRO_2D: three stencil loops over the interior of row-major kn x jn grids, element (k, j) at
// j + k*jn. Block (32, 8), grid (ceil((jn-2)/32), ceil((kn-2)/8)): j on x, k on y.
#define HYDRO_2D_INDEX                                          \
    const Index_type j = 1 + blockIdx.x * 32 + threadIdx.x;     \
    const Index_type k = 1 + blockIdx.y * 8 + threadIdx.y;

extern "C" __global__ void __launch_bounds__(256)
base_hydro_2d_1(Real_ptr za, Real_ptr zb, Real_ptr zp, Real_ptr zq, Real_ptr zr, Real_ptr zm,
                Index_type jn, Index_type kn)
{
    HYDRO_2D_INDEX
    if (j < jn - 1 && k < kn - 1) {
        const Index_type kj = j + k * jn;
        za[kj] = (zp[kj + jn - 1] + zq[kj + jn - 1] - zp[kj - 1] - zq[kj - 1])
               * (zr[kj] + zr[kj - 1]) / (zm[kj - 1] + zm[kj + jn - 1]);
        zb[kj] = (zp[kj - 1] + zq[kj - 1] - zp[kj] - zq[kj])
               * (zr[kj] + zr[kj - jn]) / (zm[kj] + zm[kj - 1]);
    }
}

extern "C" __global__ void __launch_bounds__(256)
base_hydro_2d_2(Real_ptr zu, Real_ptr zv, Real_ptr za, Real_ptr zb, Real_ptr zz, Real_ptr zr, Real_type s,
                Index_type jn, Index_type kn)
{
    HYDRO_2D_INDEX
    if (j < jn - 1 && k < kn - 1) {
        const Index_type kj = j + k * jn;
        zu[kj] += s * (za[kj] * (zz[kj] - zz[kj + 1]) - za[kj - 1] * (zz[kj] - zz[kj - 1])
                     - zb[kj] * (zz[kj] - zz[kj - jn]) + zb[kj + jn] * (zz[kj] - zz[kj + jn]));
        zv[kj] += s * (za[kj] * (zr[kj] - zr[kj + 1]) - za[kj - 1] * (zr[kj] - zr[kj - 1])
                     - zb[kj] * (zr[kj] - zr[kj - jn]) + zb[kj + jn] * (zr[kj] - zr[kj + jn]));
    }
}

extern "C" __global__ void __launch_bounds__(256)
base_hydro_2d_3(Real_ptr zrout, Real_ptr zzout, Real_ptr zr, Real_ptr zz, Real_ptr zu, Real_ptr zv, Real_type t,
                Index_type jn, Index_type kn)
{
    HYDRO_2D_INDEX
    if (j < jn - 1 && k < kn - 1) {
        const Index_type kj = j + k * jn;
        zrout[kj] = zr[kj] + t * zu[kj];
        zzout[kj] = zz[kj] + t * zv[kj];
    }
}

// INT_PREDICT: px[i] = a 9-term linear combination of the planes px[i + k*offset]
extern "C" __global__ void __launch_bounds__(256)
base_int_predict(Real_ptr px, Real_type dm22, Real_type dm23, Real_type dm24, Real_type dm25, Real_type dm26,
                 Real_type dm27, Real_type dm28, Real_type c0, Index_type offset, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        px[i] = dm28 * px[i + offset * 12] + dm27 * px[i + offset * 11]
              + dm26 * px[i + offset * 10] + dm25 * px[i + offset * 9]
              + dm24 * px[i + offset * 8] + dm23 * px[i + offset * 7]
              + dm22 * px[i + offset * 6]
              + c0 * (px[i + offset * 4] + px[i + offset * 5])
              + px[i + offset * 2];
    }
}

// PLANCKIAN: y[i] = u[i] / v[i]; w[i] = x[i] / (exp(y[i]) - 1)
extern "C" __global__ void __launch_bounds__(256)
base_planckian(Real_ptr x, Real_ptr y, Real_ptr u, Real_ptr v, Real_ptr w, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        y[i] = u[i] / v[i];
        w[i] = x[i] / (exp(y[i]) - 1.0);
    }
}

// TRIDIAG_ELIM: xout[i] = z[i] * (y[i] - xin[i - 1]) for i in [1, iend)
extern "C" __global__ void __launch_bounds__(256)
base_tridiag_elim(Real_ptr xout, Real_ptr xin, Real_ptr y, Real_ptr z, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i > 0 && i < iend) {
        xout[i] = z[i] * (y[i] - xin[i - 1]);
    }
}
