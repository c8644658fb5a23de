"""The user-style suite's cases: for each kernel of `bench/user-suite`, its inputs, the value numpy computes
for it (the independent reference), how far a correct result may lie from the cpu backend's (rustc's),
its compulsory work, and the library calls a user would make instead.

A case's arrays live in one dict by the kernel's parameter names (`harness.generated_arguments` binds
them), plus `alt_*` arrays that the alternatives write into. Bounds (`Case.bound`) hold for the distance
between two correct results: each lies within half of it from the exact value, so one bound serves the
GPU against rustc, rustc against numpy's reference, and every alternative against rs2gpu.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

EPS32 = float(np.finfo(np.float32).eps)
EPS64 = float(np.finfo(np.float64).eps)
# an output element no computation writes: a quiet NaN with a payload, so an unwritten element shows
POISON32 = np.uint32(0x7FC0_BAD0)


@dataclass(frozen=True)
class Size:
    label: str
    dims: dict          # the kernel's integer and scalar parameters by name, and the shape's other extents
    elements: int       # the largest array's elements, the size the table is ordered by


@dataclass(frozen=True)
class Alternative:
    """A library call a user would make instead: `make(lib, arrays, dims)` returns the call, which returns
    its result (where it writes into a preallocated `alt_*` array, that array)."""

    name: str           # as the table names it: "cupy", "torch", "numpy", ...
    library: str        # what must import for it to run: "cupy", "cupyx", "torch", "triton" (on torch's
    #                     tensors and stream), "numpy"
    make: Callable
    note: str = ""


@dataclass(frozen=True)
class Case:
    name: str
    kernel: str                         # the `#[kernel]` of bench/user-suite
    result: str                         # the output parameter the checks compare
    sizes: tuple[Size, ...]             # the GPU run's
    small: Size                         # --small's
    make: Callable                      # (rng, dims) -> host arrays by parameter name
    reference: Callable                 # (host arrays, dims) -> numpy's result, computed independently
    work: Callable                      # dims -> (compulsory bytes moved, flops)
    alternatives: tuple[Alternative, ...]
    bound: Callable | None = None       # (host arrays, dims) -> |Δ| allowed per element; None: bitwise
    bound_reason: str = "bitwise: every operation is rounded as rustc rounds it"
    alt_bound: Callable | None = None   # (host arrays, dims) -> |Δ| allowed to an alternative; None: `bound`
    cpu_blocks: Callable | None = None  # (host arrays, dims) -> [(a sub-problem's arrays, its dims, the slice
    #                                     of the result it computes)]; None: the whole problem
    before_call: str | None = None      # an output the timed call zeroes first (a histogram's counts)
    flops_rate: bool = False            # report TFLOP/s rather than GB/s
    # "exact_gpu": the device must match rustc bitwise, the bound serving numpy and the libraries only;
    # "verified_idx": rs2gpu gets the index list `idx` as an rs2gpu.IndexList, verified once
    tags: tuple = ()


def poison(n: int) -> np.ndarray:
    return np.full(int(n), POISON32, dtype=np.uint32).view(np.float32)


def uniform(rng, n: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    """f32 values in [lo, hi), drawn in f32 (the GPU run's largest arrays hold 1e8 of them)."""
    values = rng.random(int(n), dtype=np.float32)
    values *= np.float32(hi - lo)
    values += np.float32(lo)
    return values


# ---------------------------------------------------------------------------------------------------
# Products

def _product_data(dtype):
    def make(rng, d):
        m, k, n = d["m"], d["k"], d["n"]
        a = rng.uniform(-1.0, 1.0, m * k).astype(dtype)
        b = rng.uniform(-1.0, 1.0, k * n).astype(dtype)
        return {"a": a, "b": b, "c": np.zeros(m * n, dtype), "alt_c": np.zeros(m * n, dtype)}
    return make


def _product_reference(v, d):
    a = v["a"].astype(np.float64).reshape(d["m"], d["k"])
    return (a @ v["b"].astype(np.float64).reshape(d["k"], d["n"])).ravel()


def _product_bound(eps):
    def bound(v, d):
        # Higham, Accuracy and Stability, §3.1: a sum of k products in any order, each rounded, lies within
        # γ_k Σ|a||b| of the exact value, γ_k = k u / (1 - k u) ≤ (k + 1) eps / 2; twice that between two.
        a = np.abs(v["a"].astype(np.float64)).reshape(d["m"], d["k"])
        return (d["k"] + 1) * eps * (a @ np.abs(v["b"].astype(np.float64)).reshape(d["k"], d["n"])).ravel()
    return bound


def _product_blocks(v, d):
    """The first and the last 8 rows of `c` (the whole product is too slow for one CPU core at the GPU's
    sizes): `c`'s rows depend only on the same rows of `a`."""
    m, k, n = d["m"], d["k"], d["n"]
    rows = min(8, m)
    blocks = []
    for first in dict.fromkeys((0, m - rows)):
        sub = {"a": v["a"][first * k:(first + rows) * k], "b": v["b"], "c": np.zeros(rows * n, v["c"].dtype)}
        blocks.append((sub, {**d, "m": rows}, slice(first * n, (first + rows) * n)))
    return blocks


def _matmul_xp(lib, v, d):
    a, b = v["a"].reshape(d["m"], d["k"]), v["b"].reshape(d["k"], d["n"])
    out = v["alt_c"].reshape(d["m"], d["n"])
    return lambda: lib.matmul(a, b, out=out)


def _matmul_torch(torch, v, d):
    a, b = v["a"].reshape(d["m"], d["k"]), v["b"].reshape(d["k"], d["n"])
    out = v["alt_c"].reshape(d["m"], d["n"])
    return lambda: torch.mm(a, b, out=out)


PRODUCT_ALTERNATIVES = (
    Alternative("cupy", "cupy", _matmul_xp, "cupy.matmul (cuBLAS), CUPY_TF32=0"),
    Alternative("torch", "torch", _matmul_torch, "torch.mm (cuBLAS), allow_tf32=False"),
    Alternative("numpy", "numpy", _matmul_xp, "numpy.matmul"),
)


def _product_size(label, m, k, n):
    return Size(label, {"m": m, "k": k, "n": n}, max(m * k, k * n, m * n))


def product_cases() -> list[Case]:
    cases = []
    for kernel, dtype, eps in (("matmul_f32", np.float32, EPS32), ("matmul_fma_f32", np.float32, EPS32),
                               ("matmul_f64", np.float64, EPS64), ("matmul_fma_f64", np.float64, EPS64)):
        fused = "fma" in kernel
        item = np.dtype(dtype).itemsize
        cases.append(Case(
            name=kernel, kernel=kernel, result="c",
            sizes=(_product_size("1024²", 1024, 1024, 1024), _product_size("4096²", 4096, 4096, 4096),
                   _product_size("skinny 2^18×128×128", 1 << 18, 128, 128)),
            small=_product_size("small", 48, 40, 24),
            make=_product_data(dtype), reference=_product_reference,
            work=lambda d, item=item: (item * (d["m"] * d["k"] + d["k"] * d["n"] + d["m"] * d["n"]),
                                       2 * d["m"] * d["k"] * d["n"]),
            alternatives=PRODUCT_ALTERNATIVES,
            # `mul_add` chains are no reduction (DESIGN: only `+=` style sums may be reassociated), so the
            # GPU must match rustc bitwise; the bound serves rustc against numpy and the libraries
            bound=_product_bound(eps),
            bound_reason=("bitwise against rustc (a `mul_add` chain keeps its order); against numpy and the "
                          "libraries (k+1)·eps·Σ|a||b|" if fused else
                          "(k+1)·eps·Σ|a||b| per element: the k-sum may be reassociated"),
            cpu_blocks=_product_blocks, flops_rate=True, tags=("exact_gpu",) if fused else ()))
    return cases


# ---------------------------------------------------------------------------------------------------
# Matrix-vector product, transpose, row and column sums

def _rows_cols(label, rows, cols):
    return Size(label, {"rows": rows, "cols": cols}, rows * cols)


MATRIX_SIZES = (_rows_cols("512×256", 512, 256), _rows_cols("4096²", 4096, 4096),
                _rows_cols("8192×12288", 8192, 12288))
SMALL_MATRIX = _rows_cols("small", 37, 29)


def _sum_bound(terms):
    """|Δ| ≤ (n + 1)·eps·Σ|terms| for an f32 sum of n terms in any order (as for the products)."""
    return (terms.shape[-1] + 1) * EPS32 * np.abs(terms.astype(np.float64)).sum(axis=-1)


def _matvec_data(rng, d):
    r, c = d["rows"], d["cols"]
    return {"a": uniform(rng, r * c), "x": uniform(rng, c), "y": poison(r), "alt_y": poison(r)}


def _matvec_alt(lib, v, d):
    a, x, out = v["a"].reshape(d["rows"], d["cols"]), v["x"], v["alt_y"]
    return lambda: lib.matmul(a, x, out=out)


def _matvec_torch(torch, v, d):
    a, x, out = v["a"].reshape(d["rows"], d["cols"]), v["x"], v["alt_y"]
    return lambda: torch.mv(a, x, out=out)


def _transpose_alt(lib, v, d):
    a, out = v["a"].reshape(d["rows"], d["cols"]), v["alt_out"].reshape(d["cols"], d["rows"])
    return lambda: (lib.copyto(out, a.T), out)[1]


def _transpose_torch(torch, v, d):
    a, out = v["a"].reshape(d["rows"], d["cols"]), v["alt_out"].reshape(d["cols"], d["rows"])
    return lambda: out.copy_(a.t())


def _sums_alt(axis: int):
    def xp_call(lib, v, d):
        a, out = v["a"].reshape(d["rows"], d["cols"]), v["alt_sums"]
        return lambda: lib.sum(a, axis=axis, out=out)

    def torch_call(torch, v, d):
        a, out = v["a"].reshape(d["rows"], d["cols"]), v["alt_sums"]
        return lambda: torch.sum(a, dim=axis, out=out)
    return (Alternative("cupy", "cupy", xp_call, f"cupy.sum(axis={axis})"),
            Alternative("torch", "torch", torch_call, f"torch.sum(dim={axis})"),
            Alternative("numpy", "numpy", xp_call, f"numpy.sum(axis={axis})"))


def matrix_cases() -> list[Case]:
    f4 = 4
    return [
        Case("matvec_f32", "matvec_f32", "y", MATRIX_SIZES, SMALL_MATRIX, _matvec_data,
             reference=lambda v, d: v["a"].astype(np.float64).reshape(d["rows"], d["cols"]) @ v["x"].astype(np.float64),
             work=lambda d: (f4 * (d["rows"] * d["cols"] + d["rows"] + d["cols"]), 2 * d["rows"] * d["cols"]),
             alternatives=(Alternative("cupy", "cupy", _matvec_alt, "cupy.matmul (cuBLAS gemv)"),
                           Alternative("torch", "torch", _matvec_torch, "torch.mv (cuBLAS gemv)"),
                           Alternative("numpy", "numpy", _matvec_alt, "numpy.matmul")),
             bound=lambda v, d: _sum_bound(v["a"].reshape(d["rows"], d["cols"]) * v["x"]),
             bound_reason="(cols+1)·eps·Σ|a||x| per row: the row's sum may be reassociated"),
        Case("transpose_f32", "transpose_f32", "out", MATRIX_SIZES, SMALL_MATRIX,
             lambda rng, d: {"a": uniform(rng, d["rows"] * d["cols"]), "out": poison(d["rows"] * d["cols"]),
                             "alt_out": poison(d["rows"] * d["cols"])},
             reference=lambda v, d: v["a"].reshape(d["rows"], d["cols"]).T.ravel(),
             work=lambda d: (2 * f4 * d["rows"] * d["cols"], 0),
             alternatives=(Alternative("cupy", "cupy", _transpose_alt, "cupy.copyto(out, a.T)"),
                           Alternative("torch", "torch", _transpose_torch, "out.copy_(a.t())"),
                           Alternative("numpy", "numpy", _transpose_alt, "numpy.copyto(out, a.T)"))),
        Case("row_sums_f32", "row_sums_f32", "sums", MATRIX_SIZES, SMALL_MATRIX,
             lambda rng, d: {"a": uniform(rng, d["rows"] * d["cols"]), "sums": poison(d["rows"]),
                             "alt_sums": poison(d["rows"])},
             reference=lambda v, d: v["a"].astype(np.float64).reshape(d["rows"], d["cols"]).sum(axis=1),
             work=lambda d: (f4 * (d["rows"] * d["cols"] + d["rows"]), d["rows"] * d["cols"]),
             alternatives=_sums_alt(1),
             bound=lambda v, d: _sum_bound(v["a"].reshape(d["rows"], d["cols"])),
             bound_reason="(cols+1)·eps·Σ|a| per row: the row's sum may be reassociated"),
        Case("col_sums_f32", "col_sums_f32", "sums", MATRIX_SIZES, SMALL_MATRIX,
             lambda rng, d: {"a": uniform(rng, d["rows"] * d["cols"]), "sums": poison(d["cols"]),
                             "alt_sums": poison(d["cols"])},
             reference=lambda v, d: v["a"].astype(np.float64).reshape(d["rows"], d["cols"]).sum(axis=0),
             work=lambda d: (f4 * (d["rows"] * d["cols"] + d["cols"]), d["rows"] * d["cols"]),
             alternatives=_sums_alt(0),
             bound=lambda v, d: _sum_bound(v["a"].reshape(d["rows"], d["cols"]).T),
             bound_reason="(rows+1)·eps·Σ|a| per column: the column's sum may be reassociated"),
    ]


# ---------------------------------------------------------------------------------------------------
# Softmax, layer norm, RMS norm: rows of a model's activations

NORM_SIZES = (_rows_cols("128×1024", 128, 1024), _rows_cols("4096²", 4096, 4096),
              _rows_cols("32768×3072", 32768, 3072))
SMALL_NORM = _rows_cols("small", 13, 37)
EPS_NORM = 1e-5


def _norm_data(rng, d):
    r, c = d["rows"], d["cols"]
    return {"x": uniform(rng, r * c, -4.0, 4.0), "gamma": uniform(rng, c, 0.5, 1.5), "beta": uniform(rng, c),
            "out": poison(r * c), "alt_out": poison(r * c)}


def _rows64(v, d, name="x"):
    return v[name].astype(np.float64).reshape(d["rows"], d["cols"])


def _softmax_reference(v, d):
    x = _rows64(v, d)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).ravel()


