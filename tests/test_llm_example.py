"""examples/llm: one Llama-style decoder layer's decode step and prefill, bf16 with f32 sums, on the cpu
backend (rustc's build of the kernels) at a small shape, against numpy's computation of the same layer with
the same bf16 roundings in f64 sums. The two differ only where an f32 sum and an f64 sum round to different bf16 values,
so every element lies within a few bf16 steps (2⁻⁸ relative, a step each for the roundings in its path) of
the reference's, relative to the output's rms. The GPU run (`--backend cuda`, bench/results) compares with
PyTorch at Llama-2-7B's shapes."""
from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.support.paths import REPO

pytest.importorskip("ml_dtypes")


def llm_module():
    spec = importlib.util.spec_from_file_location("llm_example", REPO / "examples" / "llm" / "llm.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def small_run() -> dict:
    llm = llm_module()
    return llm.run_cpu(llm.SHAPES["small"])


def test_the_decode_step_on_the_cpu_backend_is_numpys_within_bf16_rounding(small_run) -> None:
    assert small_run["against_numpy"]["max_rel"] <= 4 * 2.0 ** -8
    assert small_run["against_numpy"]["rms_rel"] <= 2.0 ** -8


def test_the_prefill_on_the_cpu_backend_is_numpys_within_bf16_rounding(small_run) -> None:
    # a prompt's attention rounds 64 x 64 probabilities per head to bf16 after an f32 softmax (numpy's is
    # f64): where one lands on the other side of a rounding boundary, the values computed from it move by
    # a step, so the bound allows a few steps more than the decode step's
    assert small_run["prefill_against_numpy"]["max_rel"] <= 8 * 2.0 ** -8
    assert small_run["prefill_against_numpy"]["rms_rel"] <= 2.0 ** -8
