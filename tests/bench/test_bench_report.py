"""The benchmark's writers: CSV and markdown columns from a result row, and a valid PNG."""
from __future__ import annotations

import csv
import io
import struct
import subprocess
import zlib
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from bench import report
from bench.png import bar_chart_png, write_png
from bench.rajaperf import Figures
from bench.report import Row
from bench.rust_reps import history_records as rust_history
from tests.support.paths import REPO

COPY = 4.0e12


def fake_rows() -> list[Row]:
    triad = Row("TRIAD", "Stream", "default", 1_000_000, rust="triad", status="ok", check="bitwise",
                hand_us=10.0, gen_us=11.0, hand_rep_us=4.6, gen_rep_us=5.0, bytes_per_rep=24_000_000,
                flops_per_rep=2_000_000, regs_hand="12", regs_gen="18")
    report.attach_anchor(triad)
    energy = Row("ENERGY", "Apps", "100x", 100_000_000, factor=100.0, rust="energy", status="ok",
                 check="bitwise", hand_us=5000.0, gen_us=4900.0, regs_hand="22,28", regs_gen="28,32",
                 bytes_per_rep=21_600_000_000)
    report.attach_anchor(energy)
    nodal = Row("NODAL_ACCUMULATION_3D", "Apps", "default", 1_000_000, rust="nodal_accumulation_3d",
                status="not written: no such #[kernel] in the crate yet", hand_us=30.0)
    return [triad, energy, nodal]


def parse_png(data: bytes) -> tuple[int, int, np.ndarray]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, f"bad CRC in {kind}"
        chunks.setdefault(kind, b"")
        chunks[kind] += body
        pos += 12 + length
    assert b"IEND" in chunks
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, colour) == (8, 2)
    raw = zlib.decompress(chunks[b"IDAT"])
    assert len(raw) == height * (1 + 3 * width)
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(height, 1 + 3 * width)
    return width, height, rows[:, 1:].reshape(height, width, 3)


def test_csv_has_every_column_and_the_derived_ones() -> None:
    text = report.write_csv(fake_rows(), COPY)
    records = list(csv.DictReader(io.StringIO(text)))
    assert list(records[0]) == report.CSV_COLUMNS
    triad = records[0]
    assert triad["kernel"] == "TRIAD" and triad["size"] == "1000000" and triad["status"] == "ok"
    assert float(triad["ratio"]) == 1.1
    assert abs(float(triad["pct_copy_gen"]) - 100 * 24e6 / 11e-6 / COPY) < 1e-3
    assert float(triad["rajaperf_base_us"]) == 4.64 and float(triad["rajaperf_raja_us"]) == 4.72
    assert records[1]["rajaperf_base_us"] == ""   # RAJAPerf's figures are for the default size only
    assert records[2]["gen_us"] == "" and records[2]["ratio"] == ""


def test_markdown_table_has_the_documented_columns() -> None:
    table = report.markdown_table(fake_rows(), COPY)
    lines = table.strip().splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header == report.MD_COLUMNS
    for name in ("hand µs", "gen µs", "gen/hand", "% copy BW hand/gen", "regs hand/gen", "RAJAPerf Base_CUDA µs/rep",
                 "RAJA_CUDA µs/rep"):
        assert name in header
    cells = [c.strip() for c in lines[2].strip("|").split("|")]
    row = dict(zip(header, cells))
    assert row["kernel"] == "TRIAD" and row["gen/hand"] == "1.10" and row["regs hand/gen"] == "12/18"
    assert row["RAJAPerf Base_CUDA µs/rep"] == "4.64" and row["check"] == "bitwise"
    assert all(len([c for c in line.strip("|").split("|")]) == len(header) for line in lines)
    assert "(100x)" in lines[3] and "not written" in lines[4]


