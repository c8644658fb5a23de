"""manifest.json's text: `json_text` writes exactly what `json.dumps(to_json(value), indent=2)` writes, which
the json module defines; the crates below cover the ABI's dataclasses, enums, tuples and host expressions."""
from __future__ import annotations

import json

import pytest

from rs2gpu import pipeline
from rs2gpu.ir.abi import to_json
from rs2gpu.ir.abi_json import json_text
from tests.support.paths import REPO

CRATES = ["examples/rajaperf", "examples/heat", "tests/cases/semantics.rs", "tests/cases/shapes.rs"]


@pytest.mark.parametrize("crate", CRATES)
def test_a_crates_abi_is_written_as_the_json_module_writes_its_json_data(crate: str) -> None:
    abi = pipeline.translate(REPO / crate).emitted.abi
    assert json_text(abi) == json.dumps(to_json(abi), indent=2)


@pytest.mark.parametrize("value", [
    {}, [], (), [[]], {"a": {"b": [{}]}}, "quote \" backslash \\ newline \n and é",
    {1: 2, 1.5: None, None: True, False: (1, 2.5, -0.0, 1e300)},
    [float("nan"), float("inf"), float("-inf")],
])
def test_json_scalars_and_containers_are_written_as_the_json_module_writes_them(value) -> None:
    assert json_text(value) == json.dumps(value, indent=2)


def test_a_nested_value_is_indented_by_the_pad_it_is_given() -> None:
    value = {"kernel": [1, {"x": 2}]}
    assert json_text(value, "    ") == json.dumps(value, indent=2).replace("\n", "\n    ")
