"""Fixtures of the emitter's tests."""
from __future__ import annotations

import pytest

from tests.support.generated_code import translate_source


@pytest.fixture(scope="module")
def translated(request, tmp_path_factory: pytest.TempPathFactory):
    """The translation of the test module's `SOURCE` (Rust text), written to a file named after the module."""
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_").removesuffix("_output")
    return translate_source(tmp_path_factory.mktemp(name), name, request.module.SOURCE)
