"""The Rust runtime and driver loader that the hook copies beside every generated module
(rs2gpu/rust/src/rs2gpu_runtime.rs, rs2gpu_driver.rs) are compiled, linted and unit-tested by cargo, in the
crate around them (rs2gpu/rust), as the generated module compiles them; without warnings."""
from __future__ import annotations

import re
import shutil

import pytest

from rs2gpu.emit.rust_host import RUNTIME_FILES

from tests.support.cargo_crates import cargo, needs_cargo
from tests.support.paths import REPO

pytestmark = needs_cargo

CRATE = REPO / "rs2gpu" / "rust"


@pytest.fixture(scope="module")
def runtime_target(tmp_path_factory: pytest.TempPathFactory):
    # A target folder of its own: RUSTFLAGS takes part in every crate's fingerprint.
    return tmp_path_factory.mktemp("rust-runtime-target")


def test_the_crate_compiles_the_files_the_hook_copies() -> None:
    assert [path.parent for path in RUNTIME_FILES] == [CRATE / "src"] * 2
    lib_rs = (CRATE / "src" / "lib.rs").read_text()
    assert 'include!("rs2gpu_runtime.rs");' in lib_rs and 'include!("rs2gpu_driver.rs");' in lib_rs


def test_runtime_unit_tests_pass_without_warnings(runtime_target) -> None:
    tested = cargo(["test"], CRATE, runtime_target, rustflags="-Dwarnings")
    assert tested.returncode == 0, tested.stderr + tested.stdout
    passed = [int(n) for n in re.findall(r"^test result: ok\. (\d+) passed; 0 failed", tested.stdout, re.M)]
    assert passed and sum(passed) > 0, tested.stdout


def test_runtime_passes_clippy(runtime_target) -> None:
    if shutil.which("cargo-clippy") is None:
        pytest.skip("clippy is not installed")
    linted = cargo(["clippy", "--all-targets", "--", "-Dwarnings"], CRATE, runtime_target)
    assert linted.returncode == 0, linted.stderr
