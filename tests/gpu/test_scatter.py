"""Scatter reductions on the GPU against rustc's build of the same kernels (the cpu backend).

Each kernel adds (or multiplies, ors, takes the minimum, ...) values into a few shared elements, so many
threads update one element at once. Integer results, and float minima and maxima, do not depend on the
order of the updates, so they must equal rustc's bit for bit (a NaN operand of `min`/`max` gives the
other one, in Rust and on the GPU). Float sums and products do: an element that combines k terms
(its start and k - 1 updates) in another order differs by at most (k - 1)·ε·Σ|terms| for a sum, and by
at most (k - 1)·ε·|product| for a product of factors near 1 (each order is within (k - 1)·ε/2 of the
exact value, to first order). An out-of-bounds index raises Rust's panic, and host data is untouched.
"""
from __future__ import annotations

import numpy as np
import pytest

import rs2gpu

pytestmark = pytest.mark.gpu

FLOATS = ("f32", "f64")
INTS = ("i32", "u32", "i64", "u64", "isize", "usize")
# Rust's update of `t` by `v` for each combining operation, and the element types it applies to.
UPDATES = {
    "add": ("{t} += {v};", FLOATS + INTS),
    "sub": ("{t} -= {v};", FLOATS + INTS),
    "mul": ("{t} *= {v};", FLOATS + INTS),
    "and": ("{t} &= {v};", INTS),
    "or": ("{t} |= {v};", INTS),
    "xor": ("{t} ^= {v};", INTS),
    "min": ("{t} = {t}.min({v});", FLOATS + INTS),
    "max": ("{t} = {v}.max({t});", FLOATS + INTS),
}
CASES = [(op, ty) for op, (_, types) in UPDATES.items() for ty in types]
DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "u32": np.uint32, "i64": np.int64,
          "u64": np.uint64, "isize": np.int64, "usize": np.uint64}


