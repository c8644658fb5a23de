"""A/B of the benchmark: an earlier commit against this tree, alternating, on one GPU machine.

    bench/gpu_prepare.sh && python3 bench/ab.py prepare REV     # where git and PyPI are: the wheels
    python3 bench/ab.py run REV --out OUT --kernels REDUCE3_INT,COPY --sizes default,100x [--passes 2]

`prepare` copies REV's tree into .ab/REV/ and builds its rs2gpu wheel there; bench/gpu_prepare.sh builds this
tree's (and tree-sitter's) in .whl/. `run` (on the GPU machine, with .ab and .whl carried there) installs
each side's wheel into a folder of its own, then runs REV's bench/run.py and this tree's, each in a fresh
process with its own rs2gpu, and repeats that `--passes` times, so that both sides meet the same host,
clocks and neighbours: two runs of one side a minute apart on one machine differ by more than many changes
do, and runs on different machines differ more. Each side measures with its own bench/, so a change of the
method is compared too. Options after the known ones go to bench/run.py (`--budget-s 60`, `--dry-run`).
OUT/ab.md lists, per kernel and size, the hand and generated µs of every pass, REV's first, the way
bench/results/NOTES.md quotes A/B figures; each run's own tables and log are under OUT/<side>-<pass>/.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)   # bench/'s modules are imported as `bench.*`, never as top-level names
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from bench.build import git_commit  # noqa: E402

AB_DIR = ROOT / ".ab"
WHEELS = ROOT / ".whl"


def prepare(rev: str) -> Path:
    """REV's tree (its tracked files) under .ab/REV, replacing an earlier copy, and its rs2gpu wheel in
    .ab/REV/.whl."""
    tree = AB_DIR / rev
    with tempfile.TemporaryDirectory() as scratch:
        archive = Path(scratch) / "tree.tar"
        subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(archive), rev], check=True)
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        with tarfile.open(archive) as tar:
            tar.extractall(tree, filter="data")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tree / ".whl"), str(tree)],
                   check=True, stdout=subprocess.DEVNULL)
    return tree


def install(wheel_folder: Path, target: Path) -> None:
    """The rs2gpu wheel of `wheel_folder` and .whl's tree-sitter wheels, into `target` (no index needed)."""
    wheels = sorted(wheel_folder.glob("rs2gpu-*.whl")) + sorted(WHEELS.glob("tree_sitter*.whl"))
    if not any(w.name.startswith("rs2gpu-") for w in wheels):
        raise FileNotFoundError(f"no rs2gpu wheel in {wheel_folder}")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target",
                    str(target), *map(str, wheels)], check=True, env=dict(os.environ, PIP_ROOT_USER_ACTION="ignore"))


def this_label() -> str:
    """The commit this tree's rs2gpu wheel was built from (bench/gpu_prepare.sh), else the checkout's."""
    stamp = WHEELS / "COMMIT"
    return stamp.read_text().strip() if stamp.is_file() else git_commit()


def run_side(tree: Path, site: Path, label: str, folder: Path, bench_args: list[str], timeout_s: float) -> int:
    """One bench/run.py of `tree` into `folder`, with the rs2gpu installed in `site`; its exit status."""
    env = dict(os.environ, RS2GPU_BENCH_COMMIT=label, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "run.log", "w", encoding="utf-8") as log:
        try:
            return subprocess.run([sys.executable, "-P", str(tree / "bench" / "run.py"), "--out", str(folder),
                                   *bench_args], env=env, cwd=tree, stdout=log, stderr=subprocess.STDOUT,
                                  timeout=timeout_s).returncode
        except subprocess.TimeoutExpired:
            log.write(f"\nstopped after {timeout_s:.0f} s\n")
            return 124


def _us(value) -> str:
    return "–" if value is None else f"{value:,.1f}"


