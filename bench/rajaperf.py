"""RAJAPerf's own executable on this machine: its Base_CUDA and RAJA_CUDA figures from the same host and run.

The anchor figures (bench/anchor.py) were measured on another host, on another day. A comparison "timed the
same way" needs RAJAPerf in the same run, on the same GPU. This module runs a `raja-perf.exe` built for this
GPU (bench/build_rajaperf.sh) the way the anchor was measured: the variants Base_CUDA and RAJA_CUDA, default
sizes and reps, the minimum of `passes` passes, `CUDA_MODULE_LOADING=EAGER`. It then reads RAJAPerf's reports.
A timing report gives the whole rep loop of a pass in seconds; each figure here is divided by the kernel's reps
(its kernels report), so it is µs per rep, like the anchor's.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple, Sequence

VARIANTS = ("Base_CUDA", "RAJA_CUDA")
# The kernels bench/rust-reps times, the only ones bench/build_rajaperf.sh builds (RAJAPerf's warm-up
# kernels for them, DAXPY and REDUCE3_INT, are among them).
BUILT_KERNELS = ("ADD", "COPY", "MUL", "TRIAD", "DOT", "DAXPY", "INIT3", "MULADDSUB", "INIT_VIEW1D",
                 "INIT_VIEW1D_OFFSET", "IF_QUAD", "NESTED_INIT", "REDUCE3_INT", "EOS", "FIRST_DIFF", "FIRST_SUM",
                 "HYDRO_1D", "PLANCKIAN", "TRIDIAG_ELIM", "PRESSURE", "FIR")
TIMING_REPORT = "RAJAPerf-timing-Minimum.csv"
KERNELS_REPORT = "RAJAPerf-kernels.csv"


class Figures(NamedTuple):
    """One kernel's best tuning per variant, in µs per rep (None where the variant did not run)."""
    reps: int
    base_us: float | None
    base_tuning: str | None
    raja_us: float | None


class RajaPerfFailed(Exception):
    """raja-perf.exe exited with an error, or its reports are not where they should be."""


def short_name(full_name: str) -> str:
    """RAJAPerf reports name kernels with their group (`Lcals_EOS`); the benchmark names them without it."""
    return full_name.split("_", 1)[1] if "_" in full_name else full_name


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.split(",")]


def read_reports(timing: str, kernels: str) -> dict[str, Figures]:
    """Figures per kernel (short name) from the text of a timing report and a kernels report.

    The timing report has a title line, a line of variant names, a line of tuning names, then one line per
    kernel: seconds per pass, or `Not run`. Of a variant's tunings, the fastest counts. The kernels report has a
    title line, then a header line (`Kernels , Problem size , Reps , ...`) and one line per kernel."""
    kernel_lines = [line for line in kernels.splitlines() if "," in line]
    header = _cells(kernel_lines[0])
    reps_column = header.index("Reps")
    reps = {short_name(cells[0]): int(cells[reps_column]) for cells in map(_cells, kernel_lines[1:])}

    timing_lines = [line for line in timing.splitlines()[1:] if line.strip()]
    variants, tunings = _cells(timing_lines[0])[1:], _cells(timing_lines[1])[1:]
    figures = {}
    for cells in map(_cells, timing_lines[2:]):
        name = short_name(cells[0])
        best: dict[str, tuple[float, str]] = {}
        for variant, tuning, seconds in zip(variants, tunings, cells[1:]):
            if seconds == "Not run":
                continue
            us = float(seconds) / reps[name] * 1e6
            if variant not in best or us < best[variant][0]:
                best[variant] = (us, tuning)
        base, raja = best.get("Base_CUDA"), best.get("RAJA_CUDA")
        figures[name] = Figures(reps[name], base[0] if base else None, base[1] if base else None,
                                raja[0] if raja else None)
    return figures


def run(executable: str | os.PathLike, kernels: Sequence[str], passes: int = 3) -> dict[str, Figures]:
    """Run RAJAPerf on `kernels` (short names) and return its figures for them."""
    env = dict(os.environ, CUDA_MODULE_LOADING="EAGER")
    with tempfile.TemporaryDirectory(prefix="rajaperf-") as folder:
        command = [str(Path(executable).resolve()), "--npasses", str(passes), "--npasses-combiners", "Minimum",
                   "--variants", *VARIANTS, "--outdir", folder, "--kernels", *kernels]
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=folder)
        if done.returncode != 0:
            raise RajaPerfFailed(f"{executable} exited with status {done.returncode}:\n{done.stdout[-2000:]}"
                                 f"{done.stderr[-2000:]}")
        try:
            timing = (Path(folder) / TIMING_REPORT).read_text()
            kernels_report = (Path(folder) / KERNELS_REPORT).read_text()
        except FileNotFoundError as missing:
            raise RajaPerfFailed(f"{executable} wrote no {Path(missing.filename).name}:\n{done.stdout[-2000:]}")
    try:
        return read_reports(timing, kernels_report)
    except (KeyError, ValueError, IndexError) as unreadable:  # another RAJAPerf's report format
        raise RajaPerfFailed(f"cannot read the reports of {executable}: {unreadable!r}") from unreadable
