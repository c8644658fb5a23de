"""Fixtures of the Cargo hook's tests: cargo itself, and one target folder per test session, so the
support crate builds once (the crates and the cargo runs are in tests/support/cargo_crates.py)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture
def cargo_is_installed() -> None:
    """cargo is part of what the tests need (.ci/run's machine has it): a missing one fails, never skips."""
    if shutil.which("cargo") is None:
        pytest.fail("cargo is required for these tests")


@pytest.fixture(scope="session")
def cargo_target(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cargo-hook-target")