def test_compact_table_puts_the_sizes_of_a_kernel_side_by_side() -> None:
    rows = fake_rows()
    rows.append(Row("TRIAD", "Stream", "100x", 100_000_000, factor=100.0, status="ok", check="bitwise", hand_us=600.0,
                    gen_us=630.0, regs_hand="12", regs_gen="18"))
    lines = report.compact_table(rows).strip().splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header[:5] == ["kernel", "default: hand µs", "gen µs", "gen/hand", "rep gen/hand"]
    assert header[5] == "100x: hand µs" and header[-2:] == ["regs hand/gen", "check"]
    assert len(lines) == 2 + 3, "one line per kernel"
    triad = [c.strip() for c in lines[2].strip("|").split("|")]
    assert triad[0] == "TRIAD" and triad[3] == "1.10" and triad[7] == "1.05" and triad[-1] == "bitwise"


def test_notes_and_summary_explain_rows_that_did_not_run() -> None:
    rows = fake_rows()
    assert "NODAL_ACCUMULATION_3D" in report.notes_section(rows)
    summary = report.summary(rows)
    assert "2 ok" in summary and "1 not written" in summary and "geometric mean" in summary


def test_png_writer_writes_a_decodable_image() -> None:
    pixels = np.zeros((3, 4, 3), dtype=np.uint8)
    pixels[1, 2] = (10, 20, 30)
    width, height, decoded = parse_png(write_png(pixels))
    assert (width, height) == (4, 3) and np.array_equal(decoded, pixels)


def test_ratio_chart_draws_bars_and_the_line_at_one() -> None:
    kernels, series = report.ratio_chart_data(fake_rows())
    assert kernels == ["TRIAD", "ENERGY", "NODAL_ACCUMULATION_3D"]
    assert series["default"] == [1.1, None, None] and series["100x"][1] == 4900.0 / 5000.0
    width, height, image = parse_png(bar_chart_png(kernels, series, "gen / hand"))
    assert width > 100 and height > 100
    black_rows = np.where((image == 0).all(axis=2).sum(axis=1) > width // 4)[0]
    assert black_rows.size > 0, "no horizontal line at 1.0"
    assert ((image == (31, 119, 180)).all(axis=2)).any(), "no bar of the first series"


def test_plot_ratios_writes_a_png_with_or_without_matplotlib(tmp_path: Path) -> None:
    path = tmp_path / "ratios.png"
    used = report.plot_ratios(fake_rows(), path, "gen / hand")
    assert used in ("matplotlib", "built-in PNG writer")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def history(folder: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO((folder / "history.csv").read_text(encoding="utf-8"))))


def run_into(folder: Path, rows: list[Row], commit: str, date: str, dry: bool = False) -> None:
    report.write_outputs(folder, rows, {"date": date}, {"copy": COPY}, dry, commit=commit)


def test_a_run_appends_a_history_row_per_kernel_and_size_under_the_measured_commit(tmp_path: Path) -> None:
    run_into(tmp_path, fake_rows(), "abc1234", "2026-12-05T10:00:00+00:00")
    records = history(tmp_path)
    assert list(records[0]) == report.HISTORY_COLUMNS
    assert [(r["commit"], r["bench"], r["kernel"], r["size_label"]) for r in records] == [
        ("abc1234", "run.py", "TRIAD", "default"), ("abc1234", "run.py", "ENERGY", "100x"),
        ("abc1234", "run.py", "NODAL_ACCUMULATION_3D", "default")]
    triad, energy, nodal = records
    assert triad["run_date"] == "2026-12-05T10:00:00+00:00" and triad["size"] == "1000000"
    assert (triad["hand_us"], triad["gen_us"], triad["ratio"], triad["check"]) == ("10", "11", "1.1", "bitwise")
    assert (triad["hand_rep_us"], triad["gen_rep_us"], triad["regs_gen"]) == ("4.6", "5", "18")
    assert abs(float(triad["pct_copy_gen"]) - 100 * 24e6 / 11e-6 / COPY) < 1e-3
    assert energy["size"] == "100000000" and energy["ratio"] == "0.98"
    assert nodal["check"] == "not written" and nodal["gen_us"] == "" and nodal["ratio"] == ""
    assert triad["rust_rep_us"] == "", "bench/run.py times no Rust calls"


