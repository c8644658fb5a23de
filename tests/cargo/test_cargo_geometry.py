"""The Rust module launches a covering entry point on the grid and block rs2gpu's Python runtime chooses:
its `covering_geometry` (from the generated runtime file, compiled by rustc and run on the CPU) gives
the same answer as `rs2gpu.runtime.covering` for the same counts, None included."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from rs2gpu import pipeline
from rs2gpu.emit.rust_host import render_rust_module
from rs2gpu.runtime.base import MAX_GRID_X, MAX_GRID_YZ
from rs2gpu.runtime.covering import covering_geometry

from .conftest import REPO

LIMIT = 2**31
# (counts outermost first, the entry point's block or None); the last three are the groups of nests' vector forms
CASES = [
    ((100, 100, 100), None), ((464, 464, 464), None), ((1000, 1000), None), ((3, 1_000_000), None),
    ((70_000, 1), None), ((600_000, 2), None), ((4, 32, 25), None), ((70_000, 1, 3), None),
    ((1, 1), None), ((7, 5, 3), None), ((LIMIT, 4), None), ((1000, 1000), (16, 16, 1)),
    ((1_048_561, 16), (16, 16, 1)), ((17, 15), (16, 16, 1)), ((100, 100, 50), None), ((464, 464, 232), None),
    ((998, 501), None),
]


def python_answer(counts: tuple, block) -> str:
    inner_first = tuple(reversed(counts)) + (1,) * (3 - len(counts))
    found = covering_geometry(inner_first, len(counts), block, LIMIT, (MAX_GRID_X, MAX_GRID_YZ, MAX_GRID_YZ))
    return "None" if found is None else f"Some(({list(found[0])}, {list(found[1])}))"


def runtime_source() -> str:
    manifest = pipeline.translate(REPO / "examples" / "rajaperf").emitted.manifest
    return render_rust_module(manifest)["rs2gpu_runtime.rs"]


def test_rust_covering_geometry_is_the_python_runtimes(tmp_path) -> None:
    if shutil.which("rustc") is None:
        pytest.fail("rustc is required for this test")
    text = runtime_source()
    constants = re.findall(r"^const (?:BLOCK_SIZE|MAX_GRID_X|MAX_GRID_YZ): .*;$", text, re.M)
    covering = re.search(r"^pub\(super\) struct Covering \{.*?^\}$", text, re.M | re.S).group(0)
    functions = re.search(r"^/// Grid and block for a launch's covering entry point.*", text, re.M | re.S).group(0)
    calls = "\n".join(
        f"    println!(\"{{:?}}\", covering_geometry(&{list(counts)}, &Covering {{ symbol: \"k\", "
        f"block: {list(block or (0, 0, 0))}, count_limit: {LIMIT}, records_panics: false }}));" for counts, block in CASES)
    program = (f"#![allow(dead_code)]\nmod runtime {{\n{chr(10).join(constants)}\n{covering}\n{functions}\n"
               f"pub fn probe() {{\n{calls}\n}}\n}}\nfn main() {{ runtime::probe(); }}\n")
    (tmp_path / "probe.rs").write_text(program)
    built = subprocess.run(["rustc", "--edition", "2021", "-O", "-o", str(tmp_path / "probe"), str(tmp_path / "probe.rs")],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    printed = subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True, check=True).stdout.splitlines()
    assert printed == [python_answer(counts, block) for counts, block in CASES]
