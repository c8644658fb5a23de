"""The support crate (rs2gpu/support: the `#[kernel]` attribute and the `f16`/`bf16` types kernels use) passes
its own unit tests, offline and without warnings: the half types' values, rounding and NaN rules, each checked
against the formats' definitions and against a second route to the correctly rounded result."""
from __future__ import annotations

import re

from rs2gpu import support_crate_path

from tests.support.cargo_crates import cargo, needs_cargo

pytestmark = needs_cargo


def test_support_crate_unit_tests_pass_without_warnings(tmp_path) -> None:
    tested = cargo(["test", "--release"], support_crate_path(), tmp_path, rustflags="-Dwarnings")
    assert tested.returncode == 0, tested.stderr + tested.stdout
    passed = [int(n) for n in re.findall(r"^test result: ok\. (\d+) passed; 0 failed", tested.stdout, re.M)]
    assert sum(passed) >= 11, tested.stdout
