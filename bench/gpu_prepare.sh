#!/usr/bin/env bash
# Prepare, on a machine with rustc and PyPI, what a GPU machine without them needs for bench/gpu_checks.sh:
#   - .whl/: wheels of rs2gpu itself and of tree-sitter (built for the GPU machine's Python, default 3.12),
#     and COMMIT, the commit the rs2gpu wheel is built from;
#   - .gpu-cache/: the cpu backend's shared libraries (the rustc oracle of the GPU tests), keyed by the crates'
#     sources, so the GPU machine finds them through RS2GPU_CACHE_DIR instead of running cargo;
#   - build/cargo-hook/rs2gpu-cargo-hook: the cargo-hook example's release binary;
#   - build/rust-reps/rs2gpu-rust-reps: the back-to-back benchmark of the Rust API (bench/rust_reps.py);
#   - build/half-hook/probe: the half-precision program of tests/cargo/test_cargo_half.py.
# build/rajaperf/raja-perf.exe, RAJAPerf's own executable for bench/rust_reps.py --rajaperf, needs a RAJAPerf checkout
# and a few minutes, so it is left to bench/build_rajaperf.sh, and kept.
# Then, on the GPU machine, from the repository root (with .whl, .gpu-cache and build carried there):
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
#   RS2GPU_CACHE_DIR=$PWD/.gpu-cache bench/gpu_checks.sh OUT_DIR
# With --dask, first .whl/dask/: wheels of dask, distributed, dask-cuda and their dependencies
# (bench/dask-requirements.txt) for the GPU machine, where rs2gpu.dask and bench/dask_heat.py need them:
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/dask/*.whl
#   bench/gpu_prepare.sh [--dask] [PYTHON_VERSION]
set -euo pipefail
top=$(git rev-parse --show-toplevel)
cd "$top"
dask=0
if [ "${1:-}" = --dask ]; then
    dask=1
    shift
fi
python_version=${1:-3.12}
# wheels for the GPU machine: its Python, x86-64 Linux, binary wheels only (it has no compilers for sdists)
platform=(--only-binary=:all: --python-version "$python_version" --implementation cp
          --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
          --platform manylinux1_x86_64)
for ignored in /.whl/ /.gpu-cache/; do
    grep -qxF "$ignored" .git/info/exclude 2>/dev/null || echo "$ignored" >> .git/info/exclude
done
mkdir -p .whl
if [ "$dask" = 1 ]; then
    rm -rf .whl/dask
    python3 -m pip download -q "${platform[@]}" -d .whl/dask -r bench/dask-requirements.txt
    # numpy is on the GPU machine already, and the dashboard's packages are never imported by the Dask
    # path: leaving them out keeps what is carried to the GPU machine small
    rm -f .whl/dask/{numpy,bokeh,pillow,contourpy,narwhals,xyzservices}-*.whl
    echo "dask wheels: $(ls .whl/dask | wc -l) in .whl/dask ($(du -sh .whl/dask | cut -f1))"
fi
rm -f .whl/rs2gpu-*.whl .whl/tree_sitter*.whl
python3 -m pip download -q --no-deps "${platform[@]}" -d .whl 'tree-sitter==0.26.1' 'tree-sitter-rust==0.24.2'
python3 -m pip wheel -q --no-deps -w .whl . >/dev/null
# the commit the wheel is built from, for the benchmark tables (the GPU machine's copy of the tree may carry
# other git metadata)
echo "$(git rev-parse --short HEAD)$([ -n "$(git status --porcelain)" ] && echo ' with local changes')" > .whl/COMMIT
echo "wheels: $(cd .whl && ls | tr '\n' ' ')"

rm -rf .gpu-cache
RS2GPU_CACHE_DIR="$top/.gpu-cache" python3 - <<'EOF'
import sys
import tempfile
import time
from pathlib import Path

import rs2gpu

sys.path.append(".")
from tests.gpu import test_reductions, test_scatter  # noqa: E402  (the sources some GPU tests write)
from tests.half.test_half_crate import write_half_crate  # noqa: E402

# The crates the GPU tests and bench/user_suite.py compare against: the corpora (the idiomatic one module by
# module, as its tests build it), the user-style suite's kernels, the case and kernel files, and the sources the
# tests write (the library's cache key is the file's name and text, not its folder).
crates = [Path("examples/rajaperf"), Path("bench/user-suite"), *sorted(Path("tests/cases").glob("*.rs")),
          *sorted(Path("tests/gpu/kernels").glob("*.rs")), *sorted(Path("tests/runtime/data").glob("*.rs")),
          *sorted(Path("tests/api/data").glob("*.rs")), *sorted(Path("tests/half/kernels").glob("*.rs")),
          *sorted(p for p in Path("examples/corpus/src").glob("*.rs") if p.name != "lib.rs")]
written = Path(tempfile.mkdtemp(prefix="gpu-prepare-"))
for name, text in (("own.rs", test_reductions.OWN), ("scatter.rs", test_scatter.kernel_source())):
    folder = written / name.removesuffix(".rs")
    folder.mkdir()
    (folder / name).write_text(text)
    crates.append(folder / name)
crates.append(write_half_crate(written))
for crate in crates:
    started = time.perf_counter()
    module = rs2gpu.load(crate, backend="cpu")
    print(f"cpu library of {crate.name}: {len(module.kernels)} kernels, {time.perf_counter() - started:.1f} s")

# the half-precision hook program of tests/cargo/test_cargo_half.py, which bench/gpu_checks.sh runs there
from tests.support.cargo_crates import cargo, hook_crate  # noqa: E402

data = Path("tests/half/data")
probe = hook_crate(written / "half-hook", (data / "hook_lib.rs").read_text(), (data / "hook_main.rs").read_text())
built = cargo(["build", "--release"], probe, written / "target")
if built.returncode != 0:
    sys.exit(built.stderr)
Path("build/half-hook").mkdir(parents=True, exist_ok=True)
(Path("build/half-hook") / "probe").write_bytes((written / "target" / "release" / "probe").read_bytes())
Path("build/half-hook/probe").chmod(0o755)
print("half hook program: build/half-hook/probe")
EOF

# the GPU machine needs the libraries alone, not cargo's build folders beside them
find .gpu-cache/cpu -mindepth 2 -maxdepth 2 -name target -type d -exec rm -rf {} +

cargo build -q --offline --release --manifest-path examples/cargo-hook/Cargo.toml
mkdir -p build/cargo-hook
cp examples/cargo-hook/target/release/rs2gpu-cargo-hook build/cargo-hook/
echo "cargo-hook binary: build/cargo-hook/rs2gpu-cargo-hook"
cargo build -q --offline --release --manifest-path bench/rust-reps/Cargo.toml
mkdir -p build/rust-reps
cp bench/rust-reps/target/release/rs2gpu-rust-reps build/rust-reps/
echo "back-to-back binary: build/rust-reps/rs2gpu-rust-reps"
du -sh .whl .gpu-cache build/cargo-hook build/rust-reps build/half-hook | sed 's/^/size: /'
