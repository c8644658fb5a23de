"""The benchmark's writers: CSV and markdown columns from a result row, and a valid PNG."""
from __future__ import annotations

import csv
import io
import struct
import zlib
from pathlib import Path

import numpy as np

from bench import report
from bench.png import bar_chart_png, write_png
from bench.report import Row

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
