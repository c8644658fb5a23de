// Hand-written CUDA baselines for RAJAPerf's Basic kernels, in the style of its Base_CUDA variants:
// block 256, one thread per element with an `if (i < iend)` guard, plain (not __restrict__) pointers,
// reductions as a shared-memory tree per block plus one atomic per block into a device result.
// Written from the kernels' formulas; compiled by NVRTC with the same flags as rs2gpu's generated code.

typedef double Real_type;
typedef Real_type* Real_ptr;   // RAJAPerf's Real_ptr carries no __restrict__
typedef long long Index_type;  // RAJAPerf's Index_type is std::ptrdiff_t
typedef int Int_type;

constexpr unsigned long long block_size = 256;
constexpr unsigned warps_per_block = block_size / 32;

// ---------------------------------------------------------------------------------------------------
// Helpers

// atomicMin / atomicMax for doubles through a compare-and-swap loop on the 64-bit pattern, as RAJA's
// CUDA atomics do for types without a native instruction.
__device__ void atomic_min_real(Real_type* address, Real_type value)
{
    unsigned long long* word = (unsigned long long*)address;
    unsigned long long seen = *word;
    while (value < __longlong_as_double(seen)) {
        const unsigned long long expected = seen;
        seen = atomicCAS(word, expected, (unsigned long long)__double_as_longlong(value));
        if (seen == expected) break;
    }
}

__device__ void atomic_max_real(Real_type* address, Real_type value)
{
    unsigned long long* word = (unsigned long long*)address;
    unsigned long long seen = *word;
    while (value > __longlong_as_double(seen)) {
        const unsigned long long expected = seen;
        seen = atomicCAS(word, expected, (unsigned long long)__double_as_longlong(value));
        if (seen == expected) break;
    }
}

// Inclusive prefix sum of one value per thread over the block (warp shuffles, then the warp totals);
// `total` receives the block's sum. Every thread of the block must call it.
__device__ Index_type block_inclusive_scan(Index_type value, Index_type* total)
{
    __shared__ Index_type warp_totals[warps_per_block];
    const unsigned lane = threadIdx.x % 32;
    const unsigned warp = threadIdx.x / 32;
    for (unsigned offset = 1; offset < 32; offset *= 2) {
        const Index_type below = __shfl_up_sync(0xffffffffu, value, offset);
        if (lane >= offset) value += below;
    }
    if (lane == 31) warp_totals[warp] = value;
    __syncthreads();
    if (warp == 0) {
        Index_type t = lane < warps_per_block ? warp_totals[lane] : 0;
        for (unsigned offset = 1; offset < warps_per_block; offset *= 2) {
            const Index_type below = __shfl_up_sync(0xffffffffu, t, offset);
            if (lane >= offset) t += below;
        }
        if (lane < warps_per_block) warp_totals[lane] = t;
    }
    __syncthreads();
    if (warp > 0) value += warp_totals[warp - 1];
    *total = warp_totals[warps_per_block - 1];
    return value;
}

// Single-pass scan across blocks with decoupled look-back. Each tile (block) publishes its own sum as
// soon as it is known (flag AGGREGATE), then walks back over its predecessors adding their sums until it
// meets an inclusive prefix (flag PREFIX), and publishes its own inclusive prefix. `status` holds one
// word per tile, zeroed before every launch; `tile_counter` hands out tile numbers in launch order so a
// tile only ever waits for tiles that are already running. Returns the sum of all earlier tiles.
constexpr unsigned long long FLAG_AGGREGATE = 1ull << 62;
constexpr unsigned long long FLAG_PREFIX = 2ull << 62;
constexpr unsigned long long VALUE_MASK = (1ull << 62) - 1;

__device__ Index_type look_back(unsigned long long* status, unsigned long long tile, Index_type aggregate)
{
    if (tile == 0) {
        atomicExch(&status[0], FLAG_PREFIX | (unsigned long long)aggregate);
        return 0;
    }
    atomicExch(&status[tile], FLAG_AGGREGATE | (unsigned long long)aggregate);
    Index_type before = 0;
    long long t = (long long)tile - 1;
    while (true) {
        const unsigned long long word = ((volatile unsigned long long*)status)[t];
        const unsigned long long flag = word & ~VALUE_MASK;
        if (flag == 0) continue;  // that tile has not published yet
        before += (Index_type)(word & VALUE_MASK);
        if (flag == FLAG_PREFIX) break;
        --t;
    }
    atomicExch(&status[tile], FLAG_PREFIX | (unsigned long long)(before + aggregate));
    return before;
}

