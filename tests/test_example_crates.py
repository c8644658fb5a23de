"""The Rust crates under examples/ build and pass their own tests with cargo, offline.

The rustc build of a kernel is its specification, so every example crate must compile and its unit tests must
pass. The `#[kernel]` attribute of the support crate must also reject arguments it does not know.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SUPPORT_CRATE = REPO / "rs2gpu" / "support"
EXAMPLE_CRATES = sorted(manifest.parent for manifest in (REPO / "examples").glob("*/Cargo.toml"))


@pytest.fixture(scope="session")
def cargo_target_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One target directory for the whole test run, so the support crate and each example build only once."""
    return tmp_path_factory.mktemp("cargo-target")


def cargo(command: str, crate: Path, target_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CARGO_TARGET_DIR": str(target_dir)}
    return subprocess.run(
        ["cargo", command, "--offline", "--quiet"],
        cwd=crate,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def write_kernel_crate(root: Path, attribute: str) -> Path:
    """A one-kernel crate that depends on the support crate by absolute path."""
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text(
        "[package]\n"
        'name = "attribute-probe"\n'
        'version = "0.1.0"\n'
        'edition = "2021"\n'
        "\n"
        "[dependencies]\n"
        f"rs2gpu = {{ path = {json.dumps(SUPPORT_CRATE.as_posix())} }}\n"
    )
    (root / "src" / "lib.rs").write_text(
        "use rs2gpu::kernel;\n"
        "\n"
        f"{attribute}\n"
        "pub fn scale(a: &mut [f64], s: f64) {\n"
        "    for i in 0..a.len() {\n"
        "        a[i] = s * a[i];\n"
        "    }\n"
        "}\n"
    )
    return root


def test_examples_folder_holds_crates() -> None:
    assert EXAMPLE_CRATES, "no examples/*/Cargo.toml found"


@pytest.mark.parametrize("crate", EXAMPLE_CRATES, ids=lambda crate: crate.name)
def test_example_crate_builds(crate: Path, cargo_target_dir: Path) -> None:
    result = cargo("build", crate, cargo_target_dir)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("crate", EXAMPLE_CRATES, ids=lambda crate: crate.name)
def test_example_crate_unit_tests_pass(crate: Path, cargo_target_dir: Path) -> None:
    result = cargo("test", crate, cargo_target_dir)
    assert result.returncode == 0, result.stderr + result.stdout


def test_kernel_attribute_accepts_fast_math(tmp_path: Path, cargo_target_dir: Path) -> None:
    crate = write_kernel_crate(tmp_path / "probe", "#[kernel(fast_math)]")
    result = cargo("build", crate, cargo_target_dir)
    assert result.returncode == 0, result.stderr


def test_kernel_attribute_rejects_unknown_argument(tmp_path: Path, cargo_target_dir: Path) -> None:
    crate = write_kernel_crate(tmp_path / "probe", "#[kernel(bogus)]")
    result = cargo("build", crate, cargo_target_dir)
    assert result.returncode != 0
    assert "argument `bogus`" in result.stderr, result.stderr
