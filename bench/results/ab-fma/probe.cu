// Probe: what FMA contraction is worth to RAJAPerf's streaming kernels at 1e6 doubles on one GPU.
// RAJAPerf's raja-perf.exe is built by nvcc with its default --fmad=true (and -restrict), so its DAXPY,
// TRIAD, EOS and HYDRO_1D multiply-adds are fused; rs2gpu keeps Rust's two roundings (--fmad=false unless
// a kernel opts in with fast_math). Each kernel here is RAJAPerf's Base_CUDA shape (block 256, one thread
// per element, Index_type long), written twice: `_fma` as plain C++ (contracted under the default flags)
// and `_rn` through __dmul_rn/__dadd_rn, which are never contracted. ADD has no multiply-add: its two
// kernels are the same code, the control.
//   nvcc -O3 -arch=sm_90 -restrict -o probe probe.cu && ./probe ROUNDS
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <vector>
#include <algorithm>
#include <chrono>
#include <functional>
#include <random>
#include <string>
typedef double f64;
#define LB __launch_bounds__(256)
#define RB __restrict__
#define MUL(a, b) __dmul_rn(a, b)
#define ADDD(a, b) __dadd_rn(a, b)

extern "C" __global__ void LB add_fma(f64* RB c, const f64* RB a, const f64* RB b, long n) {
  const long i = blockIdx.x * 256 + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }
extern "C" __global__ void LB add_rn(f64* RB c, const f64* RB a, const f64* RB b, long n) {
  const long i = blockIdx.x * 256 + threadIdx.x; if (i < n) c[i] = ADDD(a[i], b[i]); }
extern "C" __global__ void LB daxpy_fma(f64* RB y, const f64* RB x, f64 a, long n) {
  const long i = blockIdx.x * 256 + threadIdx.x; if (i < n) y[i] += a * x[i]; }
extern "C" __global__ void LB daxpy_rn(f64* RB y, const f64* RB x, f64 a, long n) {
  const long i = blockIdx.x * 256 + threadIdx.x; if (i < n) y[i] = ADDD(y[i], MUL(a, x[i])); }
extern "C" __global__ void LB triad_fma(f64* RB a, const f64* RB b, const f64* RB c, f64 alpha, long n) {
  const long i = blockIdx.x * 256 + threadIdx.x; if (i < n) a[i] = b[i] + alpha * c[i]; }
extern "C" __global__ void LB triad_rn(f64* RB a, const f64* RB b, const f64* RB c, f64 alpha, long n) {
  const long i = blockIdx.x * 256 + threadIdx.x; if (i < n) a[i] = ADDD(b[i], MUL(alpha, c[i])); }
extern "C" __global__ void LB eos_fma(f64* RB x, const f64* RB y, const f64* RB z, const f64* RB u, f64 q, f64 r, f64 t, long n) {
  const long i = blockIdx.x * 256 + threadIdx.x;
  if (i < n) x[i] = u[i] + r * (z[i] + r * y[i]) + t * (u[i + 3] + r * (u[i + 2] + r * u[i + 1]) + t * (u[i + 6] + q * (u[i + 5] + q * u[i + 4]))); }
extern "C" __global__ void LB eos_rn(f64* RB x, const f64* RB y, const f64* RB z, const f64* RB u, f64 q, f64 r, f64 t, long n) {
  const long i = blockIdx.x * 256 + threadIdx.x;
  if (i < n) x[i] = ADDD(ADDD(u[i], MUL(r, ADDD(z[i], MUL(r, y[i])))),
                         MUL(t, ADDD(ADDD(u[i + 3], MUL(r, ADDD(u[i + 2], MUL(r, u[i + 1])))),
                                     MUL(t, ADDD(u[i + 6], MUL(q, ADDD(u[i + 5], MUL(q, u[i + 4])))))))); }
extern "C" __global__ void LB hydro_fma(f64* RB x, const f64* RB y, const f64* RB z, f64 q, f64 r, f64 t, long n) {
  const long i = blockIdx.x * 256 + threadIdx.x; if (i < n) x[i] = q + y[i] * (r * z[i + 10] + t * z[i + 11]); }
extern "C" __global__ void LB hydro_rn(f64* RB x, const f64* RB y, const f64* RB z, f64 q, f64 r, f64 t, long n) {
  const long i = blockIdx.x * 256 + threadIdx.x; if (i < n) x[i] = ADDD(q, MUL(y[i], ADDD(MUL(r, z[i + 10]), MUL(t, z[i + 11])))); }

static const long N = 1000000;
static cudaStream_t S;
struct Variant { std::string name; std::function<void()> launch; };
#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { printf("%s: %s\n", #call, cudaGetErrorString(e_)); exit(1); } } while (0)

