"""What the GPU run and the dry run share: the compiled baselines, the translated kernel crate, register
counts, and the versions that go into the results' header."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from bench.kernels import Kernel
from rs2gpu.ir.abi import EntryKind, Launch

ROOT = Path(__file__).resolve().parents[1]
CRATE = ROOT / "examples" / "rajaperf"
BASELINES = ROOT / "bench" / "baselines"


def log(message: str) -> None:
    print(message, flush=True)


def compile_baselines(arch: str) -> tuple[dict[str, bytes], dict[str, str]]:
    """The cubin of every baseline file (NVRTC, rs2gpu's flags), and the errors of those that fail."""
    from rs2gpu.runtime.nvrtc import compile_cuda

    cubins, errors = {}, {}
    for path in sorted(BASELINES.glob("*.cu")):
        try:
            cubins[path.stem] = compile_cuda(path.read_text(encoding="utf-8"), path.name, arch).binary
        except Exception as e:  # noqa: BLE001 - a failing file only loses its own kernels
            errors[path.stem] = f"{type(e).__name__}: {getattr(e, 'log', '') or e}".strip()[:400]
    return cubins, errors


def covered_symbol(launch: Launch, verified_lists: bool = False) -> str:
    """The entry point the table's sizes launch: with `verified_lists`, the proven one where the launch has
    one (the table's zone lists rise and stay in range); else the covering one where the launch has one
    (every count of the table fits it); else the vector one where it has one (the table's arrays are
    whole allocations, aligned, and those loops start at 0)."""
    kinds = ((EntryKind.PROVEN,) if verified_lists else ()) + (EntryKind.COVERING, EntryKind.VECTOR)
    return next((launch.entry(kind) for kind in kinds if launch.entry(kind)), launch.general).symbol


def registers(resources: dict, symbols: list[str]) -> tuple[str, int]:
    found = [resources.get(s) for s in symbols]
    regs = ",".join(str(r.registers) if r else "?" for r in found)
    return regs, max((r.frame_bytes for r in found if r), default=0)


def prepare_corpus(workdir: Path, arch: str):
    from bench import corpus

    try:
        return corpus.prepare(CRATE, workdir, arch, log=log), None
    except Exception as e:  # noqa: BLE001
        return None, f"{type(e).__name__}: {e}".splitlines()[0][:300]


def gen_status(k: Kernel, corpus, corpus_error: str | None) -> str:
    if corpus is None:
        return f"error: the kernel crate could not be translated: {corpus_error}"
    return corpus.status(k.rust)


def rs2gpu_version() -> str:
    try:
        import rs2gpu
        return rs2gpu.__version__
    except Exception:  # noqa: BLE001
        return "?"


def git_commit() -> str:
    """The commit the measured rs2gpu was built from: RS2GPU_BENCH_COMMIT where the checkout's own git
    metadata is not that commit (a copy of the working tree on another machine, see gpu_prepare.sh),
    else the checkout's HEAD, marked when the tree has local changes."""
    if os.environ.get("RS2GPU_BENCH_COMMIT"):
        return os.environ["RS2GPU_BENCH_COMMIT"]
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True,
                               timeout=10).stdout.strip()
        return (head or "no commit") + (" with local changes" if dirty else "")
    except Exception:  # noqa: BLE001
        return "no git"
