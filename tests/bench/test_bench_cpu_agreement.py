"""Without a GPU: every generated kernel's arguments bind from the table by parameter name, and the
hand-written baselines whose threads do not cooperate, run thread by thread on the CPU, compute bitwise what
the Rust kernels compute (rustc's build, through rs2gpu's CPU backend) on the table's random inputs."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from bench import corpus as corpus_module
from bench import emulate, harness
from bench.kernels import BY_NAME, KERNELS

from tests.support.paths import RAJAPERF, REPO



@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return corpus_module.prepare(RAJAPERF, tmp_path_factory.mktemp("corpus"), arch=None,
                                 log=lambda message: None)


@pytest.fixture(scope="module")
def cpu(corpus):
    if shutil.which("cargo") is None:
        pytest.fail("cargo is required: the generated side runs on the rustc-built CPU backend")
    import rs2gpu

    return rs2gpu.load(corpus.root, backend="cpu")


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    if emulate.unavailable():
        pytest.fail(emulate.unavailable())
    work = tmp_path_factory.mktemp("emulated")
    return {path.stem: emulate.Library(path, work) for path in (REPO / "bench" / "baselines").glob("*.cu")}


def test_every_left_out_kernel_has_a_reason(corpus) -> None:
    for k in KERNELS:
        status = corpus.status(k.rust)
        assert status == "ok" or ": " in status, f"{k.name}: {status}"


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_generated_arguments_bind_by_parameter_name(corpus, name: str) -> None:
    k = BY_NAME[name]
    if corpus.status(k.rust) != "ok":
        pytest.skip(corpus.status(k.rust))
    d = k.dims(1500)
    sides = harness.prepare(k, d, np, seed=5)
    args = harness.generated_arguments(corpus.kernels[k.rust], sides.gen, d)
    assert len(args) == len(corpus.kernels[k.rust].params)
    harness.hand_launches(k, sides.hand, d)


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_hand_written_kernel_on_the_cpu_matches_the_rust(corpus, cpu, libraries, name: str) -> None:
    from bench.dry import emulated_hand

    k = BY_NAME[name]
    if corpus.status(k.rust) != "ok":
        pytest.skip(corpus.status(k.rust))
    library = libraries[k.source]
    if not emulate.can_emulate(k, library):
        pytest.skip("its threads cooperate through shared memory; checked on the GPU")
    d = k.dims(1500)
    sides = harness.prepare(k, d, np, seed=11)
    call = harness.generated_caller(k, corpus.kernels[k.rust], sides.gen, d, getattr(cpu, k.rust))
    got = harness.gen_results(k, sides.gen, call())
    want = emulated_hand(k, library, sides, d)
    agree, how = harness.compare(k, got, want, sides.hand, d)
    assert agree, how
    assert harness.unwritten_check(k, got, d, "generated") is None
    assert harness.unwritten_check(k, want, d, "hand-written") is None


def test_a_swapped_argument_is_a_mismatch(corpus, cpu, libraries) -> None:
    import dataclasses

    from bench.kernels import Launch, grid_1d
    from bench.dry import emulated_hand

    k = BY_NAME["TRIAD"]
    wrong = dataclasses.replace(k, launches=(Launch("base_triad", grid_1d, lambda v, d: (
        v["a"], v["c"], v["b"], np.float64(v["alpha"]), np.int64(d["n"]))),))
    d = wrong.dims(700)
    sides = harness.prepare(wrong, d, np, seed=1)
    got = harness.gen_results(wrong, sides.gen, cpu.triad(*harness.generated_arguments(corpus.kernels["triad"],
                                                                                       sides.gen, d)))
    agree, how = harness.compare(wrong, got, emulated_hand(wrong, libraries["stream"], sides, d), sides.hand, d)
    assert not agree and "`a`" in how


@pytest.mark.parametrize("name", sorted(k.name for k in KERNELS if k.reference or k.cupy))
def test_hand_written_kernel_on_the_cpu_matches_the_library_routine(libraries, name: str) -> None:
    """The kernels that return results to the host agree with numpy's routine for the same thing (the only
    check of INDEXLIST and INDEXLIST_3LOOP, which have no Rust kernel)."""
    from bench.dry import emulated_hand

    k = BY_NAME[name]
    d = k.dims(1500)
    sides = harness.prepare(k, d, np, seed=13)
    hand = emulated_hand(k, libraries[k.source], sides, d)
    agree, how = harness.compare(k, (k.reference or k.cupy)(sides.hand, d), hand, sides.hand, d)
    assert agree, how
