"""Back-to-back calls from Rust against RAJAPerf's own figures, timed the same way.

Runs `bench/rust-reps` (built on a machine with rustc by bench/gpu_prepare.sh): RAJAPerf kernels at the
default size, called `reps` times back to back through rs2gpu's generated Rust API between two device
synchronizations, host clock divided by `reps`, the best of three passes through the kernels, as RAJAPerf
times its reps and passes. Its figures sit beside RAJAPerf's Base_CUDA and RAJA_CUDA ones for the same GPU
model (bench/anchor.py: another host, another day) and, with --rajaperf, beside those of RAJAPerf's own
executable run here, in turn with the Rust binary, round after round (bench/rajaperf.py); each side keeps its
best figure over the rounds. For the reductions, whose Base_CUDA accumulator is read from managed memory,
RAJA_CUDA is the reference.

    python3 bench/rust_reps.py BINARY [--rajaperf RAJA_PERF_EXE] [--rounds N] [--out DIR]

With --out, the table goes to DIR/rust-reps.md and its rows to DIR/history.csv under the measured commit,
replacing the rows of that commit and kernel a run before wrote there.
"""
from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)   # bench/'s modules are imported as `bench.*`, never as top-level names
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # appended: an installed rs2gpu takes precedence over the source tree
from bench import rajaperf, report  # noqa: E402
from bench.anchor import H200  # noqa: E402
from bench.build import git_commit  # noqa: E402
from bench.rajaperf import Figures  # noqa: E402

REDUCTIONS = {"DOT", "REDUCE3_INT"}


def nvrtc_folder() -> str | None:
    """Where the Rust runtime finds NVRTC on a machine that has it from the nvidia-cuda-nvrtc wheel."""
    try:
        import nvidia
    except ImportError:
        return None
    return nvidia.__path__[0]


def read_reps(stdout: str) -> tuple[list[str], dict[str, tuple[int, float]]]:
    """The binary's comment lines (`# ...`, without the mark) and its (reps, µs per rep) per kernel."""
    comments, figures = [], {}
    for line in stdout.splitlines():
        if line.startswith("#"):
            comments.append(line.lstrip("# "))
        elif line.strip():
            name, reps, us = line.split()
            figures[name] = (int(reps), float(us))
    return comments, figures


def faster(old: Figures | None, new: Figures) -> Figures:
    """Each variant's best of two runs of RAJAPerf."""
    if old is None:
        return new
    base = min(((f.base_us, f.base_tuning) for f in (old, new) if f.base_us is not None), default=(None, None))
    raja = min((f.raja_us for f in (old, new) if f.raja_us is not None), default=None)
    return Figures(new.reps, base[0], base[1], raja)


def _reference(name: str, base: float | None, raja: float | None) -> float | None:
    return raja if name in REDUCTIONS else base


def _us(value: float | None) -> str:
    return f"{value:.2f}" if value else "–"


def _ratio(name: str, ratio: float | None) -> str:
    return f"{ratio:.2f}" + (" (RAJA_CUDA)" if name in REDUCTIONS else "") if ratio else "–"


def _summary(ratios: dict[str, float], what: str) -> str:
    geomean = math.exp(sum(map(math.log, ratios.values())) / len(ratios))
    largest = max(ratios, key=ratios.__getitem__)
    return (f"{len(ratios)} kernels; geometric mean {what} {geomean:.3f}; "
            f"largest {ratios[largest]:.2f} ({largest})")


def table(rust: dict[str, tuple[int, float]], here: dict[str, Figures] | None = None) -> list[str]:
    """The Markdown table of the Rust figures against RAJAPerf's: those of this run (`here`, when given) and
    the anchor's, with the summary lines under it."""
    header = ["kernel", "reps", "Rust API µs/rep"]
    if here is not None:
        header += ["RAJAPerf Base_CUDA µs/rep, this run", "RAJA_CUDA µs/rep, this run", "Rust / this run's"]
    header += ["Base_CUDA µs/rep, anchor", "RAJA_CUDA µs/rep, anchor", "Rust / anchor's"]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    against_here, against_anchor, here_against_anchor = {}, {}, {}
    for name, (reps, us) in rust.items():
        cells = [name, str(reps), f"{us:.2f}"]
        anchor = H200.get(name)
        anchor_reference = _reference(name, anchor.base_us, anchor.raja_us) if anchor else None
        if here is not None:
            figures = here.get(name)
            reference = _reference(name, figures.base_us, figures.raja_us) if figures else None
            ratio = us / reference if reference else None
            cells += [_us(figures.base_us) + (f" ({figures.base_tuning})" if name in REDUCTIONS else "")
                      if figures else "–", _us(figures.raja_us) if figures else "–", _ratio(name, ratio)]
            if ratio:
                against_here[name] = ratio
                if anchor_reference:
                    here_against_anchor[name] = reference / anchor_reference
        ratio = us / anchor_reference if anchor_reference else None
        if ratio:
            against_anchor[name] = ratio
        cells += [_us(anchor.base_us if anchor else None), _us(anchor.raja_us if anchor else None),
                  _ratio(name, ratio)]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    if against_here:
        out.append(_summary(against_here, "Rust / RAJAPerf of this run"))
    if against_anchor:
        out.append(_summary(against_anchor, "Rust / the anchor's RAJAPerf"))
    if here_against_anchor:
        out.append(_summary(here_against_anchor, "RAJAPerf of this run / the anchor's"))
    return out


