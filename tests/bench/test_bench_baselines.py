"""The hand-written baselines compile with NVRTC for sm_90, with the flags of the generated code, and
define every kernel the table launches."""
from __future__ import annotations

from pathlib import Path

import pytest

from bench.cubin import kernel_resources
from bench.kernels import KERNELS
from rs2gpu.runtime import nvrtc

from tests.support.paths import REPO

BASELINES = sorted((REPO / "bench" / "baselines").glob("*.cu"))


@pytest.fixture(scope="module")
def cubins() -> dict[str, bytes]:
    try:
        nvrtc.nvrtc_version()
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"NVRTC is required (pip install '.[test]'): {e}")
    return {path.stem: nvrtc.compile_cuda(path.read_text(encoding="utf-8"), path.name, "sm_90").binary
            for path in BASELINES}


def test_every_table_source_is_a_baseline_file() -> None:
    assert {k.source for k in KERNELS} == {path.stem for path in BASELINES}


def test_baselines_compile_with_the_generated_codes_flags() -> None:
    from rs2gpu.runtime.options import CudaOptions

    flags = CudaOptions("sm_90").flags()
    assert "--fmad=false" in flags and "-arch=sm_90" in flags


@pytest.mark.parametrize("path", BASELINES, ids=lambda p: p.name)
def test_baseline_defines_every_symbol_the_table_launches(path: Path, cubins: dict[str, bytes]) -> None:
    symbols = set(nvrtc.cubin_symbols(cubins[path.stem]))
    wanted = {lp.symbol for k in KERNELS if k.source == path.stem for lp in k.launches}
    assert wanted <= symbols, f"missing from {path.name}: {sorted(wanted - symbols)}"
    assert symbols <= wanted, f"kernels of {path.name} that no table entry launches: {sorted(symbols - wanted)}"


def test_baselines_keep_base_cudas_plain_pointers() -> None:
    for path in BASELINES:
        code = "\n".join(line.split("//")[0] for line in path.read_text(encoding="utf-8").splitlines())
        assert "__restrict__" not in code, f"{path.name}: RAJAPerf's Base_CUDA pointers carry no __restrict__"


def test_register_counts_are_read_from_the_cubins(cubins: dict[str, bytes]) -> None:
    for name, binary in cubins.items():
        resources = kernel_resources(binary)
        assert set(resources) == set(nvrtc.cubin_symbols(binary))
        assert all(0 < r.registers <= 255 for r in resources.values())
