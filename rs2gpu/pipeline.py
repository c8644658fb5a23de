"""The translation pipeline, one named step per room: parse and lower → check → emit.

Each step returns new data; a step that reported an error stops the pipeline with `CompileFailed`,
which carries every diagnostic found so far and the source texts needed to render them.
"""
from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rs2gpu.checker import check_crate
from rs2gpu.emit import EmittedCrate, emit_crate
from rs2gpu.frontend import lower_path
from rs2gpu.frontend.generics import is_open
from rs2gpu.ir.diagnostics import CompileFailed, Diagnostic
from rs2gpu.ir.nodes import Crate
from rs2gpu.ir.plan import CheckedCrate

ALL_TARGETS = ("cuda", "hip")


@dataclass
class Translation:
    crate: Crate
    checked: CheckedCrate
    emitted: EmittedCrate | None
    warnings: list[Diagnostic] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def _timed(seconds: dict, step: str, fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    seconds[step] = time.perf_counter() - start
    return result


def check(path: Path, instances: dict[str, list[tuple[str, ...]]] | None = None) -> Translation:
    """Lower and check every kernel under `path`; raise CompileFailed on any error. `instances` names, by
    kernel, the instantiations to make of generic kernels without `types(...)`; each kernel it does not
    name is checked once for all the types its bounds admit, and has no code."""
    seconds: dict[str, float] = {}
    crate, lowered = _timed(seconds, "frontend", lower_path, Path(path), instances)
    # Each instantiation of a generic kernel is lowered and checked on its own: one problem of its
    # source is reported once.
    diagnostics = list(dict.fromkeys(lowered.items))
    if lowered.has_errors:
        raise CompileFailed(diagnostics, crate.sources)
    checked, checks = _timed(seconds, "checker", check_crate, crate)
    diagnostics += [d for d in dict.fromkeys(checks.items) if d not in diagnostics]
    if checks.has_errors:
        raise CompileFailed(diagnostics, crate.sources)
    return Translation(crate, checked, None, [d for d in diagnostics if d.severity == "warning"], seconds)


def translate(path: Path, targets: tuple[str, ...] = ALL_TARGETS,
              instances: dict[str, list[tuple[str, ...]]] | None = None) -> Translation:
    """Everything `rs2gpu translate` does except writing files (`instances` as for `check`)."""
    from rs2gpu import __version__

    result = check(path, instances)
    instantiated = dataclasses.replace(result.checked, kernels=tuple(
        plan for plan in result.checked.kernels if not is_open(plan.function)))
    result.emitted = _timed(result.seconds, "emit", emit_crate, instantiated, targets, __version__)
    return result


def write_outputs(emitted: EmittedCrate, out_dir: Path) -> list[Path]:
    """Write the generated files and manifest.json. Each file is written to a temporary name and
    renamed into place, so an interrupted run never leaves a half-written file behind."""
    out_dir.mkdir(parents=True, exist_ok=True)
    contents = dict(emitted.files)
    contents["manifest.json"] = json.dumps(emitted.abi.to_json(), indent=2, sort_keys=False) + "\n"
    written = []
    for name, text in contents.items():
        target = out_dir / name
        fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        written.append(target)
    return written
