"""What it means for a device to agree with rustc on one kernel call, and the random arguments such calls
take, read from the kernel ABI.

Agreement means: the same arrays afterwards, bit for bit (any NaN matching any NaN, since the GPU does
not keep NaN payloads), and the same return values — except where the arithmetic itself differs:
  * kernels calling math functions that are not correctly rounded on both sides (exp, sin, powf, ...),
    whose float outputs are compared within a relative 1e-13 (f64) / 1e-5 (f32): a few ulps, amplified
    by the arithmetic around the call;
  * float reductions with `+` or `*`, whose order differs: within n·ε·Σ|aᵢ| of the first input;
  * arrays a loop writes after inner loops whose float sums or products the threads of a warp or a block
    reassociate (`SplitIterations.reassociates`): within N·ε·S·max(1, M) of rustc's
    element, N, S and M the count, the summed magnitude and the largest magnitude of the kernel's float
    inputs, a bound of n·ε·Σ|aᵢ| for sums whose terms are inputs or products of two.
When the Rust code panics, the device must raise KernelPanic with the same message and leave the host
arrays as they were.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import rs2gpu
from rs2gpu.ir.abi import KernelABI, ParamKind
from rs2gpu.runtime.arguments import numpy_dtype

NOT_CORRECTLY_ROUNDED = re.compile(r"\.(exp|exp2|exp_m1|ln|ln_1p|log2|log10|sin|cos|tan|asin|acos|atan|atan2|"
                                   r"sinh|cosh|tanh|asinh|acosh|atanh|powf|powi|cbrt|hypot|to_degrees|"
                                   r"to_radians)\(")


def random_values(dtype: np.dtype, shape, rng: np.random.Generator):
    if dtype.fields:
        out = np.zeros(shape, dtype=dtype)
        for name, (field, _) in dtype.fields.items():
            out[name] = random_values(field, shape, rng)
        return out
    if dtype.subdtype is not None:
        return random_values(dtype.subdtype[0], (*np.atleast_1d(shape), *dtype.subdtype[1]), rng)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "f":
        return (rng.uniform(0.25, 2.0, shape) * rng.choice([-1.0, 1.0], shape)).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def arguments(entry: KernelABI, n: int, rng: np.random.Generator) -> list:
    """Random arguments: `n` elements in a written slice, `n + 16` in a read one, small integer scalars."""
    args = []
    for p in entry.params:
        if p.kind == ParamKind.SLICE:
            length = n if p.mutable else n + 16
            args.append(np.ascontiguousarray(random_values(numpy_dtype(p.layout), length, rng)))
        elif p.kind in (ParamKind.ARRAY, ParamKind.STRUCT_REF):
            count = p.length if p.length is not None else 1
            args.append(np.ascontiguousarray(random_values(numpy_dtype(p.layout), count, rng)))
        elif p.kind == ParamKind.SCALAR:
            ty = p.layout.type
            if ty == "bool":
                args.append(bool(rng.integers(0, 2)))
            elif ty in ("f32", "f64"):
                args.append(float(rng.uniform(0.5, 1.5)))
            else:
                args.append(int(rng.integers(0, 16)))  # scalars often count something: keep them small
        else:
            record = random_values(numpy_dtype(p.layout), (), rng)
            args.append(record[()])
    return args


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype.fields:
        return all(same_bits(a[name], b[name]) for name in a.dtype.fields)
    if a.dtype.kind == "f":
        both_nan = np.isnan(a) & np.isnan(b)
        return bool(np.all(both_nan | (a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}"))))
    return a.tobytes() == b.tobytes()


def close(a: np.ndarray, b: np.ndarray, relative: float) -> bool:
    if a.dtype.fields:
        return all(close(a[name], b[name], relative) for name in a.dtype.fields)
    if a.dtype.kind != "f":
        return a.tobytes() == b.tobytes()
    both_nan = np.isnan(a) & np.isnan(b)
    return bool(np.all(both_nan | (a == b) | (np.abs(a - b) <= relative * np.abs(b))))


def kernel_text(source: str, name: str) -> str:
    """The source of kernel `name`, up to the next `#[kernel` (or the end of the file)."""
    start = re.search(rf"pub fn {name}[(<]", source).start()
    following = source.find("#[kernel", start)
    return source[start:following if following != -1 else len(source)]


def assert_call_agrees(cpu, kernels, name: str, args: list, source: str) -> None:
    """Calls kernel `name` (as the kernel ABI names it) of `kernels` (on a device) and of `cpu` (rustc's
    build) on copies of the same `args`, and checks that they agree; `source` is the Rust file. `args` hold
    the device's results afterwards."""
    entry = cpu.abi.kernels[name]
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        want = getattr(cpu, name)(*expected)
    except rs2gpu.KernelPanic as panic:
        with pytest.raises(rs2gpu.KernelPanic) as raised:
            getattr(kernels, name)(*args)
        assert raised.value.message == panic.message
        for got, original in zip(args, before):
            if isinstance(got, np.ndarray):
                assert got.tobytes() == original.tobytes(), "a panicking call changed host data"
        return
    got = getattr(kernels, name)(*args)
    assert_arrays_agree(entry, source, args, expected)
    assert_results_agree(entry, args, got, want)


