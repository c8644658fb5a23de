"""Helpers shared by the checker suites: write a kernel source to a file and run the checker on it."""
from __future__ import annotations

from pathlib import Path

import pytest

from rs2gpu import pipeline


@pytest.fixture
def check_source(tmp_path: Path):
    """Check one Rust source text as the file `lib.rs`; returns the pipeline's Translation."""

    def run(source: str) -> pipeline.Translation:
        path = tmp_path / "lib.rs"
        path.write_text(source)
        return pipeline.check(path)

    return run
