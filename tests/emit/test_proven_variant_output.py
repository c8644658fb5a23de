"""The proven entry point of a loop that goes through an index list: the same loop without the checks of the
indices that come from the list, taking the same arguments as the entry point that checks them (one
argument buffer serves both), for the host to run when a verified list clears those checks."""
from __future__ import annotations

import re

import pytest

from rs2gpu import pipeline
from rs2gpu.ir.abi import EntryKind

SOURCE = """
#[kernel]
pub fn corners(vol: &mut [f64], x: &[f64], zones: &[usize], jp: usize) {
    for ii in 0..zones.len() {
        let i = zones[ii];
        vol[i] = x[i] + x[i + jp];
    }
}

#[kernel]
pub fn spread(x: &mut [f64], vol: &[f64], zones: &[usize], jp: usize) {
    for ii in 0..zones.len() {
        let i = zones[ii];
        x[i] += vol[i];
        x[i + jp] += vol[i];
    }
}

#[kernel]
pub fn gathered_total(a: &[f64], idx: &[usize]) -> f64 {
    let mut total = 0.0;
    for i in 0..idx.len() {
        total += a[idx[i]];
    }
    total
}

#[kernel]
pub fn scale(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        out[i] = 2.0 * a[i];
    }
}
"""
ENTRY = re.compile(r'extern "C" __global__ void __launch_bounds__\(\d+(?:, \w+\(\d+\))?\) (\w+)\((.*?)\) \{\n(.*?)\n\}\n', re.S)
LIST_CHECKS = ("rs2gpu_check_order", "rs2gpu_in_window", "rs2gpu_in_bounds", "rs2gpu_record_panic")


@pytest.fixture(scope="module")
def translated(tmp_path_factory):
    path = tmp_path_factory.mktemp("proven") / "proven.rs"
    path.write_text(SOURCE)
    return pipeline.translate(path)


def entries(translated, kernel: str, suffix: str) -> dict[str, tuple[str, str]]:
    return {name: (params, body) for name, params, body in ENTRY.findall(translated.emitted.files[kernel + suffix])}


@pytest.mark.parametrize("suffix", [".cu", ".hip.cpp"])
@pytest.mark.parametrize("kernel", ["corners", "spread"])
def test_the_proven_entry_point_takes_the_checking_one_s_arguments_and_checks_nothing_from_the_list(
        translated, kernel, suffix):
    found = entries(translated, kernel, suffix)
    checking, proven = found[f"rs2gpu_{kernel}_0"], found[f"rs2gpu_{kernel}_0_proven"]
    assert proven[0] == checking[0]
    assert any(check in checking[1] for check in LIST_CHECKS)
    assert not any(check in proven[1] for check in LIST_CHECKS)


def test_the_abi_names_the_lists_and_the_reads_the_host_must_clear(translated):
    launch = translated.emitted.abi.kernels["spread"].launches[0]
    proven = launch.entry(EntryKind.PROVEN)
    assert (proven.symbol, proven.records_panics, proven.proof.lists) == ("rs2gpu_spread_0_proven", False, ("zones",))
    # in Rust's order: an update's value before its place
    assert [(r.param, r.list, r.scale) for r in proven.proof.reads] == [("vol", "zones", 1), ("x", "zones", 1),
                                                                        ("vol", "zones", 1), ("x", "zones", 1)]


def test_a_loop_writing_through_an_index_list_has_no_covering_entry_point(translated):
    # the checks of the list are the grid-stride entry point's; the proven one is what runs without them
    assert translated.emitted.abi.kernels["corners"].launches[0].entry(EntryKind.COVERING) is None


def test_a_reduction_through_an_index_list_keeps_its_device_checks(translated):
    # its threads combine many iterations: it has no form with one thread per iteration
    assert translated.emitted.abi.kernels["gathered_total"].launches[0].entry(EntryKind.PROVEN) is None


def test_a_loop_without_index_lists_has_no_proven_entry_point(translated):
    assert translated.emitted.abi.kernels["scale"].launches[0].entry(EntryKind.PROVEN) is None
    assert "_proven" not in translated.emitted.files["scale.cu"]
