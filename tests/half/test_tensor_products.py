"""Matrix products of half values into f32 sums (`emit.tensor`): where the product fills the device, the
tiles entry point runs it on the tensor cores' 16 x 8 x 16 tiles, whose sums are a float reduction's, within
n·ε·Σ|aₖbₖ| of rustc's (ε = 2⁻²³, docs/kernels.md); where the GPU has no tensor cores (the emulated device,
HIP) the same tiles add the terms lane by lane in k order, as rustc does, bit for bit. Below the fill the
covering entry point runs one thread per output, bit for bit too. A product with `mul_add` is a chain Rust
fixes, never reassociated.

Tests that take `device` run on the emulated device and, under `-m gpu`, on the GPU."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rs2gpu import pipeline
from tests.support.generated_code import ptx_entries

ml_dtypes = pytest.importorskip("ml_dtypes")

SOURCE = Path(__file__).parent / "kernels" / "products.rs"
TILE_ITERATIONS_PER_THREAD = 8  # 128 x 128 iterations a block, against a multiprocessor's 2048 threads
EPSILON = 2.0 ** -23


def entry_for(device, outputs: int) -> str:
    return "tiles" if outputs >= TILE_ITERATIONS_PER_THREAD * device.grid_threads() else "covering"


def halves(dtype, count: int, seed) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(count).astype(dtype)


def results(rust, kernels, name: str, outputs: int, *arguments, dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    """rustc's and the device's outputs of the kernel `name` on the same inputs, each written into `outputs`
    elements of `dtype` that start as NaN (f32) or zero (f16): an element no iteration writes shows."""
    fill = np.nan if dtype == np.float32 else 0
    want, got = np.full(outputs, fill, dtype), np.full(outputs, fill, dtype)
    getattr(rust, name)(want, *arguments)
    getattr(kernels, name)(got, *arguments)
    return want, got


def wide(x: np.ndarray) -> np.ndarray:
    return np.abs(x.astype(np.float64))


def assert_within_reduction_bound(got: np.ndarray, want: np.ndarray, magnitudes: np.ndarray, n: int) -> None:
    """`got` within n·ε·Σ|aₖbₖ| of `want`, element by element (`magnitudes`: Σ|aₖbₖ|)."""
    error = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert np.all(error <= n * EPSILON * magnitudes), float(np.max(error / np.maximum(magnitudes, 1e-300)))


def magnitudes_nt(a: np.ndarray, b: np.ndarray, m: int, n: int, p: int) -> np.ndarray:
    return (wide(a).reshape(m, n) @ wide(b).reshape(p, n).T).ravel()


@pytest.mark.parametrize("m, n, p", [(128, 48, 127), (130, 37, 131), (200, 100, 96)],
                         ids=["just below one tile a multiprocessor", "across the tiles' and k's edges",
                              "several tiles, k past three slices"])
def test_a_bf16_product_into_f32_is_within_the_reduction_bound_of_rustcs(device, rust, kernels, m, n, p) -> None:
    a, b = halves(ml_dtypes.bfloat16, m * n, [m, n]), halves(ml_dtypes.bfloat16, p * n, [p, n])
    want, got = results(rust, kernels, "product_nt", m * p, a, b, 0, m, n, p)
    assert kernels.product_nt.last_variants == [f"rs2gpu_product_nt_0_{entry_for(device, m * p)}"]
    assert_within_reduction_bound(got, want, magnitudes_nt(a, b, m, n, p), n)


def test_the_lane_by_lane_tiles_add_in_rusts_order(emulated_device, rust) -> None:
    m, n, p = 130, 37, 131
    kernels = emulated_device.load(SOURCE)
    a, b = halves(ml_dtypes.bfloat16, m * n, 1), halves(ml_dtypes.bfloat16, p * n, 2)
    want, got = results(rust, kernels, "product_nt", m * p, a, b, 0, m, n, p)
    assert kernels.product_nt.last_variants == ["rs2gpu_product_nt_0_tiles"]
    assert got.tobytes() == want.tobytes()
    heads, tokens, width = 2, 130, 40
    q, k = (halves(ml_dtypes.bfloat16, tokens * heads * width, seed) for seed in (3, 4))
    want, got = results(rust, kernels, "scores_per_head", heads * tokens * tokens, q, k, heads, width)
    assert kernels.scores_per_head.last_variants == ["rs2gpu_scores_per_head_0_tiles"]
    assert got.tobytes() == want.tobytes()


def test_a_product_from_a_later_first_row_writes_only_its_rows(device, rust, kernels) -> None:
    first, m, n, p = 70, 200, 33, 129
    a, b = halves(ml_dtypes.bfloat16, m * n, 3), halves(ml_dtypes.bfloat16, p * n, 4)
    want, got = results(rust, kernels, "product_nt", m * p, a, b, first, m, n, p)
    assert np.all(np.isnan(got[:first * p]))
    assert_within_reduction_bound(got[first * p:], want[first * p:],
                                  magnitudes_nt(a, b, m, n, p)[first * p:], n)


def test_an_f16_product_with_strided_columns_rounds_each_sum_once_to_f16(device, rust, kernels) -> None:
    m, n, p = 150, 45, 140
    a, b = halves(np.float16, m * n, 5), halves(np.float16, n * p, 6)
    want, got = results(rust, kernels, "product_nn", m * p, a, b, m, n, p, dtype=np.float16)
    assert kernels.product_nn.last_variants == [f"rs2gpu_product_nn_0_{entry_for(device, m * p)}"]
    # each f16 result is the f32 sum rounded once: within the bound plus half an f16 ulp of the sum
    sums = np.abs(a.astype(np.float64)).reshape(m, n) @ np.abs(b.astype(np.float64)).reshape(n, p)
    ulp = np.spacing(np.abs(want).astype(np.float16)).astype(np.float64)
    error = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert np.all(error <= n * EPSILON * sums.ravel() + ulp)


def test_a_product_of_transposed_operands_is_within_the_reduction_bound(device, rust, kernels) -> None:
    m, n, p = 140, 50, 135
    a, b = halves(ml_dtypes.bfloat16, n * m, 7), halves(ml_dtypes.bfloat16, n * p, 8)
    want, got = results(rust, kernels, "product_tn", m * p, a, b, m, n, p)
    assert_within_reduction_bound(got, want, (wide(a).reshape(n, m).T @ wide(b).reshape(n, p)).ravel(), n)


def test_a_product_per_head_runs_on_the_tiles_of_each_head(device, rust, kernels) -> None:
    heads, tokens, width = 2, 130, 40  # 2 x 130² outputs; k ends inside a slice
    q, k = (halves(ml_dtypes.bfloat16, tokens * heads * width, seed) for seed in (13, 14))
    want, got = results(rust, kernels, "scores_per_head", heads * tokens * tokens, q, k, heads, width)
    assert kernels.scores_per_head.last_variants == [f"rs2gpu_scores_per_head_0_{entry_for(device, got.size)}"]
    def by_head(x):
        return wide(x).reshape(tokens, heads, width).transpose(1, 0, 2)
    magnitudes = np.einsum("htd,hsd->hts", by_head(q), by_head(k)).ravel()
    assert_within_reduction_bound(got, want, magnitudes, width)


@pytest.mark.parametrize("rows, inputs", [(70, 64), (70, 45), (3, 1000)],
                         ids=["rows on the 16-byte grid", "rows off it but every eighth", "long rows"])
def test_a_matrix_vector_product_read_eight_halves_a_load_is_within_the_reduction_bound(device, rust, kernels, rows,
                                                                                      inputs) -> None:
    w, x = halves(ml_dtypes.bfloat16, rows * inputs, 15), halves(ml_dtypes.bfloat16, inputs, 16)
    want, got = results(rust, kernels, "matrix_vector", rows, w, x)
    assert kernels.matrix_vector.last_variants[0].rsplit("_", 1)[1] in ("blocks", "warps")  # a row split
    assert_within_reduction_bound(got, want, wide(w).reshape(rows, inputs) @ wide(x), inputs)


def test_a_fused_product_is_no_reduction_and_stays_rustcs_bit_for_bit(device, rust, kernels) -> None:
    m, n, p = 130, 37, 131
    a, b = halves(ml_dtypes.bfloat16, m * n, 9), halves(ml_dtypes.bfloat16, p * n, 10)
    want, got = results(rust, kernels, "product_fused", m * p, a, b, m, n, p)
    assert all("tiles" not in name for name in kernels.product_fused.last_variants)
    assert got.tobytes() == want.tobytes()


@pytest.mark.gpu
@pytest.mark.parametrize("kernel, dtype", [("product_nt", "bfloat16"), ("product_tn", "bfloat16")])
def test_on_the_gpu_a_product_that_fills_it_runs_on_the_tensor_cores_within_the_bound(rust, kernel, dtype) -> None:
    from tests.support.devices import CudaDevice
    device = CudaDevice()
    kernels = device.load(SOURCE)
    m, n, p = 1536, 40, 1536  # 8 outputs per thread an H100 or H200 holds; k ends inside a slice
    a, b = halves(getattr(ml_dtypes, dtype), m * n, 11), halves(getattr(ml_dtypes, dtype), n * p, 12)
    arguments = (a, b, 0, m, n, p) if kernel == "product_nt" else (a, b, m, n, p)
    want, got = results(rust, kernels, kernel, m * p, *arguments)
    assert getattr(kernels, kernel).last_variants == [f"rs2gpu_{kernel}_0_tiles"]
    magnitudes = (wide(a).reshape(m, n) @ wide(b).reshape(p, n).T if kernel == "product_nt"
                  else wide(a).reshape(n, m).T @ wide(b).reshape(n, p)).ravel()
    assert_within_reduction_bound(got, want, magnitudes, n)


@pytest.fixture(scope="module")
def translation():
    return pipeline.translate(SOURCE)


@pytest.mark.parametrize("kernel, warpgroups", [("product_nt", True), ("product_nn", True), ("product_tn", False)],
                         ids=["a and b k-contiguous", "b contiguous along its columns", "a contiguous along its rows"])
def test_on_hopper_a_product_whose_a_is_k_contiguous_runs_warpgroup_products(translation, kernel, warpgroups) -> None:
    """NVRTC's PTX for sm_90a, the architecture the runtime compiles for on an H100 or H200: `wgmma` where
    `a` is stored k-contiguous, `mma.sync` tiles otherwise (and everywhere on compute_90)."""
    tiles = f"rs2gpu_{kernel}_0_tiles"
    hopper, portable = ptx_entries(translation, kernel, "compute_90a")[tiles], ptx_entries(translation, kernel)[tiles]
    assert ("wgmma.mma_async" in hopper, "mma.sync" in hopper) == (warpgroups, not warpgroups)
    assert "wgmma" not in portable and "mma.sync.aligned.m16n8k16" in portable
