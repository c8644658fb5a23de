"""bench/rajaperf.py reads RAJAPerf's own reports: the texts below follow RAJAPerf's Executor::writeCSVReport
and Executor::writeKernelInfoSummary (a title line, ` , ` between cells, names padded)."""
from __future__ import annotations

import pytest

from bench.rajaperf import Figures, read_reports, short_name

KERNELS = """Kernels run without MPI
Kernels              , Problem size ,  Reps , Iterations/rep , Kernels/rep , Bytes/rep
Lcals_EOS            ,      1000000 ,   500 ,        1000000 ,           1 ,  32000056
Stream_DOT           ,      1000000 ,  2000 ,        1000000 ,           1 ,  16000016
"""

TIMING = """Min Runtime Report (sec.)  ,  ,  ,  ,
Kernel      , Base_CUDA         , Base_CUDA        , RAJA_CUDA         , RAJA_CUDA
Kernel      , block_256         , blkatm_direct_256 , block_256        , blkatm_direct_256
Lcals_EOS   ,          0.002765 ,          Not run ,          0.002750 ,          Not run
Stream_DOT  ,           Not run ,         2.137440 ,           Not run ,         0.033380
"""


def test_the_group_is_dropped_from_a_kernels_name():
    assert short_name("Basic_INIT_VIEW1D_OFFSET") == "INIT_VIEW1D_OFFSET"


def test_a_rep_loops_seconds_become_microseconds_per_rep():
    # 0.002765 s over 500 reps is 5.53 µs a rep; 0.002750 s is 5.50
    eos = read_reports(TIMING, KERNELS)["EOS"]
    assert eos.reps == 500
    assert eos.base_us == pytest.approx(5.53)
    assert eos.raja_us == pytest.approx(5.50)


def test_a_variant_counts_the_tunings_that_ran():
    # 2.13744 s over 2000 reps is 1068.72 µs; 0.03338 s is 16.69
    dot = read_reports(TIMING, KERNELS)["DOT"]
    assert dot == Figures(2000, pytest.approx(1068.72), "blkatm_direct_256", pytest.approx(16.69))


def test_of_two_tunings_the_faster_counts():
    timing = TIMING.replace("Not run ,          0.002750", "0.002000 ,          0.002750")
    eos = read_reports(timing, KERNELS)["EOS"]
    assert (eos.base_us, eos.base_tuning) == (pytest.approx(4.0), "blkatm_direct_256")


def test_a_variant_that_never_ran_has_no_figure():
    timing = TIMING.replace("0.002750", " Not run")
    assert read_reports(timing, KERNELS)["EOS"].raja_us is None


def stand_in(tmp_path, body: str):
    """An executable in RAJAPerf's place (the real one needs a GPU): it records how it was called."""
    script = tmp_path / "raja-perf.exe"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return script


def test_rajaperf_runs_as_the_anchor_was_measured(tmp_path):
    from bench import rajaperf
    called = tmp_path / "called"
    script = stand_in(tmp_path, f'echo "$CUDA_MODULE_LOADING $*" > {called}\n'
                                f"cat > RAJAPerf-kernels.csv <<'END'\n{KERNELS}END\n"
                                f"cat > RAJAPerf-timing-Minimum.csv <<'END'\n{TIMING}END\n")
    figures = rajaperf.run(script, ["EOS", "DOT"])
    assert figures["EOS"].base_us == pytest.approx(5.53)
    words = called.read_text().split()
    assert words[0] == "EAGER"
    assert " ".join(words[1:5]) == "--npasses 3 --npasses-combiners Minimum"
    assert words[words.index("--variants") + 1:][:2] == ["Base_CUDA", "RAJA_CUDA"]
    assert words[words.index("--kernels") + 1:] == ["EOS", "DOT"]


def test_rajaperf_that_writes_no_report_is_an_error_that_shows_its_output(tmp_path):
    from bench import rajaperf
    script = stand_in(tmp_path, "echo 'Suite will not be run now due to bad input.'\n")
    with pytest.raises(rajaperf.RajaPerfFailed, match="bad input"):
        rajaperf.run(script, ["NOT_A_KERNEL"])


def test_reports_in_another_format_are_an_error_not_a_traceback(tmp_path):
    from bench import rajaperf
    script = stand_in(tmp_path, "echo 'Kernels , Reps' > RAJAPerf-kernels.csv\n"
                                "printf 'title\\nKernel , Base_CUDA\\nKernel , block_256\\nStream_ADD , 0.1\\n'"
                                " > RAJAPerf-timing-Minimum.csv\n")
    with pytest.raises(rajaperf.RajaPerfFailed, match="cannot read the reports"):
        rajaperf.run(script, ["ADD"])  # the kernels report lists no ADD, so its reps are unknown
