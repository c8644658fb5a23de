"""The covering entry points of loop nests, the tiled matrix products among them, run on the CPU (each
block's threads as real threads meeting at `__syncthreads`, through bench/emulate.py) on the grid and block
the runtime chooses, compute what rustc's build of the same source computes, bit for bit: at sizes that
are not multiples of the block or the tile, with ranges that start past zero and a `continue`."""
from __future__ import annotations

import numpy as np
import pytest

import rs2gpu
from bench import emulate
from rs2gpu import pipeline
from rs2gpu.ir.abi import EntryKind, KernelABI
from rs2gpu.runtime.base import covering_launch

from tests.support.paths import CASES

SHAPES = CASES / "shapes.rs"


@pytest.fixture(scope="module")
def translated():
    return pipeline.translate(SHAPES)


@pytest.fixture(scope="module")
def cpu():
    return rs2gpu.load(SHAPES, backend="cpu")


@pytest.fixture(scope="module")
def library(translated, tmp_path_factory):
    if emulate.unavailable():
        pytest.fail(f"a C++20 compiler is required: {emulate.unavailable()}")
    folder = tmp_path_factory.mktemp("covering")
    libraries = {}
    for name, entry in translated.emitted.abi.kernels.items():
        path = folder / entry.files["cuda"]
        path.write_text(translated.emitted.files[entry.files["cuda"]])
        libraries[name] = emulate.Library(path, folder)
    return libraries


def run_covering(library, entry: KernelABI, args: list, bounds: list[tuple[int, int]],
                 kind: EntryKind = EntryKind.COVERING) -> tuple:
    """Launch the covering entry point (or another of `kind` on a grid that covers the loop) of the kernel's
    only loop nest; `bounds` are the (start, end) of its loops, outermost first. Returns the block it ran
    with."""
    (launch,) = entry.launches
    covering = launch.entry(kind)
    counts = [end - start for start, end in bounds]
    grid, block = covering_launch(covering.grid, dict(zip("xyz", reversed(counts))))
    values = []
    for p, a in zip(entry.params, args):
        if isinstance(a, np.ndarray):  # a slice: its length only where the launch reads it
            values += [a, np.uint64(a.size)] if p.name in launch.lengths else [a]
        else:
            values.append(np.float32(a) if p.rust_type == "f32" else np.uint64(a))
    for start, count in zip((s for s, _ in bounds), counts):
        values += [np.uint64(start), np.uint64(count)]
    if launch.numbered:
        values.append(np.uint32(1))  # the first launch of the call
    library.launch(covering.symbol, grid, block, tuple(values))
    return block


# f64 products run on tiles of 128 x 64 iterations: (130, 9, 70) takes 2 x 2 blocks, k in two slices
@pytest.mark.parametrize("m,n,p", [(1, 1, 1), (15, 15, 15), (16, 16, 16), (17, 17, 17), (33, 20, 18), (3, 40, 2),
                                   (20, 0, 5), (130, 9, 70)])
def test_tiled_matrix_product_is_rustcs_bit_for_bit(translated, cpu, library, m, n, p) -> None:
    rng = np.random.default_rng([m, n, p])
    a, b = rng.standard_normal(m * n), rng.standard_normal(n * p)
    want, got = np.full(m * p, np.nan), np.full(m * p, np.nan)
    cpu.matmul(want, a, b, m, n, p)
    block = run_covering(library["matmul"], translated.emitted.abi.kernels["matmul"], [got, a, b, m, n, p],
                         [(0, m), (0, p)])
    assert block == (16, 16, 1)
    assert got.tobytes() == want.tobytes()