def _softmax_bound(v, d):
    # per side: the exp within 2 ulp (CUDA's expf; glibc's within 1) of its rounded argument x - max, whose
    # rounding moves it by up to (max - min)·u relatively; the sum (cols+1)·u; the division u
    x = _rows64(v, d)
    spread = (x.max(axis=1) - x.min(axis=1))[:, None]
    return ((d["cols"] + 12 + spread) * EPS32 * _softmax_reference(v, d).reshape(x.shape)).ravel()


def _layer_norm_parts(v, d):
    x = _rows64(v, d)
    mean = x.mean(axis=1, keepdims=True)
    inv = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + EPS_NORM)
    return x, mean, inv


def _layer_norm_bound(v, d):
    # per side, to first order: the mean is off by (cols+1)·u·mean|x|, which moves every x - mean by as much;
    # the variance's sum adds (cols+1)·u relatively, half of which reaches 1/sqrt; the output's three roundings
    # 3·u. Both sides: twice that, written with eps = 2u and rounded up.
    x, mean, inv = _layer_norm_parts(v, d)
    gamma = v["gamma"].astype(np.float64)
    scale = np.abs(gamma) * inv * (np.abs(x - mean) + np.abs(x).mean(axis=1, keepdims=True))
    return ((d["cols"] + 8) * EPS32 * (scale + np.abs(v["beta"].astype(np.float64)))).ravel()


