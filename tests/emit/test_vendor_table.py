"""The vendor table holds every vendor spelling the emitter writes: `emit/dialect.py` and the preludes.

A kernel's text is rendered once and shared by every target, so the rest of `emit/` writes rs2gpu's own
names for the GPU's built-ins (`RS2GPU_THREAD_IDX.x`, `RS2GPU_SHARED`, `RS2GPU_SYNC_THREADS()`), and each
dialect's prelude defines them as that dialect spells them. A third vendor is then one more row of the
table and one more prelude, not a search through the emitter.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from rs2gpu import pipeline
from rs2gpu.emit import render_prelude
from rs2gpu.emit.dialect import DIALECTS

REPO = Path(__file__).resolve().parents[2]
EMITTER = sorted(path for path in (REPO / "emit").glob("*.py") if path.name != "dialect.py")
SOURCES = [REPO / "examples" / "rajaperf", *sorted((REPO / "tests" / "cases").glob("*.rs"))]

# The index built-ins, block memory, the block barrier, atomics and warp functions, as CUDA (and HIP,
# which accepts CUDA's names) spells them.
BUILT_INS = re.compile(r"blockIdx|threadIdx|blockDim|gridDim|__syncthreads|__shared__|atomic[A-Z]|__shfl|warpSize")
# The qualifiers, which the templates write and the emitter's Python takes from the vendor table.
QUALIFIERS = re.compile(r"__restrict__|__global__|__device__|__launch_bounds__|__forceinline__")
# rs2gpu's name for each built-in, and the field of the table that spells it.
NEUTRAL_NAMES = {"RS2GPU_THREAD_IDX": "thread_idx", "RS2GPU_BLOCK_IDX": "block_idx", "RS2GPU_BLOCK_DIM": "block_dim",
                 "RS2GPU_GRID_DIM": "grid_dim", "RS2GPU_SHARED": "shared", "RS2GPU_SYNC_THREADS()": "sync_threads"}
END_OF_PRELUDE = "// ---- end of prelude ----"


def test_no_emitter_module_but_the_vendor_table_spells_a_vendor_name() -> None:
    found = [f"emit/{path.name}:{number}: {line.strip()}" for path in EMITTER
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if BUILT_INS.search(line) or QUALIFIERS.search(line)]
    assert found == []


@pytest.mark.parametrize("dialect", DIALECTS.values(), ids=DIALECTS.keys())
def test_each_prelude_defines_the_neutral_names_as_its_dialect_spells_them(dialect) -> None:
    prelude = render_prelude(dialect).splitlines()
    for name, field in NEUTRAL_NAMES.items():
        assert f"#define {name} {getattr(dialect, field)}" in prelude


@pytest.fixture(scope="module")
def translations() -> list[pipeline.Translation]:
    return [pipeline.translate(source) for source in SOURCES]


def test_kernel_text_is_the_same_for_every_target_and_names_no_built_in(translations) -> None:
    """After the prelude, a kernel's files for CUDA and HIP are one text, which names the built-ins only by
    rs2gpu's names."""
    checked = 0
    for translation in translations:
        files = translation.emitted.files
        for kernel in translation.emitted.abi.kernels.values():
            bodies = {target: files[name].split(END_OF_PRELUDE, 1)[1] for target, name in kernel.files.items()}
            assert bodies["cuda"] == bodies["hip"], kernel.files
            assert BUILT_INS.findall(bodies["cuda"]) == [], kernel.files["cuda"]
            checked += 1
    assert checked > 50