// ---------------------------------------------------------------------------------------------------
// Elementwise kernels

// ARRAY_OF_PTRS: y[i] = x.array[0][i] + ... + x.array[array_size-1][i], the pointers passed by value.
struct ArrayOfPtrs {
    Real_ptr array[26];
};

extern "C" __global__ void __launch_bounds__(256)
base_array_of_ptrs(Real_ptr y, ArrayOfPtrs x, Index_type array_size, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        Real_type yi = 0.0;
        for (Index_type a = 0; a < array_size; ++a) {
            yi += x.array[a][i];
        }
        y[i] = yi;
    }
}

// COPY8: y_k[i] = x_k[i], k = 0..7
extern "C" __global__ void __launch_bounds__(256)
base_copy8(Real_ptr y0, Real_ptr y1, Real_ptr y2, Real_ptr y3, Real_ptr y4, Real_ptr y5, Real_ptr y6, Real_ptr y7,
           Real_ptr x0, Real_ptr x1, Real_ptr x2, Real_ptr x3, Real_ptr x4, Real_ptr x5, Real_ptr x6, Real_ptr x7,
           Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
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

// DAXPY: y[i] += a * x[i]
extern "C" __global__ void __launch_bounds__(256)
base_daxpy(Real_ptr y, Real_ptr x, Real_type a, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        y[i] += a * x[i];
    }
}

// DAXPY_ATOMIC: atomicAdd(&y[i], a * x[i]); no two threads share an address
extern "C" __global__ void __launch_bounds__(256)
base_daxpy_atomic(Real_ptr y, Real_ptr x, Real_type a, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        atomicAdd(&y[i], a * x[i]);
    }
}

// IF_QUAD: the real roots of a*x^2 + b*x + c, or zeros when there are none
extern "C" __global__ void __launch_bounds__(256)
base_if_quad(Real_ptr a, Real_ptr b, Real_ptr c, Real_ptr x1, Real_ptr x2, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        Real_type s = b[i] * b[i] - 4.0 * a[i] * c[i];
        if (s >= 0) {
            s = sqrt(s);
            x2[i] = (-b[i] + s) / (2.0 * a[i]);
            x1[i] = (-b[i] - s) / (2.0 * a[i]);
        } else {
            x2[i] = 0.0;
            x1[i] = 0.0;
        }
    }
}

// INDEXLIST: list[count++] = i for every x[i] < 0, in order of i, as one kernel: a block scan of the
// flags, a decoupled look-back for the number of entries before the block, then the scatter. The last
// tile writes the list length to *len.
extern "C" __global__ void __launch_bounds__(256)
base_indexlist(Real_ptr x, Int_type* list, unsigned long long* status, unsigned* tile_counter, Index_type* len,
               Index_type iend)
{
    __shared__ unsigned long long tile;
    __shared__ Index_type tile_base;
    if (threadIdx.x == 0) tile = atomicAdd(tile_counter, 1u);
    __syncthreads();
    const Index_type i = tile * block_size + threadIdx.x;
    const Index_type flag = (i < iend && x[i] < 0.0) ? 1 : 0;
    Index_type aggregate;
    const Index_type inclusive = block_inclusive_scan(flag, &aggregate);
    if (threadIdx.x == 0) tile_base = look_back(status, tile, aggregate);
    __syncthreads();
    if (flag) {
        list[tile_base + inclusive - 1] = (Int_type)i;
    }
    if (tile == gridDim.x - 1 && threadIdx.x == block_size - 1) {
        *len = tile_base + inclusive;
    }
}

// INDEXLIST_3LOOP, loop 1: counts[i] = 1 where x[i] < 0, else 0
extern "C" __global__ void __launch_bounds__(256)
base_indexlist_3loop_counts(Real_ptr x, Index_type* counts, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        counts[i] = (x[i] < 0.0) ? 1 : 0;
    }
}

