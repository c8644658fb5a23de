"""The user guide's first crate is what rs2gpu accepts, and its racy variant prints what the guide shows."""
from __future__ import annotations

import re
from pathlib import Path

from tests.cli.running import rs2gpu, write_crate

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"


def guide_blocks(language: str = "") -> list[str]:
    """The guide's code blocks of `language` ("" for plain text), in order."""
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", GUIDE.read_text(), re.M | re.S)
    return [body for lang, body in blocks if lang == language]


def first_crate_source() -> str:
    return next(block for block in guide_blocks("rust") if "pub fn saxpy" in block)


def test_the_guides_first_crate_checks_clean(tmp_path: Path) -> None:
    result = rs2gpu("check", write_crate(tmp_path / "saxpy", first_crate_source()))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("    Checked 2 kernels of `probe`")


def test_the_guides_race_prints_the_diagnostic_the_guide_shows(tmp_path: Path) -> None:
    racy_line = next(block for block in guide_blocks("rust") if "y[i + 1]" in block)
    source = first_crate_source().replace("        y[i] = a * x[i] + y[i];\n", racy_line)
    crate = write_crate(tmp_path / "saxpy", source)
    result = rs2gpu("check", ".", cwd=crate)
    assert result.returncode == 1
    shown = next(block for block in guide_blocks() if block.startswith("error[RG0103]"))
    assert result.stderr == shown
