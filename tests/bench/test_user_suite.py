"""The user-style suite (bench/user_suite.py) without a GPU: `--small` runs every case's Rust kernel on the cpu
backend against numpy, and the GPU path runs end to end with a CPU stand-in for cupy. What each case's
kernel computes is checked here against numpy's own routines (matmul, sum, exp, bincount, fancy indexing),
within the bound the case states, and the bounds themselves are checked to reject a wrong result."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from bench import user_report, user_suite
from bench.user_cases import BY_NAME, CASES, EPS32

from tests.support import fake_cupy


@pytest.fixture(scope="module")
def cpu():
    """The suite's kernels built by rustc (cargo, or the library bench/gpu_prepare.sh put in the cache)."""
    import rs2gpu

    return rs2gpu.load(user_suite.CRATE, backend="cpu")


@pytest.fixture(scope="module")
def small_run(tmp_path_factory, cpu):
    out = tmp_path_factory.mktemp("user-suite-small")
    assert user_suite.main(["--small", "--out", str(out), "--row-seconds", "0.01", "--reps", "3"]) == 0
    return out


def run_kernel(cpu, name: str, arrays: dict, dims: dict):
    """The case's kernel on the cpu backend, on copies of `arrays`; returns its result array."""
    copies = {n: v.copy() if isinstance(v, np.ndarray) else v for n, v in arrays.items()}
    return user_suite.kernel_call(cpu, BY_NAME[name], copies, dims)()


def small_inputs(name: str, seed: int = 3):
    case = BY_NAME[name]
    return case.make(np.random.default_rng(seed), case.small.dims), case.small.dims


def test_small_run_writes_one_agreeing_row_per_case_with_numpy_named(small_run) -> None:
    rows = json.loads((small_run / "user-suite.json").read_text(encoding="utf-8"))["rows"]
    assert [r["case"] for r in rows] == [c.name for c in CASES]
    for r in rows:
        assert r["status"] == "ok", f"{r['case']}: {r['status']}"
        assert r["check"] == "bitwise" or r["check"].startswith("bound"), r
        assert r["best"] == "numpy" and r["rs2gpu_us"] > 0 and r["ratio"] > 0
    table = (small_run / "user-suite.md").read_text(encoding="utf-8")
    assert "| case | size | elements | check | rs2gpu µs | fastest alternative |" in table
    assert "geometric mean rs2gpu / fastest alternative" in table
    assert not (small_run / "history.csv").exists(), "a run on the host clock is no history"


@pytest.mark.parametrize("name", ["matmul_f32", "matmul_fma_f32", "matmul_f64", "matmul_fma_f64"])
def test_products_are_numpys_matmul_within_the_k_sum_bound(cpu, name: str) -> None:
    v, d = small_inputs(name)
    got = run_kernel(cpu, name, v, d).astype(np.float64)
    a = v["a"].astype(np.float64).reshape(d["m"], d["k"])
    b = v["b"].astype(np.float64).reshape(d["k"], d["n"])
    eps = np.finfo(v["a"].dtype).eps
    # each of the k products and sums rounds once: |Δ| ≤ k·eps·Σ|a||b| from the exact product
    assert np.all(np.abs(got - (a @ b).ravel()) <= d["k"] * eps * (np.abs(a) @ np.abs(b)).ravel())


def test_row_and_column_sums_are_numpys_sums(cpu) -> None:
    for name, axis in (("row_sums_f32", 1), ("col_sums_f32", 0)):
        v, d = small_inputs(name)
        a = v["a"].astype(np.float64).reshape(d["rows"], d["cols"])
        got = run_kernel(cpu, name, v, d)
        terms = a.shape[axis]
        assert np.all(np.abs(got - a.sum(axis=axis)) <= terms * EPS32 * np.abs(a).sum(axis=axis)), name


def test_softmax_rows_are_positive_and_sum_to_one(cpu) -> None:
    v, d = small_inputs("softmax_f32")
    got = run_kernel(cpu, "softmax_f32", v, d).reshape(d["rows"], d["cols"]).astype(np.float64)
    x = v["x"].astype(np.float64).reshape(got.shape)
    assert np.all(got > 0)
    assert np.allclose(got.sum(axis=1), 1.0, rtol=0, atol=d["cols"] * EPS32)
    # the largest input has the largest weight
    assert np.array_equal(got.argmax(axis=1), x.argmax(axis=1))