static double stream_us(const Variant& v, int reps) {
  CHECK(cudaStreamSynchronize(S));
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) v.launch();
  CHECK(cudaStreamSynchronize(S));
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / reps;
}
static double graph_us(const Variant& v, int reps) {
  cudaGraph_t g; cudaGraphExec_t e;
  CHECK(cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal));
  for (int r = 0; r < reps; ++r) v.launch();
  CHECK(cudaStreamEndCapture(S, &g));
  CHECK(cudaGraphInstantiate(&e, g, 0));
  CHECK(cudaGraphLaunch(e, S)); CHECK(cudaStreamSynchronize(S));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  cudaEventRecord(a, S); cudaGraphLaunch(e, S); cudaEventRecord(b, S); CHECK(cudaEventSynchronize(b));
  float ms; cudaEventElapsedTime(&ms, a, b);
  cudaGraphExecDestroy(e); cudaGraphDestroy(g); cudaEventDestroy(a); cudaEventDestroy(b);
  return ms * 1000.0 / reps;
}

static f64* device_random(long n, std::mt19937_64& rng) {
  std::uniform_real_distribution<f64> d(0.5, 2.0);
  std::vector<f64> h(n); for (auto& v : h) v = d(rng);
  f64* p; CHECK(cudaMalloc(&p, n * 8)); CHECK(cudaMemcpy(p, h.data(), n * 8, cudaMemcpyHostToDevice));
  return p;
}

// how many of the first n elements of two device arrays differ in their bits
static long differing(const f64* p, const f64* q, long n) {
  std::vector<f64> a(n), b(n);
  CHECK(cudaMemcpy(a.data(), p, n * 8, cudaMemcpyDeviceToHost)); CHECK(cudaMemcpy(b.data(), q, n * 8, cudaMemcpyDeviceToHost));
  long k = 0; for (long i = 0; i < n; ++i) k += memcmp(&a[i], &b[i], 8) != 0; return k;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 7;
  std::mt19937_64 rng(42);
  f64 *A = device_random(N + 16, rng), *B = device_random(N + 16, rng), *C = device_random(N + 16, rng),
      *U = device_random(N + 16, rng), *X = device_random(N + 16, rng), *X2 = device_random(N + 16, rng);
  CHECK(cudaStreamCreate(&S));
  const unsigned g = (N + 255) / 256;
  const f64 q = 0.5, r = 0.25, t = 0.125, al = 0.75;
  // the two forms of each kernel compute different bits where they fuse (checked before timing)
  eos_fma<<<g, 256, 0, S>>>(X, A, B, U, q, r, t, N); eos_rn<<<g, 256, 0, S>>>(X2, A, B, U, q, r, t, N);
  printf("EOS: fma and rn results differ in %ld of %ld elements\n", differing(X, X2, N), N);
  triad_fma<<<g, 256, 0, S>>>(X, A, B, al, N); triad_rn<<<g, 256, 0, S>>>(X2, A, B, al, N);
  printf("TRIAD: fma and rn results differ in %ld of %ld elements\n", differing(X, X2, N), N);
  std::vector<Variant> vs = {
    {"ADD_fma", [=]{ add_fma<<<g,256,0,S>>>(C, A, B, N); }},
    {"ADD_rn", [=]{ add_rn<<<g,256,0,S>>>(C, A, B, N); }},
    {"DAXPY_fma", [=]{ daxpy_fma<<<g,256,0,S>>>(X, A, al, N); }},
    {"DAXPY_rn", [=]{ daxpy_rn<<<g,256,0,S>>>(X, A, al, N); }},
    {"TRIAD_fma", [=]{ triad_fma<<<g,256,0,S>>>(C, A, B, al, N); }},
    {"TRIAD_rn", [=]{ triad_rn<<<g,256,0,S>>>(C, A, B, al, N); }},
    {"EOS_fma", [=]{ eos_fma<<<g,256,0,S>>>(X2, A, B, U, q, r, t, N); }},
    {"EOS_rn", [=]{ eos_rn<<<g,256,0,S>>>(X2, A, B, U, q, r, t, N); }},
    {"HYDRO_1D_fma", [=]{ hydro_fma<<<g,256,0,S>>>(C, A, B, q, r, t, N); }},
    {"HYDRO_1D_rn", [=]{ hydro_rn<<<g,256,0,S>>>(C, A, B, q, r, t, N); }},
  };
  std::vector<std::vector<double>> st(vs.size()), gr(vs.size());
  for (auto& v : vs) { stream_us(v, 200); graph_us(v, 200); }
  // the two forms of a kernel in turn, their order swapped every round
  for (int round = 0; round < rounds; ++round)
    for (size_t k = 0; k < vs.size(); k += 2)
      for (size_t j : {k + round % 2, k + 1 - round % 2}) { st[j].push_back(stream_us(vs[j], 1000)); gr[j].push_back(graph_us(vs[j], 1000)); }
  CHECK(cudaDeviceSynchronize());
  printf("%-14s %10s %10s %10s %10s   (us per launch, %d rounds of 1000 launches)\n", "variant", "stream_min",
         "stream_med", "graph_min", "graph_med", rounds);
  for (size_t k = 0; k < vs.size(); ++k) {
    auto s = st[k], gg = gr[k]; std::sort(s.begin(), s.end()); std::sort(gg.begin(), gg.end());
    printf("%-14s %10.3f %10.3f %10.3f %10.3f\n", vs[k].name.c_str(), s[0], s[s.size() / 2], gg[0], gg[gg.size() / 2]);
  }
  return 0;
}