// INDEXLIST_3LOOP, loop 2: exclusive prefix sum of counts[0..iend), in place, single pass
extern "C" __global__ void __launch_bounds__(256)
base_indexlist_3loop_scan(Index_type* counts, unsigned long long* status, unsigned* tile_counter, Index_type iend)
{
    __shared__ unsigned long long tile;
    __shared__ Index_type tile_base;
    if (threadIdx.x == 0) tile = atomicAdd(tile_counter, 1u);
    __syncthreads();
    const Index_type i = tile * block_size + threadIdx.x;
    const Index_type value = i < iend ? counts[i] : 0;
    Index_type aggregate;
    const Index_type inclusive = block_inclusive_scan(value, &aggregate);
    if (threadIdx.x == 0) tile_base = look_back(status, tile, aggregate);
    __syncthreads();
    if (i < iend) {
        counts[i] = tile_base + inclusive - value;
    }
}

// INDEXLIST_3LOOP, loop 3: list[counts[i]] = i where the scan steps up
extern "C" __global__ void __launch_bounds__(256)
base_indexlist_3loop_scatter(Index_type* counts, Int_type* list, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        if (counts[i] != counts[i + 1]) {
            list[counts[i]] = (Int_type)i;
        }
    }
}

// INIT3: out1[i] = out2[i] = out3[i] = -in1[i] - in2[i]
extern "C" __global__ void __launch_bounds__(256)
base_init3(Real_ptr out1, Real_ptr out2, Real_ptr out3, Real_ptr in1, Real_ptr in2, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        out1[i] = out2[i] = out3[i] = -in1[i] - in2[i];
    }
}

// INIT_VIEW1D: a[i] = (i + 1) * v
extern "C" __global__ void __launch_bounds__(256)
base_init_view1d(Real_ptr a, Real_type v, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        a[i] = (i + 1) * v;
    }
}

// INIT_VIEW1D_OFFSET: a[i - ibegin] = i * v for i in [ibegin, iend)
extern "C" __global__ void __launch_bounds__(256)
base_init_view1d_offset(Real_ptr a, Real_type v, Index_type ibegin, Index_type iend)
{
    const Index_type i = ibegin + blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        a[i - ibegin] = i * v;
    }
}

// MAT_MAT_SHARED: C = A * B (row-major N x N) through 16 x 16 shared-memory tiles, zero-padded at the edges.
// Block (16, 16), grid (ceil(N/16), ceil(N/16)).
constexpr int tile_size = 16;

extern "C" __global__ void __launch_bounds__(256)
base_mat_mat_shared(Index_type N, Real_ptr C, Real_ptr A, Real_ptr B)
{
    __shared__ Real_type As[tile_size][tile_size];
    __shared__ Real_type Bs[tile_size][tile_size];
    __shared__ Real_type Cs[tile_size][tile_size];
    const Index_type tx = threadIdx.x;
    const Index_type ty = threadIdx.y;
    const Index_type col = blockIdx.x * tile_size + tx;
    const Index_type row = blockIdx.y * tile_size + ty;
    Cs[ty][tx] = 0.0;
    for (Index_type k = 0; k < (tile_size + N - 1) / tile_size; ++k) {
        As[ty][tx] = (row < N && k * tile_size + tx < N) ? A[row * N + k * tile_size + tx] : 0.0;
        Bs[ty][tx] = (col < N && k * tile_size + ty < N) ? B[(k * tile_size + ty) * N + col] : 0.0;
        __syncthreads();
        for (Index_type n = 0; n < tile_size; ++n) {
            Cs[ty][tx] += As[ty][n] * Bs[n][tx];
        }
        __syncthreads();
    }
    if (row < N && col < N) {
        C[col + N * row] = Cs[ty][tx];
    }
}

// MULADDSUB: out1 = in1 * in2; out2 = in1 + in2; out3 = in1 - in2
extern "C" __global__ void __launch_bounds__(256)
base_muladdsub(Real_ptr out1, Real_ptr out2, Real_ptr out3, Real_ptr in1, Real_ptr in2, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        out1[i] = in1[i] * in2[i];
        out2[i] = in1[i] + in2[i];
        out3[i] = in1[i] - in2[i];
    }
}

