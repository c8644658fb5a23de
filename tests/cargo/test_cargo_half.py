"""Half precision through the Cargo hook: its generated API takes the support crate's `f16` and `bf16`
(`&[rs2gpu::f16]`, `rs2gpu::bf16` scalars) and builds; on a GPU its results are the CPU's, bit for bit
(tests/half/data/hook_lib.rs, hook_main.rs)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.cargo_crates import cargo, hook_crate, needs_cargo
from tests.support.paths import REPO

pytestmark = needs_cargo

DATA = REPO / "tests" / "half" / "data"


@pytest.fixture(scope="module")
def hook_program(tmp_path_factory, cargo_target) -> Path:
    """The hook crate's GPU program, built (on a machine without CUDA as well)."""
    root = tmp_path_factory.mktemp("half-hook")
    crate = hook_crate(root / "probe", (DATA / "hook_lib.rs").read_text(), (DATA / "hook_main.rs").read_text())
    built = cargo(["build"], crate, cargo_target)
    assert built.returncode == 0, built.stderr
    return cargo_target / "debug" / "probe"


def test_the_hook_api_takes_the_support_crates_half_types(hook_program) -> None:
    ran = subprocess.run([str(hook_program)], capture_output=True, text=True, timeout=300, check=False)
    if ran.returncode == 0:
        pytest.skip("this machine has a GPU: test_hook_program_matches_the_cpu_on_the_gpu checks the results")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "no GPU to run on" in ran.stderr


@pytest.mark.gpu
def test_hook_program_matches_the_cpu_on_the_gpu(hook_program) -> None:
    ran = subprocess.run([str(hook_program)], capture_output=True, text=True, timeout=300, check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "f16 axpy: true, bf16 expression: true" in ran.stdout
