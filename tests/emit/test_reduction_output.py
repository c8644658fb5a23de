"""What the generated C++ of reductions and device checks promises the runtime (runtime/readback.py):

- every module holds the readback area (`rs2gpu_readback`: the panic record, then the readback layout's
  words, one per result, two for a min/max-location reduction) and the blocks' ticket counter, which the
  host finds by name;
- a seed that is an element of a slice the kernel only reads (`let mut m = x[0];`) is read on the device,
  from the address the launch takes, so the host reads nothing before the launch;
- a block combines its threads with warp shuffles, and the blocks' partials are combined by the last
  block to finish, with no atomic operation on the result (the only atomic is the ticket);
- a launch that runs after code that can panic stops when a panic was recorded, as Rust stops: it
  returns at entry, or, when it has reductions (whose last-block protocol needs every block), it runs
  no iteration.
"""
from __future__ import annotations

import re

import pytest

from rs2gpu import pipeline
from rs2gpu.runtime.elf import STT_OBJECT, elf_symbols
from rs2gpu.runtime.hiprtc import compile_hip
from rs2gpu.runtime.nvrtc import compile_cuda
from rs2gpu.runtime.readback import PANIC_RECORD_BYTES

KERNELS = """\
use rs2gpu::kernel;

#[kernel]
pub fn sum(a: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..a.len() {
        s += a[i];
    }
    s
}

#[kernel]
pub fn spread(a: &[i32]) -> (i32, i32, i64) {
    let mut lo = i32::MAX;
    let mut hi = i32::MIN;
    let mut total = 0i64;
    for i in 0..a.len() {
        lo = lo.min(a[i]);
        hi = hi.max(a[i]);
        total += a[i] as i64;
    }
    (lo, hi, total)
}

#[kernel]
pub fn sum_and_first_min(a: &[f64]) -> (f64, f64, usize) {
    let mut s = 0.0;
    let mut m = f64::MAX;
    let mut at = 0;
    for i in 0..a.len() {
        s += a[i];
        if a[i] < m {
            m = a[i];
            at = i;
        }
    }
    (s, m, at)
}

#[kernel]
pub fn gather_then_fill(out: &mut [f64], a: &[f64], idx: &[usize], filled: &mut [f64]) {
    for i in 0..out.len() {
        out[i] = a[idx[i]];
    }
    for j in 0..filled.len() {
        filled[j] = 1.0;
    }
}

#[kernel]
pub fn gather_then_sum(out: &mut [f64], a: &[f64], idx: &[usize]) -> f64 {
    for i in 0..out.len() {
        out[i] = a[idx[i]];
    }
    let mut s = 0.0;
    for j in 0..a.len() {
        s += a[j];
    }
    s
}

#[kernel]
pub fn least_from_first(x: &[f64]) -> f64 {
    let mut m = x[0];
    for i in 0..x.len() {
        m = m.min(x[i]);
    }
    m
}

#[kernel]
pub fn least_after_doubling(x: &mut [f64]) -> f64 {
    let mut m = x[0];
    for i in 0..x.len() {
        x[i] = 2.0 * x[i];
        m = m.min(x[i]);
    }
    m
}

#[kernel]
pub fn fill_then_sum(out: &mut [f64], a: &[f64]) -> f64 {
    for i in 0..out.len() {
        out[i] = 2.0;
    }
    let mut s = 0.0;
    for j in 0..a.len() {
        s += a[j];
    }
    s
}
"""

ENTRY = re.compile(r'extern "C" __global__ void __launch_bounds__\(\d+(?:, \w+\(\d+\))?\) (\w+)\(.*?\) \{\n(.*?)\n\}\n', re.S)


@pytest.fixture(scope="module")
def translated(tmp_path_factory: pytest.TempPathFactory) -> pipeline.Translation:
    root = tmp_path_factory.mktemp("reductions")
    (root / "src").mkdir()
    (root / "Cargo.toml").write_text('[package]\nname = "probe"\nversion = "0.1.0"\nedition = "2021"\n')
    (root / "src" / "lib.rs").write_text(KERNELS)
    return pipeline.translate(root)


def bodies(translated: pipeline.Translation, kernel: str, suffix: str = ".cu") -> dict[str, str]:
    """Each entry point of a kernel's file, by symbol, with the text of its body."""
    return dict(ENTRY.findall(translated.emitted.files[kernel + suffix]))


@pytest.mark.parametrize(("kernel", "words"), [("sum", 1), ("spread", 3), ("sum_and_first_min", 3),
                                               ("gather_then_fill", 0)])
