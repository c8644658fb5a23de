// Probe: what the length parameters and the loop form cost a short streaming kernel.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
typedef unsigned long long usize;
typedef unsigned int u32;
typedef double f64;
struct __align__(16) l2 { f64 lane[2]; };
#define RB __restrict__
#define LB __launch_bounds__(256)

// ---- ADD: c = a + b
extern "C" __global__ void LB add_hand(f64* c, f64* a, f64* b, long iend) {
  const long i = blockIdx.x * 256 + threadIdx.x; if (i < iend) c[i] = a[i] + b[i]; }
extern "C" __global__ void LB add_hand8(f64* RB c, const usize cl, const f64* RB a, const usize al, const f64* RB b, const usize bl, const usize s, const usize n) {
  const long i = blockIdx.x * 256 + threadIdx.x; if (i < (long)n) c[i] = a[i] + b[i]; }
extern "C" __global__ void LB add_hand5(f64* RB c, const f64* RB a, const f64* RB b, const usize s, const usize n) {
  const long i = blockIdx.x * 256 + threadIdx.x; if (i < (long)n) c[i] = a[i] + b[i]; }
extern "C" __global__ void LB add_gs8(f64* RB c, const usize cl, const f64* RB a, const usize al, const f64* RB b, const usize bl, const usize s, const usize n) {
  for (usize t = (usize)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += (usize)gridDim.x * blockDim.x) { const usize i = s + t; c[i] = a[i] + b[i]; } }
extern "C" __global__ void LB add_gs5(f64* RB c, const f64* RB a, const f64* RB b, const usize s, const usize n) {
  for (usize t = (usize)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += (usize)gridDim.x * blockDim.x) { const usize i = s + t; c[i] = a[i] + b[i]; } }
extern "C" __global__ void LB add_cov8(f64* RB c, const usize cl, const f64* RB a, const usize al, const f64* RB b, const usize bl, const usize s, const usize n) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x; if (t < (u32)n) { const usize i = s + t; c[i] = a[i] + b[i]; } }
extern "C" __global__ void LB add_cov5(f64* RB c, const f64* RB a, const f64* RB b, const usize s, const usize n) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x; if (t < (u32)n) { const usize i = s + t; c[i] = a[i] + b[i]; } }
extern "C" __global__ void LB add_cov3(f64* RB c, const f64* RB a, const f64* RB b, const u32 n) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { c[i] = a[i] + b[i]; } }
#define VEC_BODY \
  const usize g = n / 2; \
  for (usize x = (usize)blockIdx.x * blockDim.x + threadIdx.x; x < g; x += (usize)gridDim.x * blockDim.x) { \
    const usize f = s + x * 2; const l2 va = *(const l2*)(a + f); const l2 vb = *(const l2*)(b + f); l2 vc; \
    vc.lane[0] = va.lane[0] + vb.lane[0]; vc.lane[1] = va.lane[1] + vb.lane[1]; *(l2*)(c + f) = vc; } \
  for (usize t = g * 2 + (usize)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += (usize)gridDim.x * blockDim.x) { const usize i = s + t; c[i] = a[i] + b[i]; }
extern "C" __global__ void LB add_vec8(f64* RB c, const usize cl, const f64* RB a, const usize al, const f64* RB b, const usize bl, const usize s, const usize n) { VEC_BODY }
extern "C" __global__ void LB add_vec5(f64* RB c, const f64* RB a, const f64* RB b, const usize s, const usize n) { VEC_BODY }
extern "C" __global__ void LB add_vcov5(f64* RB c, const f64* RB a, const f64* RB b, const usize s, const usize n) {
  const u32 x = blockIdx.x * blockDim.x + threadIdx.x; const u32 g = (u32)n / 2;
  if (x < g) { const usize f = s + (usize)x * 2; const l2 va = *(const l2*)(a + f); const l2 vb = *(const l2*)(b + f); l2 vc;
    vc.lane[0] = va.lane[0] + vb.lane[0]; vc.lane[1] = va.lane[1] + vb.lane[1]; *(l2*)(c + f) = vc; }
  else if (x == g && (n & 1)) { const usize i = s + n - 1; c[i] = a[i] + b[i]; } }

// ---- TRIAD: a = b + alpha * c
extern "C" __global__ void LB triad_hand(f64* a, f64* b, f64* c, f64 alpha, long iend) {
  const long i = blockIdx.x * 256 + threadIdx.x; if (i < iend) a[i] = b[i] + alpha * c[i]; }
#define TRIAD_VEC_BODY \
  const usize g = n / 2; \
  for (usize x = (usize)blockIdx.x * blockDim.x + threadIdx.x; x < g; x += (usize)gridDim.x * blockDim.x) { \
    const usize f = s + x * 2; const l2 vb = *(const l2*)(b + f); const l2 vc = *(const l2*)(c + f); l2 va; \
    va.lane[0] = vb.lane[0] + alpha * vc.lane[0]; va.lane[1] = vb.lane[1] + alpha * vc.lane[1]; *(l2*)(a + f) = va; } \
  for (usize t = g * 2 + (usize)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += (usize)gridDim.x * blockDim.x) { const usize i = s + t; a[i] = b[i] + alpha * c[i]; }