def history_records(rust: dict[str, tuple[int, float]], here: dict[str, Figures] | None, commit: str,
                    run_date: str) -> list[dict]:
    """history.csv's rows of this run: each kernel's Rust µs/rep at RAJAPerf's default size and, where RAJAPerf's
    executable ran here, its Base_CUDA and RAJA_CUDA µs/rep of the same run."""
    dated = report.commit_date(commit)
    records = []
    for name, (_, us) in rust.items():
        anchor = H200.get(name)
        figures = (here or {}).get(name)
        records.append({"commit": commit, "commit_date": dated, "run_date": run_date, "bench": "rust_reps.py",
                        "kernel": name, "size_label": "default", "size": anchor.size if anchor else None,
                        "rust_rep_us": us, "rajaperf_base_rep_us": figures.base_us if figures else None,
                        "rajaperf_raja_rep_us": figures.raja_us if figures else None})
    return records


def run_binary(binary: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    folder = nvrtc_folder()
    if folder and "RS2GPU_NVRTC" not in env:
        env["RS2GPU_NVRTC"] = folder
    return subprocess.run([binary], capture_output=True, text=True, env=env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", help="the rs2gpu-rust-reps binary")
    parser.add_argument("--rajaperf", metavar="EXE", help="RAJAPerf's raja-perf.exe built for this GPU "
                        "(bench/build_rajaperf.sh): run it here, in turn with the binary")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of both, with --rajaperf (default 2)")
    parser.add_argument("--out", help="folder for rust-reps.md and history.csv")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    rounds = args.rounds if args.rajaperf else 1
    run_date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    status = 0
    comments: list[str] = []
    rust: dict[str, tuple[int, float]] = {}
    here: dict[str, Figures] | None = {} if args.rajaperf else None
    for round_number in range(1, rounds + 1):
        started = time.perf_counter()
        try:
            done = run_binary(args.binary)
        except OSError as failure:
            print(f"error: cannot run {args.binary}: {failure}", file=sys.stderr)
            return 1
        sys.stderr.write(done.stderr)
        if done.returncode != 0:
            print(f"error: {args.binary} exited with status {done.returncode}", file=sys.stderr)
            return done.returncode
        comments, figures = read_reps(done.stdout)
        for name, (reps, us) in figures.items():
            rust[name] = (reps, min(us, rust.get(name, (reps, us))[1]))
        progress = f"round {round_number}/{rounds}: Rust API {time.perf_counter() - started:.1f} s"
        if here is not None:
            started = time.perf_counter()
            try:
                for name, new in rajaperf.run(args.rajaperf, list(figures)).items():
                    here[name] = faster(here.get(name), new)
            except (rajaperf.RajaPerfFailed, OSError) as failure:
                # the Rust figures measured so far still make the table, against the anchor's alone
                print(f"error: RAJAPerf: {failure}", file=sys.stderr)
                here, status = None, 1
                break
            progress += f", RAJAPerf {time.perf_counter() - started:.1f} s"
        print(progress, file=sys.stderr)
    if here is not None:
        comments.append(f"RAJAPerf's raja-perf.exe run here too, in turn with the Rust binary: {rounds} rounds, "
                        "each side's best; RAJAPerf's variants Base_CUDA and RAJA_CUDA, 3 passes, the minimum kept, "
                        "CUDA_MODULE_LOADING=EAGER")
    text = "\n".join([*comments, "", *table(rust, here)]) + "\n"
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "rust-reps.md").write_text(text)
        report.update_history(out / "history.csv", history_records(rust, here, git_commit(), run_date))
    return status


if __name__ == "__main__":
    sys.exit(main())
