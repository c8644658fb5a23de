"""The table of bench/rust_reps.py: the Rust API's back-to-back figures beside RAJAPerf's own."""
from __future__ import annotations

from bench.anchor import H200
from bench.rajaperf import Figures
from bench.rust_reps import faster, read_reps, table


def cells(rows: list[str], kernel: str) -> list[str]:
    [row] = [r for r in rows if r.startswith(f"| {kernel} |")]
    return [cell.strip() for cell in row.strip("|").split("|")]


def test_a_streaming_kernel_is_compared_with_base_cuda():
    doubled = 2 * H200["COPY"].base_us
    assert cells(table({"COPY": (1800, doubled)}), "COPY")[-1] == "2.00"


def test_a_reduction_is_compared_with_raja_cuda_whose_accumulator_is_device_memory():
    same = H200["DOT"].raja_us
    assert cells(table({"DOT": (2000, same)}), "DOT")[-1] == "1.00 (RAJA_CUDA)"


def test_the_binary_prints_comments_then_a_kernel_per_line():
    comments, figures = read_reps("# NVIDIA H200, 1000000 elements\nEOS 500 5.72\nDOT 2000 13.15\n")
    assert comments == ["NVIDIA H200, 1000000 elements"]
    assert figures == {"EOS": (500, 5.72), "DOT": (2000, 13.15)}


def test_this_runs_rajaperf_is_the_reference_beside_the_anchors():
    # RAJAPerf here at 5.0 µs, the Rust call at 5.5: 1.10 against this run, 5.5 / 5.53 against the anchor
    row = cells(table({"EOS": (500, 5.5)}, {"EOS": Figures(500, 5.0, "block_256", 5.2)}), "EOS")
    assert row[3:6] == ["5.00", "5.20", "1.10"]
    assert row[-1] == f"{5.5 / H200['EOS'].base_us:.2f}"


def test_the_summary_names_the_largest_ratio_against_each_reference():
    rows = table({"EOS": (500, 5.5), "ADD": (1000, 4.0)},
                 {"EOS": Figures(500, 5.0, "block_256", 5.2), "ADD": Figures(1000, 4.0, "block_256", 4.1)})
    assert "2 kernels; geometric mean Rust / RAJAPerf of this run 1.049; largest 1.10 (EOS)" in rows


def test_a_kernel_rajaperf_did_not_run_has_no_ratio_against_this_run():
    row = cells(table({"EOS": (500, 5.5)}, {}), "EOS")
    assert row[3:6] == ["–", "–", "–"]


def test_each_variant_keeps_its_best_round_with_its_tuning():
    first = Figures(50, 700.0, "blkatm_direct_256", 21.0)
    second = Figures(50, 650.0, "blkatm_occgs_256", 22.0)
    assert faster(first, second) == Figures(50, 650.0, "blkatm_occgs_256", 21.0)
    assert faster(None, second) == second


def executable(tmp_path, name: str, body: str):
    """A stand-in for a program that needs a GPU."""
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_a_failing_rajaperf_keeps_the_rust_figures_against_the_anchor(tmp_path, capsys):
    from bench.rust_reps import main
    binary = executable(tmp_path, "rust-reps", "echo '# a GPU'\necho 'EOS 500 5.53'\n")
    failing = executable(tmp_path, "raja-perf.exe", "echo 'no CUDA device' >&2\nexit 3\n")
    assert main([binary, "--rajaperf", failing, "--out", str(tmp_path / "out")]) == 1
    written = (tmp_path / "out" / "rust-reps.md").read_text().splitlines()
    assert cells(written, "EOS")[-1] == f"{5.53 / H200['EOS'].base_us:.2f}"
    assert "this run" not in written[2]  # no columns of a RAJAPerf run that did not happen
    assert "RAJAPerf" in capsys.readouterr().err


def test_a_missing_binary_is_an_error_without_a_traceback(tmp_path, capsys):
    from bench.rust_reps import main
    assert main([str(tmp_path / "no-such-binary")]) == 1
    assert "cannot run" in capsys.readouterr().err
