// Hand-written CUDA baselines for RAJAPerf's Stream kernels, in the style of its Base_CUDA variants:
// block 256, one thread per element with an `if (i < iend)` guard, plain (not __restrict__) pointers,
// reductions as a shared-memory tree per block plus one atomic per block into a device result.
// Written from the kernels' formulas; compiled by NVRTC with the same flags as rs2gpu's generated code.

typedef double Real_type;
typedef Real_type* Real_ptr;   // RAJAPerf's Real_ptr carries no __restrict__
typedef long long Index_type;  // RAJAPerf's Index_type is std::ptrdiff_t

constexpr unsigned long long block_size = 256;

// ADD: c[i] = a[i] + b[i]
extern "C" __global__ void __launch_bounds__(256)
base_add(Real_ptr c, Real_ptr a, Real_ptr b, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        c[i] = a[i] + b[i];
    }
}

// COPY: c[i] = a[i]
extern "C" __global__ void __launch_bounds__(256)
base_copy(Real_ptr c, Real_ptr a, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        c[i] = a[i];
    }
}

// MUL: b[i] = alpha * c[i]
extern "C" __global__ void __launch_bounds__(256)
base_mul(Real_ptr b, Real_ptr c, Real_type alpha, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        b[i] = alpha * c[i];
    }
}

// TRIAD: a[i] = b[i] + alpha * c[i]
extern "C" __global__ void __launch_bounds__(256)
base_triad(Real_ptr a, Real_ptr b, Real_ptr c, Real_type alpha, Index_type iend)
{
    const Index_type i = blockIdx.x * block_size + threadIdx.x;
    if (i < iend) {
        a[i] = b[i] + alpha * c[i];
    }
}

// DOT: *dprod += sum of a[i] * b[i]. Each thread sums a grid-strided set of products into its slot of
// dynamic shared memory (block_size doubles), the block halves the slots down to one, and thread 0
// adds the block's sum to the device result with one atomicAdd.
extern "C" __global__ void __launch_bounds__(256)
base_dot(Real_ptr a, Real_ptr b, Real_ptr dprod, Index_type iend)
{
    extern __shared__ Real_type pdot[];
    pdot[threadIdx.x] = 0.0;
    for (Index_type i = blockIdx.x * block_size + threadIdx.x; i < iend; i += gridDim.x * block_size) {
        pdot[threadIdx.x] += a[i] * b[i];
    }
    __syncthreads();
    for (unsigned s = block_size / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) {
            pdot[threadIdx.x] += pdot[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(dprod, pdot[0]);
    }
}