def _rms_norm_reference(v, d):
    x = _rows64(v, d)
    inv = 1.0 / np.sqrt((x * x).mean(axis=1, keepdims=True) + EPS_NORM)
    return (x * inv * v["gamma"].astype(np.float64)).ravel()


def _softmax_torch(torch, v, d):
    x = v["x"].reshape(d["rows"], d["cols"])
    return lambda: torch.softmax(x, dim=1)


def _softmax_cupyx(cupyx, v, d):
    from cupyx.scipy.special import softmax

    x = v["x"].reshape(d["rows"], d["cols"])
    return lambda: softmax(x, axis=1)


def _softmax_xp(lib, v, d):
    """The three passes as array expressions, the way a numpy or cupy user writes them."""
    x = v["x"].reshape(d["rows"], d["cols"])

    def call():
        e = lib.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return call


def _layer_norm_torch(torch, v, d):
    x = v["x"].reshape(d["rows"], d["cols"])
    return lambda: torch.nn.functional.layer_norm(x, (d["cols"],), v["gamma"], v["beta"], EPS_NORM)


def _layer_norm_xp(lib, v, d):
    x, gamma, beta = v["x"].reshape(d["rows"], d["cols"]), v["gamma"], v["beta"]

    def call():
        mean = x.mean(axis=1, keepdims=True)
        centred = x - mean
        return centred / lib.sqrt((centred * centred).mean(axis=1, keepdims=True) + EPS_NORM) * gamma + beta
    return call


