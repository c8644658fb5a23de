"""Run the staged kernels of tests/cases/shapes.rs on the emulated device built with ThreadSanitizer, against
rustc (tests/emit/test_shared_memory_races.py runs this module, `python -m tests.support.tsan_tiles` from the
repository's root, in a process that preloads the sanitizer's runtime).
With `--without-barrier`, the products' barrier between storing a slice and multiplying it out is taken
out, which must be reported. Prints one line per run: the entry point, the kernel and whether it agreed."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

import rs2gpu
from bench import emulate
from rs2gpu import pipeline
from rs2gpu.ir.abi import EntryKind
from tests.emit.test_covering_on_cpu import run_covering
from tests.support.paths import CASES

SHAPES = CASES / "shapes.rs"
SLICE_BARRIER = "        RS2GPU_SYNC_THREADS();\n        const usize rs2gpu_k_left"


def main(without_barrier: bool) -> None:
    emulate._FLAGS = (*emulate._FLAGS, "-fsanitize=thread", "-g")
    translated, cpu = pipeline.translate(SHAPES), rs2gpu.load(SHAPES, backend="cpu")
    folder = Path(tempfile.mkdtemp(prefix="tsan-"))
    kernels = translated.emitted.abi.kernels
    libraries = {}
    for name in ("matmul", "matmul_fused", "transpose"):
        text = translated.emitted.files[kernels[name].files["cuda"]]
        if without_barrier:
            text = text.replace(SLICE_BARRIER, "        const usize rs2gpu_k_left")
        path = folder / kernels[name].files["cuda"]
        path.write_text(text)
        libraries[name] = emulate.Library(path, folder)
    m, n, p = 130, 20, 131  # both products' tiles, across their edges; k in several slices
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(m * n), rng.standard_normal(n * p)
    for kind in (EntryKind.TILES, EntryKind.COVERING):
        for name, extra, bounds in (("matmul", [], [(0, m), (0, p)]), ("matmul_fused", [1], [(1, m), (0, p)])):
            want, got = np.full(m * p, np.nan), np.full(m * p, np.nan)
            getattr(cpu, name)(want, a, b, *extra, m, n, p)
            run_covering(libraries[name], kernels[name], [got, a, b, *extra, m, n, p], bounds, kind)
            print(kind.value, name, "agrees" if got.tobytes() == want.tobytes() else "differs", flush=True)
    rows, cols = 70, 45
    x = np.arange(rows * cols, dtype=np.uint32)
    want, got = np.full(rows * cols, 7, dtype=np.uint32), np.full(rows * cols, 7, dtype=np.uint32)
    cpu.transpose(want, x, 0, rows, cols)
    run_covering(libraries["transpose"], kernels["transpose"], [got, x, 0, rows, cols], [(0, rows), (0, cols)])
    print("covering transpose", "agrees" if np.array_equal(got, want) else "differs", flush=True)


if __name__ == "__main__":
    main("--without-barrier" in sys.argv[1:])