def test_norms_give_rows_of_the_stated_mean_and_scale(cpu) -> None:
    v, d = small_inputs("layer_norm_f32")
    v = {**v, "gamma": np.ones_like(v["gamma"]), "beta": np.zeros_like(v["beta"])}
    got = run_kernel(cpu, "layer_norm_f32", v, d).reshape(d["rows"], d["cols"]).astype(np.float64)
    assert np.allclose(got.mean(axis=1), 0.0, atol=1e-5)
    assert np.allclose(got.var(axis=1), 1.0, rtol=1e-4)   # eps = 1e-5 against a variance near 5
    v, d = small_inputs("rms_norm_f32")
    v = {**v, "gamma": np.ones_like(v["gamma"])}
    got = run_kernel(cpu, "rms_norm_f32", v, d).reshape(d["rows"], d["cols"]).astype(np.float64)
    assert np.allclose((got * got).mean(axis=1), 1.0, rtol=1e-4)


def test_histogram_counts_every_value_once_in_numpys_bins(cpu) -> None:
    v, d = small_inputs("histogram_f32")
    got = run_kernel(cpu, "histogram_f32", v, d)
    assert int(got.sum()) == d["n"]
    inside = (v["x"] >= -1.0) & (v["x"] < 1.0)
    counts, _ = np.histogram(v["x"][inside], bins=d["bins"], range=(-1.0, 1.0))
    # the values outside go to the end bins; inside, numpy's bins, up to a value within rounding of an edge
    counts[0] += int((v["x"] < -1.0).sum())
    counts[-1] += int((v["x"] >= 1.0).sum())
    assert np.abs(got.astype(np.int64) - counts).sum() <= 2


def test_scatter_undoes_gather_through_the_same_permutation(cpu) -> None:
    v, d = small_inputs("gather_f32")
    gathered = run_kernel(cpu, "gather_f32", v, d)
    assert np.array_equal(gathered, v["src"][v["idx"]])
    back = run_kernel(cpu, "scatter_f32", {**v, "src": gathered}, d)
    assert np.array_equal(back, v["src"])


def test_stencils_leave_the_boundary_and_match_the_slice_expression(cpu) -> None:
    v, d = small_inputs("stencil_2d_f32")
    got = run_kernel(cpu, "stencil_2d_f32", v, d).reshape(d["rows"], d["cols"])
    u, w = v["u"].reshape(got.shape), np.float32(d["w"])
    assert np.isnan(got[0]).all() and np.isnan(got[:, -1]).all(), "the boundary keeps its poison"
    interior = u[1:-1, 1:-1] + w * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1])
    assert np.array_equal(got[1:-1, 1:-1], interior)


@pytest.mark.parametrize("case", [c for c in CASES if c.bound is not None], ids=lambda c: c.name)
def test_a_bound_rejects_a_result_off_by_a_thousandth(cpu, case) -> None:
    v, d = small_inputs(case.name)
    got = run_kernel(cpu, case.name, v, d)
    assert user_suite.compare(got, case.reference(v, d), case.bound(v, d))[0]
    assert not user_suite.compare(got * np.float32(1.001), case.reference(v, d), case.bound(v, d))[0]


def test_compare_tells_bitwise_from_bound_and_nan_from_number() -> None:
    a = np.array([1.0, np.nan, 3.0], np.float32)
    assert user_suite.compare(a, a.copy(), None)[:2] == (True, "bitwise")
    b = a.copy()
    b[2] = np.nextafter(np.float32(3.0), np.float32(4.0))
    assert not user_suite.compare(b, a, None)[0]
    assert user_suite.compare(b, a, 1e-6)[:2] == (True, "bound")
    assert not user_suite.compare(np.array([1.0, 2.0, 3.0], np.float32), a, 1.0)[0], "NaN against a number"