def _rms_norm_torch(torch, v, d):
    x = v["x"].reshape(d["rows"], d["cols"])
    return lambda: torch.nn.functional.rms_norm(x, (d["cols"],), v["gamma"], EPS_NORM)


def _rms_norm_xp(lib, v, d):
    x, gamma = v["x"].reshape(d["rows"], d["cols"]), v["gamma"]
    return lambda: x / lib.sqrt((x * x).mean(axis=1, keepdims=True) + EPS_NORM) * gamma


def _norm_work(inputs: int):
    return lambda d: (4 * (2 * d["rows"] * d["cols"] + inputs * d["cols"]), 0)


def norm_cases() -> list[Case]:
    return [
        Case("softmax_f32", "softmax_f32", "out", NORM_SIZES, SMALL_NORM, _norm_data,
             reference=_softmax_reference, work=_norm_work(0),
             alternatives=(Alternative("torch", "torch", _softmax_torch, "torch.softmax(x, dim=1)"),
                           Alternative("cupy", "cupyx", _softmax_cupyx, "cupyx.scipy.special.softmax"),
                           Alternative("cupy expr", "cupy", _softmax_xp, "exp(x - max) / sum, cupy expressions"),
                           Alternative("numpy", "numpy", _softmax_xp, "exp(x - max) / sum, numpy")),
             bound=_softmax_bound,
             bound_reason="(cols+12+max-min)·eps·y: exp within 2 ulp, the row's sum may be reassociated"),
        Case("layer_norm_f32", "layer_norm_f32", "out", NORM_SIZES, SMALL_NORM,
             lambda rng, d: {**_norm_data(rng, d), "eps": EPS_NORM},
             reference=lambda v, d: ((lambda x, mean, inv: (x - mean) * inv * v["gamma"].astype(np.float64)
                                      + v["beta"].astype(np.float64))(*_layer_norm_parts(v, d))).ravel(),
             work=_norm_work(2),
             alternatives=(Alternative("torch", "torch", _layer_norm_torch, "torch.nn.functional.layer_norm"),
                           Alternative("cupy expr", "cupy", _layer_norm_xp,
                                       "mean, variance, scale as cupy expressions"),
                           Alternative("numpy", "numpy", _layer_norm_xp, "numpy expressions")),
             bound=_layer_norm_bound,
             bound_reason="(cols+8)·eps·(|γ|·inv·(|x-mean|+mean|x|)+|β|): the row's sums may be reassociated"),
        Case("rms_norm_f32", "rms_norm_f32", "out", NORM_SIZES, SMALL_NORM,
             lambda rng, d: {**_norm_data(rng, d), "eps": EPS_NORM},
             reference=_rms_norm_reference, work=_norm_work(1),
             alternatives=(Alternative("torch", "torch", _rms_norm_torch, "torch.nn.functional.rms_norm"),
                           Alternative("cupy expr", "cupy", _rms_norm_xp, "x / sqrt(mean(x²) + eps) * γ, cupy"),
                           Alternative("numpy", "numpy", _rms_norm_xp, "numpy expressions")),
             bound=lambda v, d: (d["cols"] + 10) * EPS32 * np.abs(_rms_norm_reference(v, d)),
             bound_reason="(cols+10)·eps·|y|: the row's sum of squares may be reassociated"),
    ]