def test_a_commit_measured_again_has_its_rows_replaced_and_other_commits_keep_theirs(tmp_path: Path) -> None:
    run_into(tmp_path, fake_rows(), "abc1234", "2026-12-05T10:00:00+00:00")
    run_into(tmp_path, fake_rows(), "def5678", "2026-12-05T11:00:00+00:00")
    faster_triad = fake_rows()[0]
    faster_triad.gen_us = 9.0
    run_into(tmp_path, [faster_triad], "abc1234", "2026-12-05T12:00:00+00:00")
    records = history(tmp_path)
    assert len(records) == 6, "one row per commit, kernel and size"
    triads = [(r["commit"], r["gen_us"], r["run_date"]) for r in records if r["kernel"] == "TRIAD"]
    assert triads == [("def5678", "11", "2026-12-05T11:00:00+00:00"), ("abc1234", "9", "2026-12-05T12:00:00+00:00")]
    # the rows of abc1234 the second run did not measure keep the first run's figures
    assert sorted((r["kernel"], r["run_date"]) for r in records if r["commit"] == "abc1234") == [
        ("ENERGY", "2026-12-05T10:00:00+00:00"), ("NODAL_ACCUMULATION_3D", "2026-12-05T10:00:00+00:00"),
        ("TRIAD", "2026-12-05T12:00:00+00:00")]


def test_a_dry_run_leaves_the_history_as_it_was(tmp_path: Path) -> None:
    run_into(tmp_path, fake_rows(), "abc1234", "2026-12-05T10:00:00+00:00")
    before = (tmp_path / "history.csv").read_text(encoding="utf-8")
    untimed = Row("TRIAD", "Stream", "default", 1_000_000, rust="triad", status="ok", check="bitwise")
    run_into(tmp_path, [untimed], "abc1234", "2026-12-05T11:00:00+00:00", dry=True)
    assert (tmp_path / "history.csv").read_text(encoding="utf-8") == before


def test_the_rust_reps_rows_sit_beside_the_run_rows_of_their_commit_and_replace_their_own(tmp_path: Path) -> None:
    run_into(tmp_path, fake_rows(), "abc1234", "2026-12-05T10:00:00+00:00")
    beside_rajaperf = rust_history({"TRIAD": (1000, 4.37)}, {"TRIAD": Figures(1000, 4.36, "block_256", 4.38)},
                                   "abc1234", "2026-12-05T10:05:00+00:00")
    report.update_history(tmp_path / "history.csv", beside_rajaperf)
    report.update_history(tmp_path / "history.csv",
                          rust_history({"TRIAD": (1000, 4.41)}, None, "abc1234", "2026-12-05T10:10:00+00:00"))
    triads = [r for r in history(tmp_path) if r["kernel"] == "TRIAD"]
    assert [r["bench"] for r in triads] == ["run.py", "rust_reps.py"] and triads[0]["gen_us"] == "11"
    rust = triads[1]
    assert (rust["commit"], rust["size_label"], rust["size"]) == ("abc1234", "default", "1000000")
    assert (rust["rust_rep_us"], rust["run_date"]) == ("4.41", "2026-12-05T10:10:00+00:00")
    assert rust["rajaperf_base_rep_us"] == "" and rust["gen_us"] == "", "the second run had no RAJAPerf beside it"


def test_a_commit_is_dated_by_git_and_a_tree_without_one_is_not() -> None:
    short, seconds = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h %ct"], capture_output=True,
                                    text=True, check=True).stdout.split()
    committed = datetime.fromtimestamp(int(seconds), timezone.utc).isoformat()
    assert report.commit_date(short) == committed
    assert report.commit_date(f"{short} with local changes") == committed
    assert report.commit_date("no git") == "" and report.commit_date("0000000") == ""
