"""The clang that compile_hip_clang picks must be able to link a code object: Debian's clang-N does not
depend on lld-N, so a clang without its lld is passed over (with the reason in the error)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from rs2gpu.runtime.errors import ToolchainUnavailable
from rs2gpu.runtime.hipclang import _has_lld, find_toolchain


def fake_clang(folder: Path, prints: str) -> Path:
    script = folder / "clang++-fake"
    script.write_text(f"#!/bin/sh\necho '{prints}'\n")
    script.chmod(0o755)
    return script


def test_a_clang_without_lld_is_refused_saying_why(tmp_path: Path) -> None:
    clang = fake_clang(tmp_path, "lld")  # what clang prints when it finds no lld
    assert not _has_lld(str(clang))
    with pytest.raises(ToolchainUnavailable, match=r"clang\+\+-fake \(no lld\).*lld-15"):
        find_toolchain.__wrapped__(str(clang))


def test_a_clang_whose_lld_exists_is_accepted(tmp_path: Path) -> None:
    lld = tmp_path / "lld"
    lld.write_text("")
    assert _has_lld(str(fake_clang(tmp_path, str(lld))))


def test_the_toolchain_found_here_links() -> None:
    toolchain = find_toolchain()
    assert _has_lld(toolchain.clang) and os.access(toolchain.clang, os.X_OK)