# ---------------------------------------------------------------------------------------------------
# Stencils

W_STENCIL = 0.1


def _grid2(label, rows, cols):
    return Size(label, {"rows": rows, "cols": cols, "w": W_STENCIL}, rows * cols)


def _grid3(label, nz, ny, nx):
    return Size(label, {"nz": nz, "ny": ny, "nx": nx, "w": W_STENCIL}, nz * ny * nx)


def _stencil2d_xp(lib, v, d):
    u, out = v["u"].reshape(d["rows"], d["cols"]), v["alt_out"].reshape(d["rows"], d["cols"])
    return lambda: _stencil2d_into(out, u, d["w"])


def _stencil2d_into(out, u, w):
    """The interior of `out`, in the Rust kernel's order of operations (so numpy's is bitwise rustc's)."""
    c = u[1:-1, 1:-1]
    out[1:-1, 1:-1] = c + w * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * c)
    return out


def _stencil3d_into(out, u, w):
    c = u[1:-1, 1:-1, 1:-1]
    out[1:-1, 1:-1, 1:-1] = c + w * (u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1] + u[1:-1, :-2, 1:-1]
                                     + u[1:-1, 2:, 1:-1] + u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:] - 6.0 * c)
    return out


def _stencil3d_xp(lib, v, d):
    shape = (d["nz"], d["ny"], d["nx"])
    u, out = v["u"].reshape(shape), v["alt_out"].reshape(shape)
    return lambda: _stencil3d_into(out, u, d["w"])


