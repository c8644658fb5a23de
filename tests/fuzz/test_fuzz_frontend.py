"""Fuzzing the frontend and the checker: whatever the input, rs2gpu answers with diagnostics, never
with a Python traceback.

(a) token mutations of the corpus (the RAJAPerf kernels and tests/cases): tokens deleted, duplicated,
    swapped, or replaced by tokens of the same file or by Rust keywords, operators and literals;
(b) random well-typed expressions (`tests/support/rust_exprs.py`) inside a kernel; a sample of the kernels rs2gpu
    accepts is compiled by rustc, which must accept them too;
(c) random bytes and text, and corpus files cut short.

Every input must satisfy `tests.support.fuzzing.assert_translates_or_diagnoses`. Inputs that once crashed
rs2gpu are kept as regression tests in `test_regressions.py`. See `tests/support/fuzzing.py` for the
RS2GPU_FUZZ variable that runs longer, randomized campaigns.
"""
from __future__ import annotations

import shutil
import warnings
from dataclasses import replace

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from rs2gpu.ir.diagnostics import CompileFailed
from rs2gpu.pipeline import check, translate

from tests.support.fuzzing import (CORPUS_FILES, RUST_TOKENS, assert_translates_or_diagnoses, check_diagnostic,
                                   corpus_units, fuzz_settings, rustc_errors, tokenize)
from tests.support.rust_exprs import crate_of, kernels

UNITS = corpus_units()
UNIT_TOKENS = [tokenize(u) for u in UNITS]


def test_corpus_units_translate_unchanged() -> None:
    """The unmutated units are valid kernels: mutations start from code that translates."""
    assert len(UNITS) >= 60
    for unit in UNITS:
        result = assert_translates_or_diagnoses(unit)
        assert not isinstance(result, CompileFailed), str(result)


# ---------------------------------------------------------------- (a) token mutations

MUTATIONS = ("delete", "duplicate", "swap", "replace_same_file", "replace_rust", "insert_rust")


@st.composite
def mutated_units(draw) -> str:
    which = draw(st.integers(0, len(UNITS) - 1))
    tokens = list(UNIT_TOKENS[which])
    significant = [t for t in tokens if not t.isspace()]
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(MUTATIONS))
        at = draw(st.integers(0, len(tokens) - 1))
        if op == "delete":
            del tokens[at]
        elif op == "duplicate":
            tokens.insert(at, tokens[at])
        elif op == "swap":
            other = draw(st.integers(0, len(tokens) - 1))
            tokens[at], tokens[other] = tokens[other], tokens[at]
        elif op == "replace_same_file":
            tokens[at] = draw(st.sampled_from(significant))
        elif op == "replace_rust":
            tokens[at] = draw(st.sampled_from(RUST_TOKENS))
        else:
            tokens.insert(at, draw(st.sampled_from(RUST_TOKENS)) + " ")
    return "".join(tokens)


@fuzz_settings(max_examples=800)
@given(mutated_units())
def test_token_mutations_of_the_corpus(source: str) -> None:
    assert_translates_or_diagnoses(source)


# ---------------------------------------------------------------- (b) random expressions

@fuzz_settings(max_examples=500)
@given(kernels())
def test_random_expressions(generated) -> None:
    note(generated.source)
    assert_translates_or_diagnoses(crate_of([generated]))


class RustcDisagreement(UserWarning):
    """rs2gpu accepted a kernel that rustc rejects with a deny-by-default lint (recorded, not failed)."""


@pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc is not installed")
@fuzz_settings(max_examples=5)
@given(st.lists(kernels(), min_size=6, max_size=6))
def test_accepted_expressions_are_rust(tmp_path_factory, batch) -> None:
    """The kernels of a batch that rs2gpu accepts compile with rustc (one crate, one rustc run)."""
    accepted = []
    for k, generated in enumerate(batch):
        generated = kernels_renamed(generated, f"fuzzed{k}")
        if not isinstance(assert_translates_or_diagnoses(crate_of([generated])), CompileFailed):
            accepted.append(generated)
    if not accepted:
        return
    folder = tmp_path_factory.mktemp("rustc")
    source = crate_of(accepted)
    errors = rustc_errors(source, folder, cap_lints=True)
    if errors is not None:
        culprits = [g.source for g in accepted if rustc_errors(crate_of([g]), folder, cap_lints=True)]
        pytest.fail("rs2gpu accepts kernels that are not Rust:\n" + "\n".join(culprits) + "\n" + errors)
    denied = rustc_errors(source, folder, cap_lints=False)
    if denied is not None:
        for g in accepted:
            lint = rustc_errors(crate_of([g]), folder, cap_lints=False)
            if lint is not None:
                first = next((line for line in lint.splitlines() if line.startswith("error")), lint)
                warnings.warn(RustcDisagreement(f"{first}: `{g.expression}`"), stacklevel=1)


def kernels_renamed(generated, name: str):
    return replace(generated, source=generated.source.replace("fuzzed", name))


# ---------------------------------------------------------------- (c) garbage and truncated files

@fuzz_settings(max_examples=300)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300))
def test_random_text(source: str) -> None:
    assert_translates_or_diagnoses(source)


RUST_ALPHABET = "fnletmuti0123456789 \n\t{}()[]<>;:,.=+-*/%&|^!#'\"_rs@?$~\\" + "ƒ中\u2028\r\x0c\x00"


@fuzz_settings(max_examples=300)
@given(st.lists(st.sampled_from(RUST_TOKENS + list(RUST_ALPHABET)), max_size=80).map(" ".join))
def test_random_token_soup(source: str) -> None:
    assert_translates_or_diagnoses(source)


@fuzz_settings(max_examples=300)
@given(st.integers(0, len(UNITS) - 1), st.floats(0.0, 1.0))
def test_truncated_units(which: int, fraction: float) -> None:
    unit = UNITS[which]
    assert_translates_or_diagnoses(unit[: int(len(unit) * fraction)])


@fuzz_settings(max_examples=200)
@given(st.integers(0, len(UNITS) - 1), st.floats(0.0, 1.0), st.binary(min_size=1, max_size=8))
def test_bytes_spliced_into_files(tmp_path_factory, which: int, fraction: float, garbage: bytes) -> None:
    """A file on disk with arbitrary bytes in it (often not UTF-8): the path-based pipeline of
    `rs2gpu check` / `translate` must answer with diagnostics too."""
    data = UNITS[which].encode("utf-8")
    cut = int(len(data) * fraction)
    path = tmp_path_factory.mktemp("bytes") / "lib.rs"
    path.write_bytes(data[:cut] + garbage + data[cut:])
    try:
        translate(path)
    except CompileFailed as failed:
        assert any(d.severity == "error" for d in failed.diagnostics)
        for d in failed.diagnostics:
            check_diagnostic(d, failed.sources)


def test_corpus_files_check_through_the_path_pipeline() -> None:
    for path in CORPUS_FILES:
        check(path)
