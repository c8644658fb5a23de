"""An error in one kernel hides no other kernel's: `rs2gpu check`, the Cargo hook and `rs2gpu.load()` report
every kernel's diagnostics, in source order, the frontend's (errors in the Rust itself) and the checker's
(races in valid Rust) together, and count them at the end as rustc does.

tests/cli/data/nine_errors.rs has nine kernels with one error each. Which of them are errors of the Rust
itself is rustc's verdict: it rejects the file at exactly those lines and accepts the rest.
"""
from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import rs2gpu
from rs2gpu import cargo as hook
from rs2gpu.ir.diagnostics import CompileFailed

from tests.cli.running import no_traceback, rs2gpu as run_rs2gpu, write_crate
from tests.frontend.conftest import as_plain_rust
from tests.support.source_positions import locate

SOURCE = (Path(__file__).resolve().parent / "data" / "nine_errors.rs").read_text()

# (code, the source text the diagnostic points at, inside this larger unambiguous piece, whether rustc
# rejects it too)
EXPECTED = [
    ("RG0103", "a[i + 1]", "a[i] = a[i + 1]", False),
    ("RG0004", "offset", "b[i] + offset", True),  # E0425
    ("RG0101", "a[0] = b[i]", None, False),
    ("RG0005", "b[i] + 1.0f64", None, True),  # E0308
    ("RG0102", "a[i / 2] = b[i]", None, False),
    ("RG0007", "iter", "b.iter().rev()", False),  # valid Rust, beyond the kernel language
    ("RG0104", "last = b[i]", None, False),
    ("RG0007", "sqrt", "i.sqrt()", True),  # E0599
    ("RG0103", "a[i]", "a[i + 1] = a[i]", False),
]
POSITIONS = [(code, *locate(SOURCE, inside or at, at if inside else None)) for code, at, inside, _ in EXPECTED]
RUST_ERROR_LINES = {line for (_, line, _), (*_, rust) in zip(POSITIONS, EXPECTED) if rust}
ARROW = re.compile(r"^\s*--> src/lib\.rs:(\d+):(\d+)$")


def reported(stderr: str) -> list[tuple[str, int, int]]:
    """(code, line, column) of each diagnostic in rendered output, in the order printed."""
    found, lines = [], stderr.splitlines()
    for header, arrow in zip(lines, lines[1:]):
        code = re.match(r"^error\[(RG\d{4})\]", header)
        position = ARROW.match(arrow)
        if code and position:
            found.append((code.group(1), int(position.group(1)), int(position.group(2))))
    return found


def test_rustc_rejects_exactly_the_kernels_whose_rust_is_wrong(tmp_path: Path) -> None:
    rustc = shutil.which("rustc")
    if rustc is None:
        pytest.skip("rustc is not installed")
    (tmp_path / "lib.rs").write_text(as_plain_rust(SOURCE))
    result = subprocess.run([rustc, "--edition", "2021", "--crate-type", "lib", "--emit=metadata", "-A", "warnings",
                             "-o", str(tmp_path / "lib.rmeta"), str(tmp_path / "lib.rs")],
                            capture_output=True, text=True, check=False)
    assert result.returncode != 0
    rustc_lines = {int(line) for line in re.findall(r"--> .*lib\.rs:(\d+):\d+", result.stderr)}
    assert rustc_lines == RUST_ERROR_LINES, result.stderr


def test_check_reports_every_kernels_errors_in_source_order_and_counts_them(tmp_path: Path) -> None:
    result = run_rs2gpu("check", write_crate(tmp_path / "nine", SOURCE))
    assert result.returncode == 1
    no_traceback(result)
    assert reported(result.stderr) == POSITIONS
    summary = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert summary == [f"error: could not check `{tmp_path / 'nine'}` due to 9 previous errors"]
    assert result.stderr.rstrip("\n").splitlines()[-2] == summary[0]  # then the `rs2gpu explain` hint


def test_load_raises_compile_failed_listing_every_error(tmp_path: Path) -> None:
    with pytest.raises(CompileFailed) as failure:
        rs2gpu.load(write_crate(tmp_path / "nine", SOURCE), backend="cpu")
    assert [(d.code, d.span.line, d.span.col) for d in failure.value.diagnostics] == POSITIONS
    assert reported(str(failure.value)) == POSITIONS


def test_the_cargo_hook_reports_every_error_and_counts_them_last(tmp_path: Path) -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    assert hook.run_build_script(write_crate(tmp_path / "nine", SOURCE), tmp_path / "out", stdout, stderr) == 1
    assert reported(stderr.getvalue()) == POSITIONS
    lines = stderr.getvalue().rstrip("\n").splitlines()
    assert lines[-2] == "error: rs2gpu could not translate the kernels due to 9 previous errors"
    assert stdout.getvalue() == ""