// MULTI_REDUCE: values[bins[i]] += data[i]. Each block adds into shared memory (each bin replicated 16
// times, a thread picking the replica of its lane mod 16), then adds its per-bin sums into the device
// result, replicated `global_replication` times (bin-major); the host sums the replicas.
constexpr int shared_replication = 16;

extern "C" __global__ void __launch_bounds__(256)
base_multi_reduce(Real_ptr values, Real_ptr data, Index_type* bins, Index_type num_bins,
                  Index_type global_replication, Index_type iend)
{
    extern __shared__ Real_type shared_values[];
    for (Index_type t = threadIdx.x; t < num_bins * shared_replication; t += block_size) {
        shared_values[t] = 0.0;
    }
    __syncthreads();
    for (Index_type i = blockIdx.x * block_size + threadIdx.x; i < iend; i += gridDim.x * block_size) {
        atomicAdd(&shared_values[bins[i] * shared_replication + threadIdx.x % shared_replication], data[i]);
    }
    __syncthreads();
    for (Index_type bin = threadIdx.x; bin < num_bins; bin += block_size) {
        Real_type sum = 0.0;
        for (int r = 0; r < shared_replication; ++r) {
            sum += shared_values[bin * shared_replication + r];
        }
        atomicAdd(&values[bin * global_replication + blockIdx.x % global_replication], sum);
    }
}

// NESTED_INIT: array[i + ni*(j + nj*k)] = 1e-8 * i * j * k. Block (32, 8, 1), grid (ceil(ni/32),
// ceil(nj/8), nk): i on x, j on y, k on z.
extern "C" __global__ void __launch_bounds__(256)
base_nested_init(Real_ptr array, Index_type ni, Index_type nj, Index_type nk)
{
    const Index_type i = blockIdx.x * 32 + threadIdx.x;
    const Index_type j = blockIdx.y * 8 + threadIdx.y;
    const Index_type k = blockIdx.z;
    if (i < ni && j < nj && k < nk) {
        array[i + ni * (j + nj * k)] = 0.00000001 * i * j * k;
    }
}

// PI_ATOMIC: every thread adds its term to one address
extern "C" __global__ void __launch_bounds__(256)
base_pi_atomic(Real_ptr pi, Real_type dx, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        const Real_type x = (i + 0.5) * dx;
        atomicAdd(pi, dx / (1.0 + x * x));
    }
}

// ---------------------------------------------------------------------------------------------------
// Reductions: a shared-memory tree per block, then one atomic per block into the device result

