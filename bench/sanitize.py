"""Run every corpus kernel once through the cuda backend, for compute-sanitizer to watch.

    compute-sanitizer --tool memcheck  python3 bench/sanitize.py
    compute-sanitizer --tool racecheck python3 bench/sanitize.py --size 2000

The inputs are the benchmark table's, at a small size (`--size`, default 20000; racecheck instruments every
shared-memory access, so it wants a smaller one). Each generated kernel runs on cupy arrays (no
transfers, so the sanitizer sees only the kernels and the runtime's own small copies), then once on numpy
arrays (the staged path); a kernel whose index lists the table passes verified runs both ways with plain
lists too (the loop that checks them). Prints one line per call; exits 1 if a call raised.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # appended: an installed rs2gpu takes precedence over the source tree

from bench.harness import generated_arguments, prepare  # noqa: E402
from bench.kernels import KERNELS  # noqa: E402


def main() -> int:
    import argparse

    import cupy as cp

    import rs2gpu

    parser = argparse.ArgumentParser(description="Run every corpus kernel once, for compute-sanitizer.")
    parser.add_argument("--size", type=int, default=20_000, help="problem size of each kernel (default 20000)")
    size = parser.parse_args().size
    kernels = rs2gpu.load(ROOT / "examples" / "rajaperf", backend="cuda")
    failures = 0
    for k in KERNELS:
        if k.rust not in kernels.abi.kernels:
            continue
        entry = kernels.abi.kernels[k.rust]
        dims = k.dims(size)
        for xp in (cp, np):
            for verified in dict.fromkeys((k.verified_lists, ())):
                sides = prepare(k, dims, xp, seed=3)
                function = getattr(kernels, k.rust)
                try:
                    function(*generated_arguments(entry, sides.gen, dims, verified))
                    kernels.synchronize()
                    status = f"ok ({', '.join(getattr(function, 'last_variants', ())) or '-'})"
                except Exception as e:  # report and go on: the sanitizer's summary is what this run is for
                    failures += 1
                    status = f"FAILED: {type(e).__name__}: {e}"
                print(f"{k.rust:<24} {xp.__name__:<6} {status}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
