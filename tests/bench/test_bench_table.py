"""The benchmark table is consistent with RAJAPerf's figures and with the Rust kernel crate."""
from __future__ import annotations

import numpy as np
import pytest

from bench.anchor import H200
from bench.data import Rand, domain2d, domain3d
from bench.harness import prepare
from bench.kernels import (BY_NAME, KERNELS, NOT_IN_SUITE, RUST_NOT_YET_WRITTEN, bytes_per_rep,
                           target_size)

from tests.support.paths import RAJAPERF as CRATE


def crate_items():
    from bench.corpus import rust_items

    return [item for path in sorted((CRATE / "src").rglob("*.rs"))
            for item in rust_items(path.read_text(encoding="utf-8"),
                                   f"src/{path.relative_to(CRATE / 'src').as_posix()}")]


def crate_kernels() -> set[str]:
    return {i.name for i in crate_items() if i.kernel}


def default_dims(name: str) -> dict:
    k = BY_NAME[name]
    return k.dims(target_size(k, 1.0)[0])


def test_names_are_unique_and_cover_stream_basic_lcals_and_the_apps_kernels() -> None:
    assert len(BY_NAME) == len(KERNELS)
    groups = {k.group for k in KERNELS}
    assert groups == {"Stream", "Basic", "Lcals", "Apps"}
    for group in ("Stream", "Basic", "Lcals"):
        expected = {name for name, a in H200.items() if _group(name) == group}
        assert expected <= set(BY_NAME), f"{group} kernels missing from the table: {sorted(expected - set(BY_NAME))}"
    for name in ("ENERGY", "FIR", "LTIMES", "MATVEC_3D_STENCIL", "PRESSURE", "VOL3D", "DEL_DOT_VEC_2D"):
        assert name in BY_NAME
    apps = {name for name in H200 if _group(name) == "Apps"}
    assert apps <= set(BY_NAME) | set(NOT_IN_SUITE)


def _group(name: str) -> str:
    stream = {"ADD", "COPY", "DOT", "MUL", "TRIAD"}
    lcals = {"DIFF_PREDICT", "EOS", "FIRST_DIFF", "FIRST_MIN", "FIRST_SUM", "GEN_LIN_RECUR", "HYDRO_1D", "HYDRO_2D",
             "INT_PREDICT", "PLANCKIAN", "TRIDIAG_ELIM"}
    apps = {"CONVECTION3DPA", "DEL_DOT_VEC_2D", "DIFFUSION3DPA", "EDGE3D", "ENERGY", "FIR", "LTIMES", "LTIMES_NOVIEW",
            "MASS3DEA", "MASS3DPA", "MATVEC_3D_STENCIL", "NODAL_ACCUMULATION_3D", "PRESSURE", "VOL3D",
            "ZONAL_ACCUMULATION_3D"}
    return "Stream" if name in stream else "Lcals" if name in lcals else "Apps" if name in apps else "Basic"


def test_each_rust_kernel_the_table_names_exists_or_is_marked_not_yet_written() -> None:
    """A named kernel is a #[kernel] of the crate, a plain function there whose doc says why it is not one,
    or marked as not yet written."""
    items = {i.name: i for i in crate_items() if i.function}
    for k in KERNELS:
        item = items.get(k.rust)
        if item is None:
            assert k.rust in RUST_NOT_YET_WRITTEN, \
                f"{k.name}: examples/rajaperf has no `{k.rust}` and the table does not mark it as not yet written"
        elif not item.kernel:
            assert "#[kernel]" in item.doc, f"{k.name}: `{k.rust}` is not a #[kernel] and its doc does not say why"


def test_every_kernel_of_the_crate_is_benchmarked() -> None:
    named = {k.rust for k in KERNELS}
    assert crate_kernels() <= named, f"kernels without a table entry: {sorted(crate_kernels() - named)}"


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_bytes_per_rep_and_size_match_rajaperf_at_the_default_size(name: str) -> None:
    d = default_dims(name)
    anchor = H200[name]
    assert d["size"] == anchor.size
    assert bytes_per_rep(BY_NAME[name], d) == anchor.bytes_per_rep


@pytest.mark.parametrize("name, expected", [("TRIAD", 24_000_000), ("FIR", 16_000_248), ("DOT", 16_000_016),
                                            ("MATVEC_3D_STENCIL", 138_635_296), ("VOL3D", 35_558_808),
                                            ("LTIMES", 14_254_592), ("HYDRO_2D", 143_680_320)])
def test_bytes_per_rep_of_the_doc(name: str, expected: int) -> None:
    assert bytes_per_rep(BY_NAME[name], default_dims(name)) == expected


@pytest.mark.parametrize("name, expected", [("TRIAD", 2_000_000), ("FIR", 32_000_000), ("ENERGY", 55_000_000),
                                            ("VOL3D", 79_417_584), ("LTIMES", 49_971_200), ("HYDRO_2D", 43_824_176),
                                            ("MAT_MAT_SHARED", 2_048_385_024), ("IF_QUAD", 11_000_000),
                                            ("DEL_DOT_VEC_2D", 54_000_000), ("MATVEC_3D_STENCIL", 53_000_000)])
def test_flops_per_rep_of_the_doc(name: str, expected: int) -> None:
    assert BY_NAME[name].flops(default_dims(name)) == expected


def test_mesh_domains_of_the_doc() -> None:
    d3, d2 = domain3d(1_000_000), domain2d(1_000_000)
    assert (d3.r, d3.jp, d3.kp, d3.nnalls, d3.fpz, d3.lpz) == (101, 104, 10816, 1_124_864, 10_921, 1_113_942)
    assert (d2.r, d2.jp, d2.nnalls, d2.fpz, d2.lpz) == (1001, 1004, 1_008_016, 1_005, 1_007_010)
    zones = d3.real_zones(np)
    assert zones.size == 1_000_000 and zones[0] == 2 + 2 * 104 + 2 * 10816 and zones[-1] == d3.lpz - 10816 - 104 - 1
    assert len(set(d2.real_zones(np).tolist())) == d2.n_real_zones


def test_large_sizes_scale_the_target_and_respect_caps() -> None:
    assert BY_NAME["TRIAD"].dims(target_size(BY_NAME["TRIAD"], 100.0)[0])["size"] == 100_000_000
    assert target_size(BY_NAME["MAT_MAT_SHARED"], 100.0) == (10_000_000, 10.0)
    assert default_dims("LTIMES")["num_z"] == 488


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_data_has_rajaperfs_shapes_random_inputs_and_poisoned_outputs(name: str) -> None:
    k = BY_NAME[name]
    d = k.dims(2000)
    sides = prepare(k, d, np, seed=3)
    for output in k.outputs:
        array = sides.gen[output]
        assert sides.gen[output] is not sides.hand[output]
        if array.dtype == np.float64:
            assert np.isnan(array).all(), f"{name}: output `{output}` is not poisoned"
    for inout in k.inout:
        assert sides.gen[inout] is not sides.hand[inout]
        assert np.array_equal(sides.gen[inout], sides.hand[inout])
    inputs = [v for key, v in sides.gen.items() if isinstance(v, np.ndarray) and key not in (*k.outputs, *k.inout)
              and v.dtype == np.float64 and key != "coeff"]
    for array in inputs:
        assert np.isfinite(array).all() and (array != 0).all(), f"{name}: an input holds zeros or non-finite values"


def test_random_inputs_change_with_the_seed() -> None:
    a, b = Rand(np, 1).uniform(100), Rand(np, 2).uniform(100)
    assert not np.array_equal(a, b) and (a >= 0.5).all() and (a < 1.5).all()