extern "C" __global__ void LB triad_vec9(f64* RB a, const usize al, const f64* RB b, const usize bl, const f64* RB c, const usize cl, const f64 alpha, const usize s, const usize n) { TRIAD_VEC_BODY }
extern "C" __global__ void LB triad_vec6(f64* RB a, const f64* RB b, const f64* RB c, const f64 alpha, const usize s, const usize n) { TRIAD_VEC_BODY }
extern "C" __global__ void LB triad_cov6(f64* RB a, const f64* RB b, const f64* RB c, const f64 alpha, const usize s, const usize n) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x; if (t < (u32)n) { const usize i = s + t; a[i] = b[i] + alpha * c[i]; } }
extern "C" __global__ void LB triad_cov9(f64* RB a, const usize al, const f64* RB b, const usize bl, const f64* RB c, const usize cl, const f64 alpha, const usize s, const usize n) {
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x; if (t < (u32)n) { const usize i = s + t; a[i] = b[i] + alpha * c[i]; } }

static const long N = 1000000;
static f64 *A, *B, *C;
static cudaStream_t S;
struct Variant { std::string name; std::function<void()> launch; };

static double stream_us(const Variant& v, int reps) {
  cudaStreamSynchronize(S);
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) v.launch();
  cudaStreamSynchronize(S);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / reps;
}
static double graph_us(const Variant& v, int reps) {
  cudaGraph_t g; cudaGraphExec_t e;
  cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal);
  for (int r = 0; r < reps; ++r) v.launch();
  cudaStreamEndCapture(S, &g);
  cudaGraphInstantiate(&e, g, 0);
  cudaGraphLaunch(e, S); cudaStreamSynchronize(S);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  cudaEventRecord(a, S); cudaGraphLaunch(e, S); cudaEventRecord(b, S); cudaEventSynchronize(b);
  float ms; cudaEventElapsedTime(&ms, a, b);
  cudaGraphExecDestroy(e); cudaGraphDestroy(g); cudaEventDestroy(a); cudaEventDestroy(b);
  return ms * 1000.0 / reps;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 7;
  cudaMalloc(&A, N * 8); cudaMalloc(&B, N * 8); cudaMalloc(&C, N * 8);
  cudaMemset(A, 0, N * 8); cudaMemset(B, 0, N * 8); cudaMemset(C, 0, N * 8);
  cudaStreamCreate(&S);
  const unsigned g1 = (N + 255) / 256, g2 = (N / 2 + 255) / 256;
  const usize n = N, z = 0; const f64 al = 0.5;
  std::vector<Variant> vs = {
    {"add_hand", [=]{ add_hand<<<g1,256,0,S>>>(C,A,B,N); }},
    {"add_hand8", [=]{ add_hand8<<<g1,256,0,S>>>(C,n,A,n,B,n,z,n); }},
    {"add_hand5", [=]{ add_hand5<<<g1,256,0,S>>>(C,A,B,z,n); }},
    {"add_gs8", [=]{ add_gs8<<<g1,256,0,S>>>(C,n,A,n,B,n,z,n); }},
    {"add_gs5", [=]{ add_gs5<<<g1,256,0,S>>>(C,A,B,z,n); }},
    {"add_cov8", [=]{ add_cov8<<<g1,256,0,S>>>(C,n,A,n,B,n,z,n); }},
    {"add_cov5", [=]{ add_cov5<<<g1,256,0,S>>>(C,A,B,z,n); }},
    {"add_cov3", [=]{ add_cov3<<<g1,256,0,S>>>(C,A,B,(u32)n); }},
    {"add_vec8", [=]{ add_vec8<<<g2,256,0,S>>>(C,n,A,n,B,n,z,n); }},
    {"add_vec5", [=]{ add_vec5<<<g2,256,0,S>>>(C,A,B,z,n); }},
    {"add_vcov5", [=]{ add_vcov5<<<g2,256,0,S>>>(C,A,B,z,n); }},
    {"triad_hand", [=]{ triad_hand<<<g1,256,0,S>>>(A,B,C,al,N); }},
    {"triad_vec9", [=]{ triad_vec9<<<g2,256,0,S>>>(A,n,B,n,C,n,al,z,n); }},
    {"triad_vec6", [=]{ triad_vec6<<<g2,256,0,S>>>(A,B,C,al,z,n); }},
    {"triad_cov9", [=]{ triad_cov9<<<g1,256,0,S>>>(A,n,B,n,C,n,al,z,n); }},
    {"triad_cov6", [=]{ triad_cov6<<<g1,256,0,S>>>(A,B,C,al,z,n); }},
  };
  std::vector<std::vector<double>> st(vs.size()), gr(vs.size());
  for (auto& v : vs) { stream_us(v, 200); graph_us(v, 200); }
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < vs.size(); ++k) { st[k].push_back(stream_us(vs[k], 1000)); gr[k].push_back(graph_us(vs[k], 1000)); }
  printf("%-12s %10s %10s %10s %10s\n", "variant", "stream_min", "stream_med", "graph_min", "graph_med");
  for (size_t k = 0; k < vs.size(); ++k) {
    auto s = st[k], g = gr[k]; std::sort(s.begin(), s.end()); std::sort(g.begin(), g.end());
    printf("%-12s %10.3f %10.3f %10.3f %10.3f\n", vs[k].name.c_str(), s[0], s[s.size()/2], g[0], g[g.size()/2]);
  }
  cudaError_t err = cudaDeviceSynchronize();
  printf("status: %s\n", cudaGetErrorString(err));
  return err != cudaSuccess;
}
