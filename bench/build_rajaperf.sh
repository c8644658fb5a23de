#!/usr/bin/env bash
# Build RAJAPerf's raja-perf.exe for the H200 the way its reference figures were measured (bench/anchor.py:
# develop 9af20b3, CUDA 13.0, sm_90, block size 256), so bench/rust_reps.py --rajaperf can run it on the GPU
# machine in the same run as the Rust API's figures. The GPU machine has no compilers for it: build here and
# carry build/rajaperf/.
#   bench/build_rajaperf.sh RAJAPERF_SRC [BUILD_DIR]
# RAJAPERF_SRC is a RAJAPerf checkout with its submodules (blt, tpl/RAJA with tpl/camp and tpl/desul); it is
# not changed. The build works on a copy of it in BUILD_DIR (default: a new temporary folder), where:
#   - bench/rajaperf_subset.py keeps only the kernels bench/rust-reps times (about 80 files to compile with
#     nvcc instead of 550: about 6 minutes on two cores);
#   - CMakeLists.txt asks for C++17 instead of C++14, which CUDA 13's CCCL needs;
#   - a header included in every compilation gives cudaMemAdvise the device-number form RAJA calls, which
#     CUDA 13 replaced with a cudaMemLocation.
# None of these touches a kernel.
set -euo pipefail
if [ $# -lt 1 ] || [ ! -f "$1/CMakeLists.txt" ] || [ ! -d "$1/tpl/RAJA/include" ]; then
    echo "usage: bench/build_rajaperf.sh RAJAPERF_SRC [BUILD_DIR] (a RAJAPerf checkout with its submodules)" >&2
    exit 2
fi
top=$(git rev-parse --show-toplevel)
nvcc=$(command -v nvcc) || { echo "error: nvcc is not on PATH" >&2; exit 1; }
# the toolkit's root as nvcc itself reports it (nvcc on PATH may be a wrapper script)
cuda=$(nvcc --dryrun -c -x cu /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' | head -1)
[ -f "$cuda/include/cuda_runtime_api.h" ] || { echo "error: no CUDA toolkit found at '$cuda'" >&2; exit 1; }
cuda=$(cd "$cuda" && pwd -P)
nvcc=$cuda/bin/nvcc
work=${2:-$(mktemp -d -t rajaperf-build-XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
rm -rf "$work/src"
cp -r "$1" "$work/src"
python3 "$top/bench/rajaperf_subset.py" "$work/src"
sed -i 's/set(CMAKE_CXX_STANDARD 14)/set(CMAKE_CXX_STANDARD 17)/; s/set(BLT_CXX_STD c++14)/set(BLT_CXX_STD c++17)/;
        s/set(CMAKE_CUDA_STANDARD 14)/set(CMAKE_CUDA_STANDARD 17)/' "$work/src/CMakeLists.txt"
cat > "$work/cuda13_mem_advise.h" <<'END'
#pragma once
#include <cuda_runtime_api.h>
#if CUDART_VERSION >= 13000
// RAJA and RAJAPerf call cudaMemAdvise with a device number, as CUDA 12 declared it.
static inline cudaError_t cudaMemAdvise(const void* ptr, size_t count, cudaMemoryAdvise advice, int device)
{
    cudaMemLocation location;
    location.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    location.id = device == cudaCpuDeviceId ? 0 : device;
    return cudaMemAdvise(ptr, count, advice, location);
}
#endif
END

started=$(date +%s)
build="$work/build"
cmake -S "$work/src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++ \
    -DENABLE_CUDA=On -DCMAKE_CUDA_COMPILER="$nvcc" -DCUDA_TOOLKIT_ROOT_DIR="$cuda" \
    -DCUB_DIR="$cuda/include/cccl" -DCMAKE_CUDA_ARCHITECTURES=90 -DRAJA_PERFSUITE_GPU_BLOCKSIZES=256 \
    -DENABLE_OPENMP=Off -DENABLE_TESTS=Off -DENABLE_RAJA_SEQUENTIAL=Off \
    "-DCMAKE_CUDA_FLAGS=-include $work/cuda13_mem_advise.h" \
    "-DCMAKE_CXX_FLAGS=-I$cuda/include -include $work/cuda13_mem_advise.h" > "$work/cmake.log"
echo "configured in $build (log: $work/cmake.log); building raja-perf.exe with $(nproc) jobs"
make -C "$build" -j"$(nproc)" raja-perf.exe > "$work/make.log" 2>&1 || {
    grep -m 20 -B 2 -A 6 "error" "$work/make.log" >&2
    echo "error: the build failed (log: $work/make.log)" >&2
    exit 1
}
mkdir -p "$top/build/rajaperf"
strip -o "$top/build/rajaperf/raja-perf.exe" "$build/bin/raja-perf.exe"
echo "raja-perf.exe: build/rajaperf/raja-perf.exe ($(du -h "$top/build/rajaperf/raja-perf.exe" | cut -f1)," \
     "$(( ($(date +%s) - started) / 60 )) minutes)"