# f32 products run on tiles of 128 x 64 iterations: (130, 17, 129) takes 2 x 3 blocks
@pytest.mark.parametrize("m,n,p", [(17, 33, 5), (16, 1, 16), (130, 17, 129)])
def test_tiled_product_from_an_initial_value_and_a_later_first_k_is_rustcs(translated, cpu, library, m, n, p) -> None:
    rng = np.random.default_rng([m, n, p, 1])
    a, b = rng.standard_normal(m * n).astype(np.float32), rng.standard_normal(n * p).astype(np.float32)
    want, got = np.zeros(m * p, dtype=np.float32), np.zeros(m * p, dtype=np.float32)
    cpu.matmul_from_bias(want, a, b, m, n, p, 0.1)
    run_covering(library["matmul_from_bias"], translated.emitted.abi.kernels["matmul_from_bias"],
                 [got, a, b, m, n, p, 0.1], [(0, m), (0, p)])
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("first,m,n,p", [(0, 5, 3, 7), (3, 70, 17, 65)])
def test_fused_product_from_a_later_first_row_is_rustcs_bit_for_bit(translated, cpu, library, first, m, n, p) -> None:
    # each term one fused multiply-add, as Rust's `mul_add` is: no other rounding order gives these bits
    rng = np.random.default_rng([first, m, n, p])
    a, b = rng.standard_normal(m * n), rng.standard_normal(n * p)
    want, got = np.full(m * p, np.nan), np.full(m * p, np.nan)
    cpu.matmul_fused(want, a, b, first, m, n, p)
    run_covering(library["matmul_fused"], translated.emitted.abi.kernels["matmul_fused"],
                 [got, a, b, first, m, n, p], [(first, m), (0, p)])
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("first,rows,cols", [(0, 1, 1), (0, 32, 33), (3, 70, 45)])
def test_staged_transpose_is_rustcs(translated, cpu, library, first, rows, cols) -> None:
    a = np.arange(rows * cols, dtype=np.uint32)
    want, got = np.full(rows * cols, 7, dtype=np.uint32), np.full(rows * cols, 7, dtype=np.uint32)
    cpu.transpose(want, a, first, rows, cols)
    block = run_covering(library["transpose"], translated.emitted.abi.kernels["transpose"],
                         [got, a, first, rows, cols], [(first, rows), (0, cols)])
    assert block == (32, 8, 1)
    assert np.array_equal(got, want)


# The tiles entry point's larger tiles (128 x 128 iterations, 8 x 8 a thread, its rows and columns in two
# halves), which the host runs on large products: at sizes across their edges, every form of the product.
@pytest.mark.parametrize("m,n,p", [(1, 1, 1), (129, 9, 200), (64, 17, 64)])
def test_large_tiles_of_a_product_are_rustcs_bit_for_bit(translated, cpu, library, m, n, p) -> None:
    rng = np.random.default_rng([m, n, p, 2])
    a, b = rng.standard_normal(m * n), rng.standard_normal(n * p)
    for kernel, extra, bounds in (("matmul", [], [(0, m), (0, p)]), ("matmul_fused", [1], [(1, m), (0, p)])):
        want, got = np.full(m * p, np.nan), np.full(m * p, np.nan)
        getattr(cpu, kernel)(want, a, b, *extra, m, n, p)
        block = run_covering(library[kernel], translated.emitted.abi.kernels[kernel], [got, a, b, *extra, m, n, p],
                             bounds, EntryKind.TILES)
        assert block == (16, 16, 1)
        assert got.tobytes() == want.tobytes(), kernel
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    want, got = np.zeros(m * p, dtype=np.float32), np.zeros(m * p, dtype=np.float32)
    cpu.matmul_from_bias(want, a32, b32, m, n, p, 0.1)
    run_covering(library["matmul_from_bias"], translated.emitted.abi.kernels["matmul_from_bias"],
                 [got, a32, b32, m, n, p, 0.1], [(0, m), (0, p)], EntryKind.TILES)
    assert got.tobytes() == want.tobytes()


def test_covering_2d_nest_from_a_later_first_row(translated, cpu, library) -> None:
    rows, cols = 9, 70  # 70 is no multiple of a warp
    want, got = np.full(rows * cols, -1.0), np.full(rows * cols, -1.0)
    cpu.plane(want, 2, rows, cols)
    run_covering(library["plane"], translated.emitted.abi.kernels["plane"], [got, 2, rows, cols],
                 [(2, rows), (0, cols)])
    assert got.tobytes() == want.tobytes()


def test_covering_3d_nest_with_continue(translated, cpu, library) -> None:
    nk, nj, ni = 3, 5, 37
    want, got = np.full(nk * nj * ni, 7, dtype=np.uint32), np.full(nk * nj * ni, 7, dtype=np.uint32)
    cpu.volume(want, nk, nj, ni)
    run_covering(library["volume"], translated.emitted.abi.kernels["volume"], [got, nk, nj, ni],
                 [(0, nk), (0, nj), (0, ni)])
    assert got.tobytes() == want.tobytes()
