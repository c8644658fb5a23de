"""The benchmark's dry run (everything but the GPU) over several kernels in one process."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_kernel_of_a_dry_run_binds_not_only_the_first(tmp_path):
    # the registers of one row's generated entry points once replaced the baselines' symbol table that the
    # next rows look their hand-written kernels up in
    subprocess.run([sys.executable, "-P", str(REPO / "bench" / "run.py"), "--dry-run", "--no-cpu",
                    "--kernels", "DOT,TRIAD,COPY", "--sizes", "default", "--out", str(tmp_path)],
                   check=True, capture_output=True, cwd=REPO)
    rows = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["rows"]
    assert {r["kernel"]: r["status"] for r in rows} == {"DOT": "dry run", "TRIAD": "dry run", "COPY": "dry run"}
