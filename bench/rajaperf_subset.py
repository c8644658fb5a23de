"""Cut a copy of RAJAPerf's sources down to the kernels bench/rust-reps times, for bench/build_rajaperf.sh.

RAJAPerf builds about 550 files with nvcc; these kernels need about 80 (5 minutes on two cores). In the
copy, RAJAPerf's kernel factory (`getKernelObject` in src/common/RAJAPerfSuite.cpp) returns null for every
other kernel, and the groups' CMakeLists.txt list only these kernels' sources, with their Base/RAJA
sequential and CUDA variants. The groups with none of them (polybench, algorithm, comm, the Kokkos ones)
are left out. No kernel's source changes. The executable must then be asked only for these kernels
(`--kernels`), as bench/rajaperf.py does.

    python3 bench/rajaperf_subset.py RAJAPERF_COPY
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.rajaperf import BUILT_KERNELS  # noqa: E402

GROUPS_WITH_KERNELS = ("apps", "basic", "lcals", "stream")
GROUPS_WITHOUT = ("basic-kokkos", "lcals-kokkos", "polybench", "stream-kokkos", "algorithm", "comm")
VARIANT_FILES = (None, "Seq", "Cuda")  # KERNEL.cpp, KERNEL-Seq.cpp, KERNEL-Cuda.cpp
CONSTRUCTION = re.compile(r"new \w+::(\w+)\(run_params\)")
SOURCE_LINE = re.compile(r"(\s*(?:SOURCES\s+)?)(\w+?)(?:-(\w+))?\.cpp\s*")


def cut_factory(text: str, keep: set[str]) -> tuple[str, set[str]]:
    """The kernel factory with every other kernel's construction replaced by null, and all kernels' names."""
    every = set(CONSTRUCTION.findall(text))
    missing = keep - every
    if missing:
        raise SystemExit(f"error: RAJAPerf has no kernel {', '.join(sorted(missing))}")
    return CONSTRUCTION.sub(lambda m: m.group(0) if m.group(1) in keep else "nullptr", text), every


def cut_group(text: str, keep: set[str], every: set[str]) -> str:
    """A group's CMakeLists.txt with only the kept kernels' variant files (other files, such as AppsData.cpp,
    stay)."""
    lines = []
    for line in text.splitlines():
        source = SOURCE_LINE.fullmatch(line)
        if source and source.group(2) in every and (source.group(2) not in keep
                                                    or source.group(3) not in VARIANT_FILES):
            if source.group(1).strip():  # the line that opens the list keeps its SOURCES keyword
                lines.append(source.group(1).rstrip())
            continue
        lines.append(line)
    return "\n".join(lines) + "\n"


def cut_top(text: str) -> str:
    for group in GROUPS_WITHOUT:
        text = text.replace(f"add_subdirectory({group})\n", "")
        text = re.sub(rf"\n    {re.escape(group)}(?=[\n)])", "", text, count=1)
    return text


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not (Path(argv[0]) / "src/common/RAJAPerfSuite.cpp").is_file():
        print("usage: python3 bench/rajaperf_subset.py RAJAPERF_COPY (a copy of RAJAPerf's sources)", file=sys.stderr)
        return 2
    src = Path(argv[0]) / "src"
    keep = set(BUILT_KERNELS)
    factory = src / "common/RAJAPerfSuite.cpp"
    text, every = cut_factory(factory.read_text(), keep)
    factory.write_text(text)
    (src / "CMakeLists.txt").write_text(cut_top((src / "CMakeLists.txt").read_text()))
    for group in GROUPS_WITH_KERNELS:
        path = src / group / "CMakeLists.txt"
        path.write_text(cut_group(path.read_text(), keep, every))
    print(f"RAJAPerf cut down to {len(keep)} of its {len(every)} kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
