"""bench/run.py's GPU path, end to end, with a CPU stand-in for cupy (tests/support/fake_cupy.py): the
baselines run thread by thread, the generated side on rs2gpu's CPU backend. This checks the run's plumbing
(data, calls, comparison, timing loops, the outputs), not GPU timings."""
from __future__ import annotations

import csv
import json
import shutil

import pytest

from tests.support import fake_cupy


@pytest.fixture
def fake_gpu(monkeypatch, tmp_path):
    if shutil.which("cargo") is None:
        pytest.fail("cargo is required (the generated side runs on rs2gpu's CPU backend)")
    from bench import emulate
    if emulate.unavailable():
        pytest.fail(emulate.unavailable())
    try:
        from rs2gpu.runtime.nvrtc import nvrtc_version
        nvrtc_version()
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"NVRTC is required: {e}")
    return fake_cupy.install(monkeypatch, tmp_path)


@pytest.mark.slow  # the whole benchmark, six kernels through every step of the run
def test_gpu_path_writes_every_output(fake_gpu, tmp_path, capsys) -> None:
    from bench import run

    out = tmp_path / "results"
    code = run.main(["--out", str(out), "--quick", "--sizes", "0.0005x", "--kernels",
                     "TRIAD,DOT,FIR,HYDRO_2D,INDEXLIST,NODAL_ACCUMULATION_3D", "--copy-mib", "1",
                     "--transfer-elements", "4096"])
    assert code == 0
    printed = capsys.readouterr().out
    tail = printed.split("wrote")[-1]
    assert "| kernel | 0.0005x: hand µs | gen µs | gen/hand |" in tail, "the table must be printed last"
    assert tail.strip().splitlines()[-1].startswith("1 not a kernel"), "the summary line comes last"
    rows = {r["kernel"]: r for r in csv.DictReader((out / "results.csv").open())}
    assert set(rows) == {"TRIAD", "DOT", "FIR", "HYDRO_2D", "INDEXLIST", "NODAL_ACCUMULATION_3D"}
    for name in ("TRIAD", "DOT", "FIR", "HYDRO_2D"):
        row = rows[name]
        assert row["status"] == "ok", f"{name}: {row['status']}"
        assert float(row["hand_us"]) > 0 and float(row["gen_us"]) > 0 and float(row["ratio"]) > 0
        assert float(row["hand_rep_us"]) > 0 and float(row["gen_rep_us"]) > 0
        assert row["regs_hand"]
    assert rows["TRIAD"]["check"] == "bitwise"
    assert rows["DOT"]["check"].startswith("dot: |Δ|") and float(rows["DOT"]["cupy_us"]) > 0
    assert rows["INDEXLIST"]["status"].startswith("not a kernel") and float(rows["INDEXLIST"]["hand_us"]) > 0
    assert rows["INDEXLIST"]["check"] == "hand vs cupy: bitwise"
    assert rows["NODAL_ACCUMULATION_3D"]["status"] == "ok"
    assert rows["NODAL_ACCUMULATION_3D"]["check"] == "bitwise" or "within bound" in rows["NODAL_ACCUMULATION_3D"]["check"]
    document = (out / "results.md").read_text(encoding="utf-8")
    for section in ("## How to read this", "## Results", "## Transfers", "## Notes", "device copy bandwidth"):
        assert section in document
    assert (out / "ratios.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert data["info"]["gpu"] == "CPU stand-in" and len(data["rows"]) == 6


def test_a_failing_or_disagreeing_kernel_does_not_stop_the_others(fake_gpu, tmp_path, monkeypatch) -> None:
    """COPY's data cannot be built and TRIAD's baseline gets two arguments swapped: both rows say so, TRIAD's
    is not timed, and MUL still runs."""
    import dataclasses

    import numpy as np

    from bench import kernels, run

    def broken(r, d):
        raise RuntimeError("no data today")

    swapped = (kernels.Launch("base_triad", kernels.grid_1d, lambda v, d: (
        v["a"], v["c"], v["b"], np.float64(v["alpha"]), np.int64(d["n"]))),)
    patched = [dataclasses.replace(k, data=broken) if k.name == "COPY" else
               dataclasses.replace(k, launches=swapped) if k.name == "TRIAD" else k for k in kernels.KERNELS]
    monkeypatch.setattr(run, "KERNELS", patched)
    out = tmp_path / "results"
    assert run.main(["--out", str(out), "--sizes", "0.0005x", "--kernels", "COPY,TRIAD,MUL", "--quick",
                     "--copy-mib", "1", "--transfer-elements", "1024"]) == 0
    rows = {r["kernel"]: r for r in csv.DictReader((out / "results.csv").open())}
    assert rows["COPY"]["status"] == "error: RuntimeError: no data today"
    assert rows["TRIAD"]["status"].startswith("MISMATCH: `a`")
    assert rows["TRIAD"]["hand_us"] == "" and rows["TRIAD"]["gen_us"] == ""
    assert rows["MUL"]["status"] == "ok" and float(rows["MUL"]["gen_us"]) > 0