def kernel_source() -> str:
    lines = ["use rs2gpu::kernel;", ""]
    for op, ty in CASES:
        update = UPDATES[op][0].format(t="out[bins[i]]", v="v[i]")
        lines += ["#[kernel]", f"pub fn {op}_{ty}(out: &mut [{ty}], bins: &[usize], v: &[{ty}]) {{",
                  "    for i in 0..v.len() {", f"        {update}", "    }", "}", ""]
    lines += ["/// Affine indices that overlap: the host checks them before the launch.",
              "#[kernel]", "pub fn smear(out: &mut [f64], v: &[f64]) {", "    for i in 0..v.len() {",
              "        out[i] += v[i];", "        out[i + 1] += v[i];", "    }", "}", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    path = tmp_path_factory.mktemp("scatter") / "scatter.rs"
    path.write_text(kernel_source())
    return path, rs2gpu.load(path, backend="cpu"), rs2gpu.load(path, backend="cuda")


def values(ty: str, op: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Inputs for one operation: floats of both signs away from zero (factors near 1 for products, some
    NaNs for min and max); integers over the whole range (bitwise operations, min, max) or small ones
    (sums and products, which wrap either way)."""
    dtype = np.dtype(DTYPES[ty])
    if dtype.kind == "f":
        if op == "mul":
            return rng.uniform(0.999, 1.001, n).astype(dtype)
        out = (rng.uniform(0.25, 2.0, n) * rng.choice([-1.0, 1.0], n)).astype(dtype)
        if op in ("min", "max"):
            out[rng.integers(0, n, n // 100 + 1)] = np.nan
        return out
    info = np.iinfo(dtype)
    if op in ("add", "sub", "mul"):
        return rng.integers(-1000 if dtype.kind == "i" else 0, 1000, n).astype(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def bins_for(n: int, count: int, rng: np.random.Generator, contiguous: bool) -> np.ndarray:
    """Bins in contiguous runs (a warp's lanes mostly share one) or at random (they mostly do not)."""
    if contiguous:
        cuts = np.sort(rng.integers(0, n, count - 1))
        return np.searchsorted(cuts, np.arange(n), side="right").astype(np.uint64)
    return rng.integers(0, count, n).astype(np.uint64)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype.kind == "f":
        both_nan = np.isnan(a) & np.isnan(b)
        return bool(np.all(both_nan | (a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}"))))
    return a.tobytes() == b.tobytes()


def reorder_bound(op: str, start: np.ndarray, bins: np.ndarray, v: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Per element: how far another order of its k terms (start and updates) can move a sum or a product."""
    k = np.bincount(bins.astype(np.int64), minlength=start.size) + 1
    eps = float(np.finfo(start.dtype).eps)
    if op == "mul":
        return (k - 1) * eps * np.abs(want.astype(np.float64)) * (1 + k * eps)
    magnitudes = np.abs(start.astype(np.float64)) + np.bincount(bins.astype(np.int64),
                                                                weights=np.abs(v.astype(np.float64)),
                                                                minlength=start.size)
    return (k - 1) * eps * magnitudes * (1 + k * eps)


@pytest.mark.parametrize("contiguous", [True, False], ids=["runs", "random"])
@pytest.mark.parametrize("count", [1, 7, 1000])
@pytest.mark.parametrize("op,ty", CASES, ids=[f"{op}_{ty}" for op, ty in CASES])
def test_scatter_agrees_with_rustc(kernels, op: str, ty: str, count: int, contiguous: bool) -> None:
    _, cpu, cuda = kernels
    rng = np.random.default_rng([count, len(op), sum(map(ord, ty))])
    # compare-and-swap loops serialise the updates of an element: fewer of them
    n = 100_003 if op == "mul" or (op in ("min", "max") and ty in FLOATS) else 1_000_003
    bins = bins_for(n, count, rng, contiguous)
    v = values(ty, op, n, rng)
    start = values(ty, op, count, rng)
    got, want = start.copy(), start.copy()
    getattr(cpu, f"{op}_{ty}")(want, bins, v)
    getattr(cuda, f"{op}_{ty}")(got, bins, v)
    if ty in FLOATS and op in ("add", "sub", "mul"):
        bound = reorder_bound(op, start, bins, v, want)
        difference = np.abs(got.astype(np.float64) - want.astype(np.float64))
        assert np.all(difference <= bound), f"{op}_{ty}: beyond the reordering bound"
    else:
        assert same_bits(got, want), f"{op}_{ty} differs from rustc"


def test_device_checked_index_out_of_bounds_raises_rusts_panic_and_leaves_host_data(kernels) -> None:
    _, cpu, cuda = kernels
    rng = np.random.default_rng(3)
    n, count = 100_000, 5
    bins = bins_for(n, count, rng, contiguous=False)
    bins[777] = count + 3  # the only index past the end, so any thread that finds it reports the same panic
    v = values("f64", "add", n, rng)
    out = values("f64", "add", count, rng)
    before = out.tobytes()
    with pytest.raises(rs2gpu.KernelPanic) as rust:
        cpu.add_f64(out.copy(), bins, v)
    with pytest.raises(rs2gpu.KernelPanic) as gpu:
        cuda.add_f64(out, bins, v)
    assert gpu.value.message == rust.value.message == f"index out of bounds: the len is {count} but the index is {count + 3}"
    assert gpu.value.location == rust.value.location
    assert out.tobytes() == before


def test_affine_index_out_of_bounds_is_caught_on_the_host_before_the_launch(kernels) -> None:
    _, cpu, cuda = kernels
    v = np.ones(1000)
    out = np.zeros(1000)  # out[i + 1] for the last i is one past the end
    with pytest.raises(rs2gpu.KernelPanic) as rust:
        cpu.smear(out.copy(), v)
    with pytest.raises(rs2gpu.KernelPanic) as gpu:
        cuda.smear(out, v)
    assert (gpu.value.message, gpu.value.location) == (rust.value.message, rust.value.location)
    assert not out.any()


def test_affine_overlapping_updates_agree_with_rustc(kernels) -> None:
    _, cpu, cuda = kernels
    rng = np.random.default_rng(5)
    v = rng.uniform(-1.0, 1.0, 1_000_000)
    got, want = np.zeros(v.size + 1), np.zeros(v.size + 1)
    cpu.smear(want, v)
    cuda.smear(got, v)
    # out[j] = v[j - 1] + v[j]: two terms and the start, 0
    bound = 2 * np.finfo(np.float64).eps * (np.abs(np.r_[v, 0.0]) + np.abs(np.r_[0.0, v]))
    assert np.all(np.abs(got - want) <= bound)


def test_scatter_on_device_arrays_copies_nothing(kernels) -> None:
    import cupy  # the cuda backend's own requirement
    _, cpu, cuda = kernels
    rng = np.random.default_rng(9)
    bins = bins_for(100_000, 10, rng, contiguous=True)
    v = values("i64", "add", 100_000, rng)
    want = np.zeros(10, dtype=np.int64)
    cpu.add_i64(want, bins, v)
    got = cupy.zeros(10, dtype=cupy.int64)
    cuda.add_i64(got, cupy.asarray(bins), cupy.asarray(v))
    assert cuda.add_i64.last_transfers == []
    assert np.array_equal(cupy.asnumpy(got), want)


@pytest.mark.parametrize("count,private", [(10, True), (2048, True), (2049, False)])
@pytest.mark.parametrize("ty", ["i64", "f64"])
def test_histograms_up_to_the_blocks_copies_run_privately_and_agree_with_rustc(kernels, ty: str, count: int,
                                                                               private: bool) -> None:
    """Blocks keep a 16 KiB copy of the target (2048 elements of 8 bytes) when it fits; beyond, the updates
    are atomics on the slice itself. Either way the result is rustc's (within the reordering bound for
    floats)."""
    _, cpu, cuda = kernels
    rng = np.random.default_rng([count, len(ty)])
    n = 4_000_003
    bins = bins_for(n, count, rng, contiguous=True)
    v = values(ty, "add", n, rng)
    start = values(ty, "add", count, rng)
    got, want = start.copy(), start.copy()
    getattr(cpu, f"add_{ty}")(want, bins, v)
    kernel = getattr(cuda, f"add_{ty}")
    kernel(got, bins, v)
    assert kernel.last_variants == [f"rs2gpu_add_{ty}_0" + ("_private" if private else "_covering")]
    if ty in FLOATS:
        assert np.all(np.abs(got - want) <= reorder_bound("add", start, bins, v, want))
    else:
        assert same_bits(got, want)