def test_the_readback_area_has_a_word_per_result_and_two_per_location_reduction(translated, kernel, words):
    # sum_and_first_min: s one word, (m, at) two
    assert translated.emitted.abi.kernels[kernel].result_words == words
    for suffix in (".cu", ".hip.cpp"):
        text = translated.emitted.files[kernel + suffix]
        assert f"#define RS2GPU_RESULT_WORDS {max(words, 1)}\n" in text


@pytest.mark.parametrize("kernel", ["sum", "gather_then_fill"])
def test_every_binary_holds_the_readback_area_and_the_ticket_counter(translated, kernel):
    files = translated.emitted.files
    cubin = compile_cuda(files[kernel + ".cu"], kernel + ".cu", "sm_90").binary
    code_object = compile_hip(files[kernel + ".hip.cpp"], kernel + ".hip.cpp", "gfx90a").binary
    for binary in (cubin, code_object):
        variables = {s.name: s.size for s in elf_symbols(binary) if s.kind == STT_OBJECT}
        words = translated.emitted.abi.kernels[kernel].result_words
        assert variables["rs2gpu_readback"] >= PANIC_RECORD_BYTES + 8 * words
        assert variables["rs2gpu_finished_blocks"] == 4


# kernels without device checks: a panic record is claimed with a compare-and-swap
@pytest.mark.parametrize("kernel", ["sum", "spread"])
def test_blocks_combine_with_warp_shuffles_and_no_atomic_touches_a_result(translated, kernel):
    ptx = compile_cuda(translated.emitted.files[kernel + ".cu"], kernel + ".cu", "compute_90").binary.decode()
    assert "shfl.sync.down" in ptx
    atomics = set(re.findall(r"\b((?:atom|red)\.[\w.]+)", ptx))
    assert atomics == {"atom.global.inc.u32"}  # the last-block ticket, nothing else


def test_a_launch_after_one_that_can_panic_returns_at_entry_when_a_panic_was_recorded(translated):
    entries = bodies(translated, "gather_then_fill")
    first, second = entries["rs2gpu_gather_then_fill_0"], entries["rs2gpu_gather_then_fill_1"]
    assert "rs2gpu_stopped_before" not in first  # nothing before it can panic
    assert second.splitlines()[0].strip().startswith(
        "if (rs2gpu_may_stop && rs2gpu_stopped_before(rs2gpu_launch)) return;")


def test_a_reduction_launch_after_one_that_can_panic_runs_no_iteration_but_still_combines(translated):
    second = bodies(translated, "gather_then_sum")["rs2gpu_gather_then_sum_1"]
    lines = [line.strip() for line in second.splitlines()]
    assert lines[0].startswith("const bool rs2gpu_stopped = rs2gpu_may_stop && rs2gpu_stopped_before(rs2gpu_launch);")
    assert "return" not in second  # every block must reach the block reduction and take its ticket
    loop = next(line for line in lines if line.startswith("for ("))
    assert "!rs2gpu_stopped && rs2gpu_tx < rs2gpu_count_x;" in loop
    assert lines.index(loop) < next(i for i, line in enumerate(lines) if line.startswith("rs2gpu_reduce_block"))


@pytest.mark.parametrize("kernel", ["sum", "spread", "fill_then_sum"])
def test_kernels_without_device_checks_have_no_panic_guard(translated, kernel):
    assert translated.emitted.abi.kernels[kernel].panics == ()
    for body in bodies(translated, kernel).values():
        assert "rs2gpu_stopped_before" not in body


def test_both_targets_get_the_same_guards(translated):
    for kernel in ("gather_then_fill", "gather_then_sum"):
        assert list(bodies(translated, kernel).values()) == list(bodies(translated, kernel, ".hip.cpp").values())


def test_a_seed_read_from_a_slice_the_kernel_only_reads_is_taken_by_address(translated):
    (reduction,) = translated.emitted.abi.kernels["least_from_first"].launches[0].reductions
    assert reduction.seed_on_device is True and reduction.init["element"] == "x"
    for suffix in (".cu", ".hip.cpp"):
        for symbol, body in bodies(translated, "least_from_first", suffix).items():
            text = translated.emitted.files["least_from_first" + suffix]
            assert re.search(rf"{symbol}\([^)]*const f64\* __restrict__ rs2gpu_seed_element_m\b", text)
            assert "*rs2gpu_seed_element_m, rs2gpu_op_min()" in body  # read by the last block


def test_a_seed_read_from_a_slice_the_loop_writes_is_taken_by_value(translated):
    # read on the device after the loop, x[0] would be the doubled value, not the one Rust starts from
    (reduction,) = translated.emitted.abi.kernels["least_after_doubling"].launches[0].reductions
    assert reduction.seed_on_device is False
    assert "const f64 rs2gpu_seed_m" in translated.emitted.files["least_after_doubling.cu"]
