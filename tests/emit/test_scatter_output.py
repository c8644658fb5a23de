"""The C++ of scatter reductions: each update of a scatter target is one atomic call of its operation on the
element's address, never a plain load or store of the element, and its checks come in Rust's order (the
reference's rule for compound assignment of primitives: the value, then the place; for `t = t.min(v)`, the
read of `t` on the right, then `v`)."""
from __future__ import annotations

import re

import pytest

from rs2gpu import pipeline

SOURCE = """
#[kernel]
pub fn updates(out: &mut [f64], ints: &mut [i64], bits: &mut [u32], idx: &[usize], v: &[f64], w: &[i64]) {
    for i in 0..v.len() {
        out[idx[i]] += v[i];
        out[idx[i] + 1] -= v[i];
        ints[idx[i]] = ints[idx[i]].max(w[i]);
        bits[idx[i] + 1] |= w[i] as u32;
    }
}

#[kernel]
pub fn smear(out: &mut [f64], v: &[f64]) {
    for i in 0..v.len() {
        out[i] += v[i];
        out[i + 1] += v[i];
    }
}

#[kernel]
pub fn ordered(sum: &mut [f64], lo: &mut [f64], idx: &[usize], v: &[f64]) {
    for i in 0..idx.len() {
        sum[idx[i]] += v[idx[i] / 2];
        lo[idx[i]] = lo[idx[i]].min(v[idx[i] / 3]);
    }
}
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("scatter") / "lib.rs"
    path.write_text(SOURCE)
    emitted = pipeline.translate(path).emitted.files
    return {name: text.split("---- end of prelude ----", 1)[1] for name, text in emitted.items()}


def entry_point(text: str, symbol: str) -> str:
    """The text of one entry point of a kernel's file, up to the next one."""
    start = text.index(f" {symbol}(")
    end = text.find('extern "C"', start)
    return text[start:] if end < 0 else text[start:end]


@pytest.mark.parametrize("suffix", [".cu", ".hip.cpp"])
@pytest.mark.parametrize("symbol", ["rs2gpu_updates_0", "rs2gpu_updates_0_proven"])
def test_each_update_is_one_atomic_of_its_operation(files, suffix: str, symbol: str) -> None:
    body = entry_point(files["updates" + suffix], symbol)
    calls = re.findall(r"rs2gpu_atomic_(\w+)\(&(\w+)\[", body)
    assert calls == [("add", "out"), ("sub", "out"), ("max", "ints"), ("or", "bits")]
    # the element is only ever reached through the atomic: no load, no store
    assert re.findall(r"(?<!&)\b(out|ints|bits)\[", body) == []


def test_data_dependent_indices_guard_the_atomic_on_the_device(files) -> None:
    body = entry_point(files["updates.cu"], "rs2gpu_updates_0")
    guarded = re.findall(r"if \(rs2gpu_in_bounds\((\w+), (\w+)_len, \d+, rs2gpu_at\)\) \{\n(?:#line .*\n)?\s*"
                         r"rs2gpu_atomic_\w+\(&\2\[\1\]", body)
    assert [target for _, target in guarded] == ["out", "out", "ints", "bits"]


@pytest.mark.parametrize("symbol", ["rs2gpu_smear_0", "rs2gpu_smear_0_covering"])
def test_affine_indices_need_no_check_on_the_device(files, symbol: str) -> None:
    body = entry_point(files["smear.cu"], symbol)
    assert "rs2gpu_in_bounds" not in body and "rs2gpu_checked" not in body
    assert re.findall(r"rs2gpu_atomic_add\(&out\[([^\]]+)\]", body) == ["i", "(i + 1ULL)"]


@pytest.mark.parametrize("symbol", ["rs2gpu_ordered_0", "rs2gpu_ordered_0_covering"])
def test_checks_come_in_rusts_order(files, symbol: str) -> None:
    body = entry_point(files["ordered.cu"], symbol)  # the entry points that check the places on the device
    add, minimum = body.index("rs2gpu_atomic_add(&sum["), body.index("rs2gpu_atomic_min(&lo[")
    first, second = body[:add], body[add:body.index("\n", minimum)]
    # `sum[k] += v[k / 2]`: the value's read of v is checked before the place sum[k]
    assert first.rindex("rs2gpu_checked(") < first.rindex("rs2gpu_in_bounds(")
    # `lo[k] = lo[k].min(v[k / 3])`: lo[k] is read first, so its check comes before v's read
    assert second.index("rs2gpu_in_bounds(") < second.index("rs2gpu_checked(")