// PI_REDUCE: *pi += sum of dx / (1 + x^2), x = (i + 0.5) dx
extern "C" __global__ void __launch_bounds__(256)
base_pi_reduce(Real_ptr pi, Real_type dx, Index_type iend)
{
    extern __shared__ Real_type ppi[];
    ppi[threadIdx.x] = 0.0;
    for (Index_type i = blockIdx.x * block_size + threadIdx.x; i < iend; i += gridDim.x * block_size) {
        const Real_type x = (i + 0.5) * dx;
        ppi[threadIdx.x] += dx / (1.0 + x * x);
    }
    __syncthreads();
    for (unsigned s = block_size / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) {
            ppi[threadIdx.x] += ppi[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(pi, ppi[0]);
    }
}

// REDUCE3_INT: sum, min and max of vec; the host initialises the results to 0, INT_MAX and INT_MIN
extern "C" __global__ void __launch_bounds__(256)
base_reduce3_int(Int_type* vec, Int_type* vsum, Int_type* vmin, Int_type* vmax,
                 Int_type vmin_init, Int_type vmax_init, Index_type iend)
{
    extern __shared__ Int_type psum[];
    Int_type* pmin = psum + block_size;
    Int_type* pmax = pmin + block_size;
    psum[threadIdx.x] = 0;
    pmin[threadIdx.x] = vmin_init;
    pmax[threadIdx.x] = vmax_init;
    for (Index_type i = blockIdx.x * block_size + threadIdx.x; i < iend; i += gridDim.x * block_size) {
        psum[threadIdx.x] += vec[i];
        pmin[threadIdx.x] = min(pmin[threadIdx.x], vec[i]);
        pmax[threadIdx.x] = max(pmax[threadIdx.x], vec[i]);
    }
    __syncthreads();
    for (unsigned s = block_size / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) {
            psum[threadIdx.x] += psum[threadIdx.x + s];
            pmin[threadIdx.x] = min(pmin[threadIdx.x], pmin[threadIdx.x + s]);
            pmax[threadIdx.x] = max(pmax[threadIdx.x], pmax[threadIdx.x + s]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(vsum, psum[0]);
        atomicMin(vmin, pmin[0]);
        atomicMax(vmax, pmax[0]);
    }
}

// REDUCE_STRUCT: sum, min and max of the x and of the y coordinates of the points. `result` holds
// (xsum, xmin, xmax, ysum, ymin, ymax), initialised by the host to (0, DBL_MAX, -DBL_MAX) twice.
extern "C" __global__ void __launch_bounds__(256)
base_reduce_struct(Real_ptr x, Real_ptr y, Real_ptr result, Real_type init_min, Real_type init_max, Index_type iend)
{
    extern __shared__ Real_type pxsum[];
    Real_type* pxmin = pxsum + 1 * block_size;
    Real_type* pxmax = pxsum + 2 * block_size;
    Real_type* pysum = pxsum + 3 * block_size;
    Real_type* pymin = pxsum + 4 * block_size;
    Real_type* pymax = pxsum + 5 * block_size;
    pxsum[threadIdx.x] = 0.0;
    pxmin[threadIdx.x] = init_min;
    pxmax[threadIdx.x] = init_max;
    pysum[threadIdx.x] = 0.0;
    pymin[threadIdx.x] = init_min;
    pymax[threadIdx.x] = init_max;
    for (Index_type i = blockIdx.x * block_size + threadIdx.x; i < iend; i += gridDim.x * block_size) {
        pxsum[threadIdx.x] += x[i];
        pxmin[threadIdx.x] = min(pxmin[threadIdx.x], x[i]);
        pxmax[threadIdx.x] = max(pxmax[threadIdx.x], x[i]);
        pysum[threadIdx.x] += y[i];
        pymin[threadIdx.x] = min(pymin[threadIdx.x], y[i]);
        pymax[threadIdx.x] = max(pymax[threadIdx.x], y[i]);
    }
    __syncthreads();
    for (unsigned s = block_size / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) {
            pxsum[threadIdx.x] += pxsum[threadIdx.x + s];
            pxmin[threadIdx.x] = min(pxmin[threadIdx.x], pxmin[threadIdx.x + s]);
            pxmax[threadIdx.x] = max(pxmax[threadIdx.x], pxmax[threadIdx.x + s]);
            pysum[threadIdx.x] += pysum[threadIdx.x + s];
            pymin[threadIdx.x] = min(pymin[threadIdx.x], pymin[threadIdx.x + s]);
            pymax[threadIdx.x] = max(pymax[threadIdx.x], pymax[threadIdx.x + s]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(&result[0], pxsum[0]);
        atomic_min_real(&result[1], pxmin[0]);
        atomic_max_real(&result[2], pxmax[0]);
        atomicAdd(&result[3], pysum[0]);
        atomic_min_real(&result[4], pymin[0]);
        atomic_max_real(&result[5], pymax[0]);
    }
}

// TRAP_INT: *sumx += sum of 1 / sqrt((x - xp)^2 + (y - yp)^2), x = x0 + i h
__device__ Real_type trap_int_func(Real_type x, Real_type y, Real_type xp, Real_type yp)
{
    Real_type denom = (x - xp) * (x - xp) + (y - yp) * (y - yp);
    denom = 1.0 / sqrt(denom);
    return denom;
}

extern "C" __global__ void __launch_bounds__(256)
base_trap_int(Real_type x0, Real_type xp, Real_type y, Real_type yp, Real_type h, Real_ptr sumx, Index_type iend)
{
    extern __shared__ Real_type psumx[];
    psumx[threadIdx.x] = 0.0;
    for (Index_type i = blockIdx.x * block_size + threadIdx.x; i < iend; i += gridDim.x * block_size) {
        const Real_type x = x0 + i * h;
        psumx[threadIdx.x] += trap_int_func(x, y, xp, yp);
    }
    __syncthreads();
    for (unsigned s = block_size / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) {
            psumx[threadIdx.x] += psumx[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(sumx, psumx[0]);
    }
}