def assert_arrays_agree(entry: KernelABI, source: str, got: list, want: list) -> None:
    """The arrays of a call (`got`, after the device ran) against rustc's (`want`), as the module says."""
    inexact = bool(NOT_CORRECTLY_ROUNDED.search(kernel_text(source, entry.rust_path.split("::")[-1])))
    bound = reassociation_bound(entry, got)
    for p, a, b in zip(entry.params, got, want):
        if isinstance(a, np.ndarray):
            if bound is not None and a.dtype.kind == "f" and not a.dtype.fields:
                within = np.abs(a.astype(np.float64) - b) <= bound
                if inexact:
                    within |= np.abs(a - b) <= (1e-5 if a.dtype == np.float32 else 1e-13) * np.abs(b)
                assert np.all(within | (np.isnan(a) & np.isnan(b))), f"`{p.name}` differs beyond the bound"
            elif inexact:
                tolerance = 1e-5 if a.dtype == np.float32 else 1e-13
                assert close(a, b, tolerance), f"`{p.name}` differs beyond a few ulps"
            else:
                assert same_bits(a, b), f"`{p.name}` differs from rustc"


def reassociation_bound(entry: KernelABI, args: list) -> float | None:
    """N·ε·S·max(1, M) over the kernel's float inputs (see the module's docstring), where an entry point's
    threads reassociate a float sum or product; else None."""
    if not any(e.split is not None and e.split.reassociates for launch in entry.launches
               for e in launch.entry_points):
        return None
    inputs = [a for p, a in zip(entry.params, args) if isinstance(a, np.ndarray) and not p.mutable
              and a.dtype.kind == "f" and not a.dtype.fields]
    magnitudes = np.concatenate([np.abs(a.astype(np.float64)).ravel() for a in inputs]) if inputs else np.zeros(1)
    eps = max(float(np.finfo(a.dtype).eps) for a in inputs) if inputs else 0.0
    return magnitudes.size * eps * float(magnitudes.sum()) * max(1.0, float(magnitudes.max(initial=0.0)))


def assert_results_agree(entry: KernelABI, args: list, got, want) -> None:
    """A call's returned value against rustc's; a reordered float reduction within its bound."""
    if want is None:
        assert got is None
        return
    got_all = got if isinstance(got, tuple) else (got,)
    want_all = want if isinstance(want, tuple) else (want,)
    reordered = any(r.op in ("+", "*") and r.type in ("f32", "f64")
                    for launch in entry.launches for r in launch.reductions)
    first = next((a for a in args if isinstance(a, np.ndarray) and a.dtype.kind == "f"), None)
    for g, w in zip(got_all, want_all):
        if isinstance(w, float) and reordered and first is not None:
            eps = np.finfo(first.dtype).eps
            bound = first.size * eps * float(np.sum(np.abs(first.astype(np.float64)))) + abs(w) * eps
            assert abs(g - w) <= bound or (np.isnan(g) and np.isnan(w))
        elif isinstance(w, float) and np.isnan(w):
            assert np.isnan(g)
        else:
            assert g == w
