"""Running the `rs2gpu` command as a user runs it: a separate process, without colours, its exit status,
stdout and stderr captured."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def rs2gpu(*args: str, cwd: Path | None = None, **streams) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("CLICOLOR_FORCE", None)
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **streams}
    return subprocess.run([sys.executable, "-m", "rs2gpu.cli", *map(str, args)], text=True, cwd=cwd, env=env,
                          timeout=300, **streams)


def with_closed_pipe(stream: str, *args: str) -> subprocess.CompletedProcess[str]:
    """rs2gpu with `stream` ("stdout" or "stderr") a pipe whose reader is gone, as when `| head` has read
    what it wanted: every write to it fails."""
    read, write = os.pipe()
    os.close(read)
    try:
        return rs2gpu(*args, **{stream: write})
    finally:
        os.close(write)


def write_crate(root: Path, source: str) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text('[package]\nname = "probe"\nversion = "0.1.0"\nedition = "2021"\n')
    (root / "src" / "lib.rs").write_text(source)
    return root


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