def test_gpu_path_runs_end_to_end_on_a_stand_in_and_names_absent_libraries(cpu, monkeypatch, tmp_path) -> None:
    fake_cupy.install(monkeypatch, tmp_path)
    for name in ("CUPY_TF32", "NVIDIA_TF32_OVERRIDE"):   # the run sets them; the test's end restores them
        monkeypatch.setenv(name, "")
    out = tmp_path / "out"
    cases = "matmul_fma_f32,softmax_f32,histogram_f32,scatter_f32 (IndexList)"
    assert user_suite.main(["--quick", "--out", str(out), "--cases", cases, "--row-seconds", "0.01",
                            "--reps", "3"]) == 0
    document = json.loads((out / "user-suite.json").read_text(encoding="utf-8"))
    rows = {r["case"]: r for r in document["rows"]}
    assert set(rows) == set(cases.split(","))
    for name, r in rows.items():
        assert r["status"] == "ok", f"{name}: {r['status']}"
        assert r["best"].startswith("cupy"), r
        assert r["alternatives"]["torch"] == "absent: torch does not import"
    assert rows["matmul_fma_f32"]["check"] == "bitwise", "a `mul_add` chain is checked bitwise against rustc"
    assert "torch" in document["missing"]


def test_history_rows_name_the_suite_and_keep_the_files_columns(tmp_path) -> None:
    from bench import report

    row = user_report.Row("matmul_f32", "1024²", 1 << 20, status="ok", check="bitwise", rs2gpu_us=300.0,
                         best="torch", best_us=150.0)
    info = {"date": "2026-12-05T12:00:00+00:00", "commit": "0000000"}
    user_report.write_outputs(tmp_path, [row], info, [BY_NAME["matmul_f32"]], {}, history=True)
    with (tmp_path / "history.csv").open(encoding="utf-8") as f:
        records = list(csv.DictReader(f))
    assert list(records[0]) == report.HISTORY_COLUMNS
    record = records[0]
    assert (record["bench"], record["kernel"], record["check"]) == ("user_suite.py", "matmul_f32", "bitwise")
    assert (float(record["hand_us"]), float(record["gen_us"]), float(record["ratio"])) == (150.0, 300.0, 2.0)


def test_without_the_cpu_library_rows_are_timed_and_marked_unchecked(cpu, monkeypatch, tmp_path) -> None:
    import rs2gpu

    fake_cupy.install(monkeypatch, tmp_path)
    for name in ("CUPY_TF32", "NVIDIA_TF32_OVERRIDE"):
        monkeypatch.setenv(name, "")
    device_load = rs2gpu.load

    def load(path, backend="auto", *args, **kwargs):
        if backend == "cpu":   # a GPU machine without rustc, where gpu_prepare.sh's cache was not carried
            raise RuntimeError("cargo is not installed")
        return device_load(path, backend, *args, **kwargs)
    monkeypatch.setattr(rs2gpu, "load", load)
    out = tmp_path / "out"
    assert user_suite.main(["--quick", "--out", str(out), "--cases", "transpose_f32", "--row-seconds", "0.01",
                            "--reps", "3"]) == 0
    (row,) = json.loads((out / "user-suite.json").read_text(encoding="utf-8"))["rows"]
    assert row["status"].startswith("unchecked: the cpu backend did not load (RuntimeError: cargo is not installed")
    assert row["rs2gpu_us"] > 0 and row["best"] == "cupy"


@pytest.mark.gpu
def test_on_the_gpu_every_kernel_matches_rustc_and_every_library_agrees(cpu, monkeypatch, tmp_path) -> None:
    """The GPU path at the small sizes on a real device: rs2gpu against rustc, then every library that
    imports (cupy, cupyx, torch, the Triton kernels) against rs2gpu."""
    for name in ("CUPY_TF32", "NVIDIA_TF32_OVERRIDE"):
        monkeypatch.setenv(name, "")
    out = tmp_path / "out"
    assert user_suite.main(["--quick", "--out", str(out), "--row-seconds", "0.01", "--reps", "3"]) == 0
    rows = json.loads((out / "user-suite.json").read_text(encoding="utf-8"))["rows"]
    assert [r["case"] for r in rows] == [c.name for c in CASES]
    for r in rows:
        assert r["status"] == "ok", f"{r['case']}: {r['status']}"
        case = BY_NAME[r["case"]]
        if case.bound is None or "exact_gpu" in case.tags:   # no reassociable sum: rustc's bits
            assert r["check"] == "bitwise", r
        failed = {name: value for name, value in r["alternatives"].items()
                  if isinstance(value, str) and not value.startswith("absent")}
        assert not failed, f"{r['case']}: {failed}"
        assert r["best"] and r["rs2gpu_us"] > 0
