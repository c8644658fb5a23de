"""Back-to-back calls from Rust against RAJAPerf's own figures, timed the same way.

Runs `bench/rust-reps` (built on a machine with rustc by bench/gpu_prepare.sh): RAJAPerf kernels at the
default size, called `reps` times back to back through rs2gpu's generated Rust API between two device
synchronizations, host clock divided by `reps`, the best of three passes through the kernels, as RAJAPerf
times its reps and passes. Its figures sit beside RAJAPerf's Base_CUDA and RAJA_CUDA ones for the same GPU
(bench/anchor.py); for the reductions, whose Base_CUDA accumulator is read from managed memory, RAJA_CUDA
is the reference.

    python3 bench/rust_reps.py BINARY [--out DIR]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.anchor import H200  # noqa: E402

REDUCTIONS = {"DOT", "REDUCE3_INT"}


def nvrtc_folder() -> str | None:
    """Where the Rust runtime finds NVRTC on a machine that has it from the nvidia-cuda-nvrtc wheel."""
    try:
        import nvidia
    except ImportError:
        return None
    return nvidia.__path__[0]


def table(lines: list[str]) -> list[str]:
    out = ["| kernel | reps | Rust API µs/rep | RAJAPerf Base_CUDA µs/rep | RAJA_CUDA µs/rep | Rust / reference |",
           "|---|---|---|---|---|---|"]
    ratios = []
    for line in lines:
        if not line or line.startswith("#"):
            continue
        name, reps, us = line.split()
        anchor = H200.get(name)
        base = anchor.base_us if anchor else None
        raja = anchor.raja_us if anchor else None
        reference = raja if name in REDUCTIONS else base
        ratio = float(us) / reference if reference else None
        if ratio is not None:
            ratios.append(ratio)
        cells = [name, reps, us, f"{base:.2f}" if base else "–", f"{raja:.2f}" if raja else "–",
                 f"{ratio:.2f}" + (" (RAJA_CUDA)" if name in REDUCTIONS else "") if ratio else "–"]
        out.append("| " + " | ".join(cells) + " |")
    if ratios:
        geomean = 1.0
        for r in ratios:
            geomean *= r
        geomean **= 1 / len(ratios)
        out.append(f"\n{len(ratios)} kernels; geometric mean Rust / reference {geomean:.3f}; "
                   f"largest {max(ratios):.2f}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", help="the rs2gpu-rust-reps binary")
    parser.add_argument("--out", help="folder for rust-reps.md")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    folder = nvrtc_folder()
    if folder and "RS2GPU_NVRTC" not in env:
        env["RS2GPU_NVRTC"] = folder
    done = subprocess.run([args.binary], capture_output=True, text=True, env=env)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        print(f"error: {args.binary} exited with status {done.returncode}", file=sys.stderr)
        return done.returncode
    lines = done.stdout.splitlines()
    text = "\n".join([*(line.lstrip("# ") for line in lines if line.startswith("#")), "", *table(lines)]) + "\n"
    print(text)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "rust-reps.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
