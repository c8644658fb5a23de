#!/usr/bin/env bash
# Everything that needs an NVIDIA GPU, in one run: the GPU tests, compute-sanitizer over the corpus, the
# call-overhead and transfer bench, the cargo-hook example binary and the Rust API's back-to-back bench (if
# built; beside RAJAPerf's own executable where bench/build_rajaperf.sh built it), the user-style suite against
# the libraries (bench/user_suite.py) and the benchmark suite.
#   bench/gpu_checks.sh OUT_DIR [extra bench/run.py options]
# OUT_DIR gets the log, gpu-checks.log. The benchmark's tables and the Rust API's (rust-reps.md) go to
# bench/results, whose history.csv gains their rows; a copy of the tree on a GPU machine brings them back.
# GPU_CHECKS chooses the steps (default: all, in this order): tests,memcheck,racecheck,overhead,cargo,reps,dask,half,
# suite,bench. memcheck and racecheck watch the corpus and the user-style suite's kernels (bench/user_suite.py --sanitize).
# The suite step writes $results/user-suite.md and user-suite.json and adds its rows to $results/history.csv.
# The half step times the half-precision products against torch.matmul (bench/half_products.py: half-products.md),
# runs them under compute-sanitizer's memcheck, racecheck and synccheck, and runs the decode step of
# examples/llm against PyTorch ($results/llm-decode.json).
# The dask step (bench/dask_heat.py, the Dask path against one plain call) runs where dask-cuda is installed
# (bench/gpu_prepare.sh --dask brings its wheels) and writes $results/dask-heat.json.
# bench/gpu_prepare.sh builds, on a machine with rustc, what a GPU machine without it needs.
# Every step runs even if an earlier one fails; the exit status says whether all passed.
set -uo pipefail
out=${1:?usage: bench/gpu_checks.sh OUT_DIR [extra bench/run.py options]}
shift
results=bench/results
steps=",${GPU_CHECKS:-tests,memcheck,racecheck,overhead,cargo,reps,dask,half,suite,bench},"
mkdir -p "$out"
# the commit the installed rs2gpu was built from (bench/gpu_prepare.sh), for the benchmark tables
[ -z "${RS2GPU_BENCH_COMMIT:-}" ] && [ -f .whl/COMMIT ] && export RS2GPU_BENCH_COMMIT="$(cat .whl/COMMIT)"
log="$out/gpu-checks.log"
: > "$log"
status=0
step() { echo "=== $*" | tee -a "$log"; }
wanted() { [[ "$steps" == *",$1,"* ]]; }

if wanted tests; then
    # tests/dask holds no GPU tests, and its modules import dask, which the dask step alone brings
    ignore=()
    python3 -c 'import dask' 2>/dev/null || ignore=(--ignore=tests/dask)
    # without cargo, the cargo step runs the hook program bench/gpu_prepare.sh built for this test
    command -v cargo >/dev/null || ignore+=(--deselect tests/cargo/test_cargo_half.py::test_hook_program_matches_the_cpu_on_the_gpu)
    step "GPU tests: python3 -m pytest -m gpu ${ignore[*]}"
    python3 -P -m pytest -m gpu -q -p no:cacheprovider -rf "${ignore[@]}" 2>&1 | tee -a "$log" | tail -25 || status=1
fi

for tool in memcheck racecheck; do
    wanted "$tool" || continue
    size=20000
    [ "$tool" = racecheck ] && size=2000  # racecheck instruments every shared-memory access
    step "compute-sanitizer --tool $tool python3 bench/sanitize.py --size $size"
    timeout 300 compute-sanitizer --tool "$tool" --print-limit 20 python3 -P bench/sanitize.py --size "$size" 2>&1 \
        | tee -a "$log" | grep -E "SUMMARY|FAILED|Error|RACE" || status=1
    step "compute-sanitizer --tool $tool python3 bench/user_suite.py --sanitize"
    timeout 300 compute-sanitizer --tool "$tool" --print-limit 20 --error-exitcode 1 python3 -P bench/user_suite.py \
        --sanitize 2>&1 | tee -a "$log" | grep -E "SUMMARY|FAILED|Error|RACE"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
done

if wanted overhead; then
    step "python3 bench/call_overhead.py"
    python3 -P bench/call_overhead.py 2>&1 | tee -a "$log" | tail -12 || status=1
fi

binary=build/cargo-hook/rs2gpu-cargo-hook
if wanted cargo && [ -x "$binary" ]; then
    step "$binary (the cargo-hook example, built on a machine with rustc)"
    RS2GPU_NVRTC=$(python3 -c 'import nvidia; print(nvidia.__path__[0])' 2>/dev/null) "$binary" 2>&1 \
        | tee -a "$log" | tail -15 || status=1
fi

binary=build/half-hook/probe
if wanted cargo && [ -x "$binary" ]; then
    step "$binary (tests/cargo/test_cargo_half.py's program: f16 and bf16 through the Cargo hook)"
    RS2GPU_NVRTC=$(python3 -c 'import nvidia; print(nvidia.__path__[0])' 2>/dev/null) "$binary" 2>&1 \
        | tee -a "$log" | tail -5
    grep -q "f16 axpy: true, bf16 expression: true" "$log" || status=1
fi

binary=build/rust-reps/rs2gpu-rust-reps
if wanted reps && [ -x "$binary" ]; then
    # RAJAPerf's own executable (bench/build_rajaperf.sh), where carried, runs in turn with the Rust binary
    rajaperf=()
    [ -x build/rajaperf/raja-perf.exe ] && rajaperf=(--rajaperf build/rajaperf/raja-perf.exe)
    step "python3 bench/rust_reps.py $binary ${rajaperf[*]} (back to back from Rust, against RAJAPerf's figures)"
    python3 -P bench/rust_reps.py "$binary" "${rajaperf[@]}" --out "$results" 2>&1 | tee -a "$log" | tail -34 \
        || status=1
fi

if wanted dask && python3 -c 'import dask_cuda' 2>/dev/null; then
    step "python3 bench/dask_heat.py --out $results/dask-heat.json"
    python3 -P bench/dask_heat.py --out "$results/dask-heat.json" 2>&1 | tee -a "$log" | tail -5 || status=1
fi

if wanted half; then
    step "python3 bench/half_products.py --out $results"
    python3 -P bench/half_products.py --out "$results" 2>&1 | tee -a "$log" | tail -10
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    for tool in memcheck racecheck synccheck; do
        step "compute-sanitizer --tool $tool python3 bench/half_products.py --sanitize"
        timeout 300 compute-sanitizer --tool "$tool" --print-limit 20 --error-exitcode 1 python3 -P bench/half_products.py \
            --sanitize 2>&1 | tee -a "$log" | tail -6
        [ "${PIPESTATUS[0]}" = 0 ] || status=1
    done
    step "python3 examples/llm/llm.py --backend cuda --compile --json $results/llm-decode.json"
    python3 -P examples/llm/llm.py --backend cuda --compile --json "$results/llm-decode.json" 2>&1 | tee -a "$log" \
        | tail -40
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi

if wanted suite; then
    # the run stops starting rows after 400 s, so that it ends within 9 minutes with its table written
    step "python3 bench/user_suite.py --out $results"
    timeout 540 python3 -P bench/user_suite.py --out "$results" 2>&1 | tee -a "$log" | tail -62
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi

if wanted bench; then
    step "python3 bench/run.py --out $results $*"
    python3 -P bench/run.py --out "$results" "$@" 2>&1 | tee -a "$log" | tail -70 || status=1
fi
exit $status