def _stencil_triton(kernel: str):
    """A Triton kernel of bench/user_triton.py (no library routine computes a stencil in one pass)."""
    def make(triton, v, d):
        from bench import user_triton

        return getattr(user_triton, f"{kernel}_call")(v, d)
    return make


def _grid_data(rng, d):
    n = d["rows"] * d["cols"] if "rows" in d else d["nz"] * d["ny"] * d["nx"]
    return {"u": uniform(rng, n), "out": poison(n), "alt_out": poison(n)}


def stencil_cases() -> list[Case]:
    return [
        Case("stencil_2d_f32", "stencil_2d_f32", "out",
             (_grid2("320²", 320, 320), _grid2("4096²", 4096, 4096), _grid2("10000²", 10000, 10000)),
             _grid2("small", 23, 31), _grid_data,
             reference=lambda v, d: _stencil2d_into(v["out"].copy().reshape(d["rows"], d["cols"]),
                                                    v["u"].reshape(d["rows"], d["cols"]), np.float32(d["w"])).ravel(),
             work=lambda d: (8 * d["rows"] * d["cols"], 7 * d["rows"] * d["cols"]),
             alternatives=(Alternative("cupy", "cupy", _stencil2d_xp, "slice expressions, cupy"),
                           Alternative("torch", "torch", _stencil2d_xp, "slice expressions, torch"),
                           Alternative("triton", "triton", _stencil_triton("stencil_2d"),
                                       "a Triton kernel, one program per 512 points of a row"),
                           Alternative("numpy", "numpy", _stencil2d_xp, "slice expressions, numpy"))),
        Case("stencil_3d_f32", "stencil_3d_f32", "out",
             (_grid3("48³", 48, 48, 48), _grid3("256³", 256, 256, 256), _grid3("464³", 464, 464, 464)),
             _grid3("small", 9, 11, 13), _grid_data,
             reference=lambda v, d: _stencil3d_into(v["out"].copy().reshape(d["nz"], d["ny"], d["nx"]),
                                                    v["u"].reshape(d["nz"], d["ny"], d["nx"]),
                                                    np.float32(d["w"])).ravel(),
             work=lambda d: (8 * d["nz"] * d["ny"] * d["nx"], 9 * d["nz"] * d["ny"] * d["nx"]),
             alternatives=(Alternative("cupy", "cupy", _stencil3d_xp, "slice expressions, cupy"),
                           Alternative("torch", "torch", _stencil3d_xp, "slice expressions, torch"),
                           Alternative("triton", "triton", _stencil_triton("stencil_3d"),
                                       "a Triton kernel, one program per 512 points of a row"),
                           Alternative("numpy", "numpy", _stencil3d_xp, "slice expressions, numpy"))),
    ]


# ---------------------------------------------------------------------------------------------------
# Histogram, gather, scatter

LO, HI = -1.0, 1.0


def _bins_of(lib, x, bins):
    """The kernel's bin of each value, in f32 as the kernel computes it; `as usize` saturates at 0."""
    scale = np.float32(bins) / (np.float32(HI) - np.float32(LO))
    raw = (x - np.float32(LO)) * scale
    return lib.minimum(lib.maximum(raw, 0).astype(lib.int64), bins - 1)


def _histogram_data(rng, d):
    # a few values outside [lo, hi), which the kernel counts in the first and the last bin
    return {"x": uniform(rng, d["n"], LO - 0.01, HI + 0.01), "counts": np.zeros(d["bins"], np.uint32),
            "lo": LO, "hi": HI}


def _histogram_xp(lib, v, d):
    x, bins = v["x"], d["bins"]
    return lambda: lib.bincount(_bins_of(lib, x, bins), minlength=bins).astype(lib.uint32)


def _histogram_torch(torch, v, d):
    # histc leaves out the values outside [lo, hi]: the check allows for them (see `_histogram_alt_bound`)
    return lambda: torch.histc(v["x"], bins=d["bins"], min=LO, max=HI)


