"""Shared inputs of the HIP tests: the kernel corpus (found by glob), its translations, and the kernel
that covers the launch ABI. None of these tests needs an AMD GPU: they run hiprtc, clang and hip-python
up to the first call that needs a device.

(This folder's package is `tests.hip`: as a top-level package named `hip` it would shadow hip-python's.)
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from rs2gpu import pipeline
from rs2gpu.ir.abi import KernelABI
from rs2gpu.ir.diagnostics import CompileFailed

from tests.support.code_objects import vendor_compile_marks

REPO = Path(__file__).resolve().parents[2]
ABI_SOURCE = Path(__file__).resolve().parent / "data" / "abi.rs"
REDUCTIONS_SOURCE = Path(__file__).resolve().parent / "data" / "reductions.rs"
CORPUS = [*sorted(m.parent for m in (REPO / "examples").glob("*/Cargo.toml")),
          *sorted((REPO / "tests" / "cases").glob("*.rs")), *sorted((REPO / "tests" / "gpu" / "kernels").glob("*.rs"))]


def _source_id(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@lru_cache(maxsize=None)
def _translate(path: Path) -> pipeline.Translation:
    return pipeline.translate(path)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`corpus_kernel` is (source, kernel name) for every kernel of the corpus; a source that does not
    translate yields one entry, so that its failure shows in the tests instead of at collection."""
    if "corpus_kernel" not in metafunc.fixturenames:
        return
    params = []
    for source in CORPUS:
        try:
            names = sorted(_translate(source).emitted.abi.kernels)
        except CompileFailed:
            names = ["<does not translate>"]
        params += [pytest.param((source, name), id=f"{_source_id(source)}::{name}",
                                marks=vendor_compile_marks(source)) for name in names]
    metafunc.parametrize("corpus_kernel", params)


@pytest.fixture
def kernel_source(corpus_kernel) -> tuple[str, KernelABI, str]:
    """The corpus kernel's name, ABI and generated HIP text."""
    source, name = corpus_kernel
    try:
        result = _translate(source)
    except CompileFailed as err:
        pytest.fail(f"{_source_id(source)} does not translate:\n{err}")
    entry = result.emitted.abi.kernels[name]
    return name, entry, result.emitted.files[entry.files["hip"]]


@pytest.fixture(scope="session")
def abi_translation() -> pipeline.Translation:
    return _translate(ABI_SOURCE)


@pytest.fixture(scope="session")
def reductions_translation() -> pipeline.Translation:
    return _translate(REDUCTIONS_SOURCE)
