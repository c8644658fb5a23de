"""The Rust module launches a covering entry point on the grid and block rs2gpu's Python runtime chooses:
its `covering_geometry` (in the runtime file beside the generated module, compiled by rustc and run on
the CPU) gives the same answer as the Python runtime's `covering_launch` for the same counts and idle
threads before the first iteration, None included."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from rs2gpu import pipeline
from rs2gpu.emit.rust_host import MODULE_FILE, render_rust_module
from rs2gpu.ir.abi import CoveringGrid
from rs2gpu.runtime.base import covering_launch

from tests.support.paths import RAJAPERF

LIMIT = 2**31
ROW = (256, 1, 1)  # a single loop's block
# (counts outermost first, the entry point's block or None, the idle threads before x's first iteration,
# and the iterations of a thread along x, y, z when not one); the three nests after (1, 1) are the groups of
# nests' vector forms
CASES = [
    ((100, 100, 100), None, 0), ((464, 464, 464), None, 0), ((1000, 1000), None, 0), ((3, 1_000_000), None, 0),
    ((70_000, 1), None, 0), ((600_000, 2), None, 0), ((4, 32, 25), None, 0), ((70_000, 1, 3), None, 0),
    ((1, 1), None, 0), ((7, 5, 3), None, 0), ((LIMIT, 4), None, 0), ((1000, 1000), (16, 16, 1), 0),
    ((1_048_561, 16), (16, 16, 1), 0), ((17, 15), (16, 16, 1), 0), ((100, 100, 50), None, 0),
    ((464, 464, 232), None, 0), ((998, 501), None, 0),
    # single loops whose grid starts with idle threads: one more block where they push the last iteration
    # past a block's end (255 + 1), none where they do not (254 + 1), and none where no grid covers the count
    ((999_999,), ROW, 1), ((255,), ROW, 1), ((256,), ROW, 1), ((254,), ROW, 1), ((224,), ROW, 31),
    ((LIMIT - 1,), ROW, 1), ((1_000_000,), ROW, 0),
    # matrix products' micro-tiles: each thread 8 x 8 or 4 x 4 iterations of a 16 x 16 block
    ((4096, 4096), (16, 16, 1), 0, (8, 8, 1)), ((1000, 1003), (16, 16, 1), 0, (4, 4, 1)),
    ((262_144, 128), (16, 16, 1), 0, (8, 8, 1)), ((1, 1), (16, 16, 1), 0, (8, 8, 1)),
    ((LIMIT, 1), (16, 16, 1), 0, (8, 8, 1)),
]


def python_answer(counts: tuple, block, lead: int, tile=(1, 1, 1)) -> str:
    found = covering_launch(CoveringGrid(block, LIMIT, lead, tile), dict(zip("xyz", reversed(counts))))
    return "None" if found is None else f"Some(({list(found[0])}, {list(found[1])}))"


def test_rust_covering_geometry_is_the_python_runtimes(tmp_path) -> None:
    if shutil.which("rustc") is None:
        pytest.fail("rustc is required for this test")
    abi = pipeline.translate(RAJAPERF).emitted.abi
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    for name, text in render_rust_module(abi).items():
        (out_dir / name).write_text(text)
    # the runtime as the generated module includes it, with the module's block size, and a probe in it
    block_size = re.search(r"^ *const BLOCK_SIZE: u32 = \d+;$", (out_dir / MODULE_FILE).read_text(), re.M).group(0)
    calls = "\n".join(
        f"    println!(\"{{:?}}\", covering_geometry(&{list(counts)}, &Grid {{ "
        f"block: {list(block or (0, 0, 0))}, count_limit: {LIMIT}, lead: {lead}, tile: {list(tile)}, fill: 0 }}));"
        for counts, block, lead, *rest in CASES for tile in [rest[0] if rest else (1, 1, 1)])
    program = (f"#[allow(dead_code, unsafe_code)]\nmod runtime {{\n{block_size}\n"
               f"include!(concat!(env!(\"OUT_DIR\"), \"/rs2gpu_runtime.rs\"));\n"
               f"pub fn probe() {{\n{calls}\n}}\n}}\nfn main() {{ runtime::probe(); }}\n")
    (tmp_path / "probe.rs").write_text(program)
    built = subprocess.run(["rustc", "--edition", "2021", "-o", str(tmp_path / "probe"), str(tmp_path / "probe.rs")],
                           env={**os.environ, "OUT_DIR": str(out_dir)}, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    printed = subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True, check=True).stdout.splitlines()
    assert printed == [python_answer(*case) for case in CASES]