def _histogram_cupy(cupy, v, d):
    return lambda: cupy.histogram(v["x"], bins=d["bins"], range=(LO, HI))[0]


def _histogram_alt_bound(v, d):
    """The libraries' own histograms leave out or place differently the values outside [lo, hi) and the
    values within rounding of a bin's edge: as many counts as there are such values, plus 2."""
    x = v["x"]
    outside = int(((x < LO) | (x >= HI)).sum())
    return outside + 2 + 1e-5 * d["n"]


def _size_n(label, n, **more):
    return Size(label, {"n": n, **more}, n)


def _index_data(rng, d):
    n = d["n"]
    return {"src": uniform(rng, n), "idx": rng.permutation(n).astype(np.uint32), "out": poison(n),
            "alt_out": poison(n)}


def _gather_xp(lib, v, d):
    return lambda: lib.take(v["src"], v["idx"], out=v["alt_out"])


def _gather_torch(torch, v, d):
    return lambda: torch.index_select(v["src"], 0, v["idx"], out=v["alt_out"])


def _scatter_xp(lib, v, d):
    out, idx, src = v["alt_out"], v["idx"], v["src"]

    def call():
        out[idx] = src
        return out
    return call


def _scatter_torch(torch, v, d):
    idx = v["idx"].long()   # index_copy_ takes int64 indices: converted once, untimed
    return lambda: v["alt_out"].index_copy_(0, idx, v["src"])


N_SIZES = (100_000, 10_000_000, 100_000_000)


def _n_label(n: int) -> str:
    return f"1e{len(str(n)) - 1}" if str(n).strip("0") == "1" else f"{n:,}"


def index_cases() -> list[Case]:
    cases = [Case("histogram_f32", "histogram_f32", "counts",
                  tuple(_size_n(_n_label(n), n, bins=256) for n in N_SIZES), _size_n("small", 1000, bins=16),
                  _histogram_data,
                  reference=lambda v, d: np.bincount(_bins_of(np, v["x"], d["bins"]),
                                                     minlength=d["bins"]).astype(np.uint32),
                  work=lambda d: (4 * d["n"] + 4 * d["bins"], 0),
                  alternatives=(Alternative("torch", "torch", _histogram_torch, "torch.histc"),
                                Alternative("cupy", "cupy", _histogram_cupy, "cupy.histogram"),
                                Alternative("cupy bincount", "cupy", _histogram_xp, "cupy.bincount of the bins"),
                                Alternative("numpy", "numpy", _histogram_xp, "numpy.bincount of the bins")),
                  bound_reason="exact: integer counts", alt_bound=_histogram_alt_bound, before_call="counts")]
    for verified in (False, True):
        suffix = " (IndexList)" if verified else ""
        tags = ("verified_idx",) if verified else ()
        cases += [
            Case("gather_f32" + suffix, "gather_f32", "out", tuple(_size_n(_n_label(n), n) for n in N_SIZES),
                 _size_n("small", 1000), _index_data, reference=lambda v, d: v["src"][v["idx"]],
                 work=lambda d: (12 * d["n"], 0),
                 alternatives=(Alternative("cupy", "cupy", _gather_xp, "cupy.take"),
                               Alternative("torch", "torch", _gather_torch, "torch.index_select (int32 index)"),
                               Alternative("numpy", "numpy", _gather_xp, "numpy.take")),
                 tags=tags),
            Case("scatter_f32" + suffix, "scatter_f32", "out", tuple(_size_n(_n_label(n), n) for n in N_SIZES),
                 _size_n("small", 1000), _index_data,
                 reference=lambda v, d: _scatter_xp(np, {**v, "alt_out": v["out"].copy()}, d)(),
                 work=lambda d: (12 * d["n"], 0),
                 alternatives=(Alternative("cupy", "cupy", _scatter_xp, "out[idx] = src, cupy"),
                               Alternative("torch", "torch", _scatter_torch, "index_copy_ (int64 index)"),
                               Alternative("numpy", "numpy", _scatter_xp, "out[idx] = src, numpy")),
                 tags=tags),
        ]
    return cases


CASES: tuple[Case, ...] = (*product_cases(), *matrix_cases(), *norm_cases(), *stencil_cases(), *index_cases())
BY_NAME = {case.name: case for case in CASES}
