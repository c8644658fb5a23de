"""The kernels of the example crate `examples/corpus`, written the way Rust programmers write them, translate
and compute what rustc computes, or are known rejections whose diagnostic says what to write instead.

The crate holds small numeric kernels by theme, one module each (iterators, control flow, structs and
`impl` blocks, tuples and closures, `const fn`, integer arithmetic, 2-D nests, reductions); its
`cargo test` gives their expected values, and docs/corpus.md lists them with their verdicts. Every
module is self-contained, so each kernel is translated on its own from a copy of its module in which
every other function has lost its `#[kernel]` attribute. Each accepted kernel then runs on the device
(the emulated one, and the GPU under `-m gpu`) on random inputs of the shapes below, and must agree with
the rustc build of the same module (tests/support/agreement.py).

As in examples/rajaperf, the kernels rs2gpu rejects today are kept in the crate without their `#[kernel]`
attribute, so that the crate translates as a whole; they are translated here with the attribute added, as
strict xfails naming the diagnostic code, so that pytest reports XPASS as a failure once the translator
learns the construct. Then remove the entry from `REJECTED`, give the function back its `#[kernel]`, and
move it to the accepted kernels of docs/corpus.md.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np
import pytest

from rs2gpu import pipeline
from rs2gpu.ir.diagnostics import CompileFailed
from rs2gpu.runtime.arguments import numpy_dtype

from tests.support.agreement import arguments, assert_call_agrees, random_values
from tests.support.devices import rustc_build
from tests.support.kernel_sources import keep_kernels, kernel_names
from tests.support.paths import REPO

CRATE = REPO / "examples" / "corpus"
MODULES = sorted(path for path in (CRATE / "src").glob("*.rs") if path.name != "lib.rs")
MARKED = {name: module for module in MODULES for name in kernel_names(module.read_text())}
SIZES = (1, 257, 2500)

# Kernel -> (the code of its first diagnostic, the construct rs2gpu rejects today).
REJECTED: dict[str, tuple[str, str]] = {
    "sum_squares_map": ("RG0007", "an iterator chain, `x.iter().map(..).sum()`, outside a `for` loop"),
    "reverse_zip": ("RG0002", "`.rev()` in a `for` loop's iterator"),
    "collatz_steps": ("RG0007", "the integer method `is_multiple_of`"),
    "rows_with_repeat": ("RG0002", "a labelled `break 'scan` out of two loops"),
    "next_or_zero": ("RG0002", "`if let Some(v) = x.get(i + 1)`"),
    "gray_from_rgb_method": ("RG0007", "a method of an `impl` block, `px[i].luma()`"),
    "squared_lengths_method": ("RG0007", "a method of an `impl` block, `v[i].dot(v[i])`"),
    "conjugates_new": ("RG0002", "an associated function of an `impl` block, `Complex::new(..)`"),
    "affine_closure": ("RG0002", "a closure over the kernel's scalars"),
    "harmonic_row_sums": ("RG0002", "a closure inside the parallel loop"),
    "abs_differences": ("RG0007", "the integer method `abs_diff`"),
    "eliminate_below": ("RG0103", "each row reads the pivot row, `m[pivot * cols + c]`, of the slice it writes"),
    "normalize_rows_chunks": ("RG0002", "`.chunks_exact_mut(cols)` in a `for` loop's iterator"),
    "all_finite": ("RG0104", "a `bool` reduced with `&=`"),
    "variance_two_pass": ("RG0107", "a `let` between two loops that reads the first loop's reduction"),
    "product_iter": ("RG0007", "an iterator chain, `x.iter().product()`, outside a `for` loop"),
    "max_fold": ("RG0007", "an iterator chain, `x.iter().fold(..)`, outside a `for` loop"),
}
ACCEPTED = list(MARKED)


def plain_function(name: str) -> re.Pattern[str]:
    return re.compile(rf"^pub fn {name}\b", re.MULTILINE)


def module_of(name: str) -> Path:
    """The module that defines `name`, a `#[kernel]` or a function kept without the attribute."""
    if name in MARKED:
        return MARKED[name]
    [module] = [module for module in MODULES if plain_function(name).search(module.read_text())]
    return module


KERNELS = {name: module_of(name) for name in [*MARKED, *REJECTED]}


class Shape(NamedTuple):
    """The length of some slice parameters and the value of some scalars, for `n` elements."""
    lengths: dict[str, int]
    scalars: dict[str, int | float]


def rows(cols: int, *matrices: str) -> Callable[[int], Shape]:
    """`n` rows of `cols` columns: `matrices` hold `n * cols` elements, and the scalars `rows` and `cols` say so."""
    return lambda n: Shape({m: n * cols for m in matrices}, {"rows": n, "cols": cols})


# Inputs other than the default random ones (tests/support/agreement.py: `n` elements in a written slice,
# `n + 16` in a read one, small scalars), where a kernel's parameters describe a shape or a range.
SHAPES: dict[str, Callable[[int], Shape]] = {
    "clamp_copied": lambda n: Shape({}, {"lo": -1.0, "hi": 1.0}),
    "first_above": rows(8, "m"),
    "positive_row_sums": rows(8, "m"),
    "transpose_at": rows(5, "out", "a"),
    "box_filter": lambda n: Shape({"x": n}, {}),
    "bin_index": lambda n: Shape({}, {"lo": -1.0, "width": 0.25, "bins": 8}),
    "scale_rows": rows(4, "m"),
    "jacobi_5pt": rows(6, "out", "u"),
    "transpose": rows(3, "out", "a"),
    "matvec": lambda n: Shape({"a": 5 * n, "x": 5}, {}),
    "box_blur_3x3": rows(4, "out", "img"),
    "count_in_range": lambda n: Shape({}, {"lo": -0.5, "hi": 1.0}),
}


def call_arguments(entry, name: str, n: int) -> list:
    rng = np.random.default_rng([n, len(name), sum(map(ord, name))])
    args = arguments(entry, n, rng)
    shape = SHAPES.get(name, lambda n: Shape({}, {}))(n)
    for i, p in enumerate(entry.params):
        if p.name in shape.lengths:
            args[i] = np.ascontiguousarray(random_values(numpy_dtype(p.layout), shape.lengths[p.name], rng))
        elif p.name in shape.scalars:
            args[i] = shape.scalars[p.name]
    return args


def isolated(name: str, root: Path) -> Path:
    """A copy of `name`'s module under `root` in which only `name` is a `#[kernel]`."""
    module = KERNELS[name]
    text = keep_kernels(module.read_text(), {name})
    if name in REJECTED:
        text = plain_function(name).sub(lambda m: "#[kernel]\n" + m.group(0), text)
    target = root / module.name
    target.write_text(text)
    return target