def ab_table(base: str, new: str, passes: list[tuple[str, int, list[dict]]]) -> str:
    """Markdown: per kernel and size (in the order of the first run), each side's hand and generated µs over
    its passes, `base → new`; `passes` holds (label, pass number, results.json rows) in run order."""
    figures: dict[tuple[str, str], dict[str, dict[str, list]]] = {}
    for label, _, rows in passes:
        for row in rows:
            sides = figures.setdefault((row["kernel"], row["size_label"]), {base: {}, new: {}})
            for column in ("hand_us", "gen_us", "gen_rep_us"):
                sides[label].setdefault(column, []).append(row.get(column))
    lines = [f"A/B: {base} → {new}, alternating ({', '.join(f'{label} {n}' for label, n, _ in passes)}); "
             "events µs per call (cold L2) and µs/rep back to back, each pass's figure in run order.", "",
             "| kernel | size | hand µs | gen µs | gen µs/rep |", "|---|---|---|---|---|"]
    for (kernel, size), sides in figures.items():
        cells = [" → ".join(", ".join(_us(v) for v in sides[label].get(column, [])) or "–" for label in (base, new))
                 for column in ("hand_us", "gen_us", "gen_rep_us")]
        lines.append(f"| {kernel} | {size} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def run(rev: str, out: Path, passes: int, bench_args: list[str], timeout_s: float) -> int:
    base_tree = AB_DIR / rev
    if not (base_tree / "bench" / "run.py").is_file():
        print(f"bench/ab.py: no tree of {rev} under {AB_DIR}; run `python3 bench/ab.py prepare {rev}` where git is",
              file=sys.stderr)
        return 2
    new = this_label()
    if new == rev:
        new = f"{new} (this tree)"
    sites = Path(tempfile.mkdtemp(prefix="rs2gpu-ab-"))
    sides = (("base", rev, base_tree, base_tree / ".whl"), ("new", new, ROOT, WHEELS))
    try:
        for name, _, _, wheels in sides:
            install(wheels, sites / name)
    except (FileNotFoundError, subprocess.CalledProcessError) as e:
        print(f"bench/ab.py: {e}; `bench/gpu_prepare.sh` and `python3 bench/ab.py prepare {rev}` build the wheels",
              file=sys.stderr)
        return 2
    done, status = [], 0
    for number in range(1, passes + 1):
        for name, label, tree, _ in sides:
            folder = out / f"{name}-{number}"
            print(f"ab: pass {number}, {label}: bench/run.py {' '.join(bench_args)}", flush=True)
            code = run_side(tree, sites / name, label, folder, bench_args, timeout_s)
            results = folder / "results.json"
            if code != 0 or not results.is_file():
                print(f"ab: {label} pass {number} ended with status {code}; see {folder / 'run.log'}", flush=True)
                status = 1
            rows = json.loads(results.read_text(encoding="utf-8"))["rows"] if results.is_file() else []
            done.append((label, number, rows))
    table = ab_table(rev, new, done)
    (out / "ab.md").write_text(table, encoding="utf-8")
    print(table, flush=True)
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    prepare_parser = commands.add_parser("prepare", help="copy REV's tree into .ab/REV and build its wheel there (needs git and pip)")
    prepare_parser.add_argument("rev", help="a commit, e.g. a short hash")
    run_parser = commands.add_parser("run", help="alternate REV's bench/run.py and this tree's",
                                     epilog="Other options go to bench/run.py (e.g. --budget-s 60, --dry-run).")
    run_parser.add_argument("rev", help="the commit given to `prepare`")
    run_parser.add_argument("--out", type=Path, required=True, help="folder for ab.md and each run's outputs")
    run_parser.add_argument("--passes", type=int, default=2, help="runs of each side, alternating (default 2)")
    run_parser.add_argument("--timeout-s", type=float, default=600.0,
                            help="stop a run of bench/run.py after this many seconds (default 600)")
    args, bench_args = parser.parse_known_args(argv)
    if args.command == "run" and args.passes < 1:
        parser.error("--passes must be at least 1")
    if args.command == "prepare":
        if bench_args:
            parser.error(f"unrecognized arguments: {' '.join(bench_args)}")
        try:
            print(f"ab: {prepare(args.rev)}")
        except subprocess.CalledProcessError:
            return 2
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    return run(args.rev, args.out.resolve(), args.passes, bench_args, args.timeout_s)


if __name__ == "__main__":
    sys.exit(main())
