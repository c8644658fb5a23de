"""Places in the source tree the tests read."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
CASES = TESTS / "cases"
RAJAPERF = REPO / "examples" / "rajaperf"