def rejected(name: str):
    code, construct = REJECTED[name]
    return pytest.param(name, marks=pytest.mark.xfail(strict=True, raises=CompileFailed,
                                                      reason=f"{code}: {construct}"))


def test_the_crate_has_forty_kernels_in_every_theme() -> None:
    assert len(KERNELS) >= 40
    assert {module.stem for module in MODULES} == {"iterators", "control_flow", "structs", "tuples", "const_fn",
                                                   "integers", "nests", "reductions"}
    assert all(kernel_names(module.read_text()) for module in MODULES)


def test_kernel_names_are_unique() -> None:
    assert len(MARKED) == sum(len(kernel_names(module.read_text())) for module in MODULES)


def test_every_rejected_entry_names_one_function_kept_without_its_attribute() -> None:
    for name in REJECTED:
        assert name not in MARKED
        assert sum(len(plain_function(name).findall(module.read_text())) for module in MODULES) == 1, name


def test_every_shape_names_an_accepted_kernel() -> None:
    assert set(SHAPES) <= set(ACCEPTED)


@pytest.mark.parametrize("name", [rejected(name) if name in REJECTED else name for name in KERNELS])
def test_kernel_translates(name: str, tmp_path: Path) -> None:
    result = pipeline.translate(isolated(name, tmp_path))
    assert [k.name for k in result.checked.kernels] == [name]
    assert {f"{name}.cu", f"{name}.hip.cpp"} <= set(result.emitted.files)


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_rejection_names_its_code_and_says_what_to_write_instead(name: str, tmp_path: Path) -> None:
    code, _ = REJECTED[name]
    with pytest.raises(CompileFailed) as failed:
        pipeline.translate(isolated(name, tmp_path))
    first = failed.value.diagnostics[0]
    assert first.code == code, str(failed.value)
    assert first.help or first.notes, f"{code} says what is wrong but not what to write instead:\n{failed.value}"


def in_module_group(name: str):
    """Under `--dist loadgroup` the kernels of one module run in one worker, which builds the module once with
    rustc, and the modules spread over the workers (the emulated device compiles each kernel on its own)."""
    return pytest.param(name, marks=pytest.mark.xdist_group(f"corpus-{KERNELS[name].stem}"))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", [in_module_group(name) for name in ACCEPTED])
def test_accepted_kernel_agrees_with_rustc(device, name: str, n: int) -> None:
    module = KERNELS[name]
    cpu, kernels = rustc_build(module), device.load(module)
    args = call_arguments(cpu.abi.kernels[name], name, n)
    assert_call_agrees(cpu, kernels, name, args, module.read_text())


def test_docs_list_every_kernel_with_its_verdict_and_the_split() -> None:
    doc = (REPO / "docs" / "corpus.md").read_text()
    rows = re.findall(r"^\| (\w+) \| `(\w+)` \| .* \| (accepted|rejected, (RG\d{4}))", doc, re.MULTILINE)
    listed = {name: (module, code or None) for module, name, _, code in rows}
    assert listed == {name: (module.stem, REJECTED[name][0] if name in REJECTED else None)
                      for name, module in KERNELS.items()}
    assert f"{len(ACCEPTED)} accepted, {len(REJECTED)} rejected ({len(KERNELS)} kernels)" in doc
