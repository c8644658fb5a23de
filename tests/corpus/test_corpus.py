"""Every kernel of the example crate `examples/rajaperf` translates, or is a known gap of the translator.

The crate holds RAJAPerf's Stream, Basic, Lcals and Apps kernels written as a Rust programmer would write them;
its `cargo test` gives their expected values. Here each kernel is translated on its own: a copy of the crate in
which every other function has lost its `#[kernel]` attribute, so that one kernel's diagnostics never hide
another's result. Helpers, consts and structs stay, and only the ones the kernel reaches are lowered.

Known gaps are strict xfails, so that pytest reports XPASS as a failure once the translator learns the
construct, and the entry must then be removed:
- `REJECTED`: kernels of the crate that rs2gpu rejects today;
- `UNMARKED`: functions of the crate written in the kernel language but kept without `#[kernel]`, because
  rs2gpu rejects them and the whole crate must translate; they are translated here with the attribute added.
  When one translates, give it back its `#[kernel]` in the crate.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rs2gpu import pipeline
from rs2gpu.ir.diagnostics import CompileFailed

from tests.support.kernel_sources import KERNEL, keep_kernels, kernel_names

REPO = Path(__file__).resolve().parents[2]
CRATE = REPO / "examples" / "rajaperf"
SOURCES = sorted(CRATE.glob("src/**/*.rs"))

KERNELS = [name for path in SOURCES for name in kernel_names(path.read_text())]

# Kernel name -> why rs2gpu rejects it today (diagnostic codes and the construct).
REJECTED: dict[str, str] = {}

# Function of the crate without `#[kernel]` -> why rs2gpu rejects it as a kernel today.
UNMARKED = {
    "indexlist": "RG0102 + RG0104: stream compaction `list[count] = i; count += 1` under `if x[i] < 0.0`; "
                 "`count` is a counter read inside the loop (a scan), and the write index is not affine",
    "indexlist_3loop": "RG0104: the sequential exclusive-scan loop `let c = counts[i]; counts[i] = count; "
                       "count += c;` reads the carried `count`; RG0102: the scatter `list[counts[i]] = i` "
                       "through a slice written by an earlier loop of the kernel; RG0107: the result "
                       "`counts[n]` is an element of a slice, not a reduction",
}


def plain_function(name: str) -> re.Pattern[str]:
    return re.compile(rf"^pub\s+fn\s+{name}\b", re.MULTILINE)


def isolate(name: str, root: Path) -> Path:
    """A copy of the crate's sources under `root/src` in which only `name` is a `#[kernel]`."""
    for path in SOURCES:
        text = keep_kernels(path.read_text(), {name})
        if name in UNMARKED:
            text = plain_function(name).sub(lambda m: "#[kernel]\n" + m.group(0), text)
        target = root / path.relative_to(CRATE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root / "src"


def as_param(name: str):
    reason = REJECTED.get(name) or UNMARKED.get(name)
    if reason:
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, raises=CompileFailed, reason=reason))
    return name


def test_the_crate_has_kernels_in_every_module() -> None:
    modules = {path.stem for path in SOURCES if KERNEL.search(path.read_text())}
    assert modules == {"stream", "basic", "lcals", "apps"}


def test_kernel_names_are_unique() -> None:
    assert len(KERNELS) == len(set(KERNELS))


def test_every_rejected_entry_names_a_kernel() -> None:
    assert set(REJECTED) <= set(KERNELS)


def test_every_unmarked_entry_names_a_plain_function_of_the_crate() -> None:
    for name in UNMARKED:
        assert name not in KERNELS
        assert sum(len(plain_function(name).findall(path.read_text())) for path in SOURCES) == 1, name


@pytest.mark.parametrize("name", [as_param(name) for name in [*KERNELS, *UNMARKED]])
def test_kernel_translates(name: str, tmp_path: Path) -> None:
    result = pipeline.translate(isolate(name, tmp_path))
    assert [k.name for k in result.checked.kernels] == [name]
    assert {f"{name}.cu", f"{name}.hip.cpp"} <= set(result.emitted.files)
