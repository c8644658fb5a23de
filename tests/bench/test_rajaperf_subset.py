"""bench/rajaperf_subset.py cuts RAJAPerf down to the kernels bench/rust-reps times."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.rajaperf import BUILT_KERNELS
from bench.rajaperf_subset import cut_factory, cut_group, cut_top

FACTORY = """    case Basic_DAXPY : {
       kernel = new basic::DAXPY(run_params);
       break;
    }
    case Basic_COPY8 : {
       kernel = new basic::COPY8(run_params);
       break;
    }
"""

GROUP = """blt_add_library(
  NAME basic
  SOURCES COPY8.cpp
          COPY8-Seq.cpp
          DAXPY.cpp
          DAXPY-Seq.cpp
          DAXPY-Hip.cpp
          DAXPY-Cuda.cpp
          DAXPY-OMP.cpp
          BasicData.cpp
  DEPENDS_ON common ${RAJA_PERFSUITE_DEPENDS}
  )
"""


def test_the_kernels_built_are_the_ones_the_rust_binary_times():
    main = Path(__file__).resolve().parents[2] / "bench/rust-reps/src/main.rs"
    listed = re.search(r"const KERNELS: \[&str; \d+\] = \[(.*?)\];", main.read_text(), re.S).group(1)
    assert tuple(re.findall(r'"(\w+)"', listed)) == BUILT_KERNELS


def test_the_factory_builds_nothing_for_a_kernel_left_out():
    text, every = cut_factory(FACTORY, {"DAXPY"})
    assert every == {"DAXPY", "COPY8"}
    assert "kernel = new basic::DAXPY(run_params);" in text
    assert "kernel = nullptr;" in text and "COPY8(run_params)" not in text


def test_a_kernel_rajaperf_does_not_have_is_an_error():
    with pytest.raises(SystemExit, match="no kernel NOT_THERE"):
        cut_factory(FACTORY, {"DAXPY", "NOT_THERE"})


def test_a_group_keeps_the_kept_kernels_sequential_and_cuda_files_and_its_helpers():
    text = cut_group(GROUP, {"DAXPY"}, {"DAXPY", "COPY8"})
    sources = re.findall(r"[\w-]+\.cpp", text)
    assert sources == ["DAXPY.cpp", "DAXPY-Seq.cpp", "DAXPY-Cuda.cpp", "BasicData.cpp"]
    assert "  SOURCES\n" in text  # the keyword stays where its line's file went


def test_the_groups_without_kept_kernels_are_not_built():
    top = ("add_subdirectory(common)\nadd_subdirectory(basic)\nadd_subdirectory(polybench)\n"
           "add_subdirectory(comm)\n\nset(RAJA_PERFSUITE_LIBS\n    common\n    basic\n    polybench\n    comm)\n")
    assert cut_top(top) == ("add_subdirectory(common)\nadd_subdirectory(basic)\n\n"
                            "set(RAJA_PERFSUITE_LIBS\n    common\n    basic)\n")
