"""`rs2gpu.load()` before any kernel runs: the paths it takes (the command line's, on every backend), what
`backend="auto"` says when it falls back to the cpu backend, and what the module it returns shows of
itself."""
from __future__ import annotations

import re
import sys
import types
import warnings
from pathlib import Path

import pytest

import rs2gpu

from tests.support.paths import REPO

EVERY_BACKEND = ("cpu", "cuda", "hip", "auto")


@pytest.mark.parametrize("backend", EVERY_BACKEND)
def test_a_missing_path_is_not_found(tmp_path: Path, backend: str) -> None:
    missing = tmp_path / "no-such-crate"
    with pytest.raises(FileNotFoundError, match=f"^no such file or directory: {re.escape(str(missing))}$"):
        rs2gpu.load(missing, backend=backend)


@pytest.mark.parametrize("backend", EVERY_BACKEND)
def test_an_empty_folder_has_no_kernels_to_load(tmp_path: Path, backend: str) -> None:
    with pytest.raises(ValueError, match=f"^no .rs files under {re.escape(str(tmp_path))}$"):
        rs2gpu.load(tmp_path, backend=backend)


@pytest.mark.parametrize("backend", EVERY_BACKEND)
def test_a_folder_of_rust_files_outside_a_crate_is_refused(tmp_path: Path, backend: str) -> None:
    (tmp_path / "k.rs").write_text("pub fn f() {}\n")
    with pytest.raises(ValueError, match=f"^{re.escape(str(tmp_path))} has no Cargo.toml: name a crate's folder"):
        rs2gpu.load(tmp_path, backend=backend)


@pytest.mark.parametrize("backend", EVERY_BACKEND)
def test_a_file_that_is_not_rust_is_refused(tmp_path: Path, backend: str) -> None:
    (tmp_path / "k.py").write_text("")
    with pytest.raises(ValueError, match=f"^{re.escape(str(tmp_path / 'k.py'))} is not a .rs file$"):
        rs2gpu.load(tmp_path / "k.py", backend=backend)


def fallback_warning(lone_file: Path, monkeypatch, cupy) -> str:
    """The warning `backend="auto"` gives, with `cupy` (None: not installed) where it imports cupy."""
    monkeypatch.delenv("RS2GPU_BACKEND", raising=False)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    with pytest.warns(RuntimeWarning) as caught:
        module = rs2gpu.load(lone_file, backend="auto")
    assert module.backend == "cpu"
    assert len(caught) == 1 and caught[0].filename == __file__  # it points at the caller's line
    return str(caught[0].message)


def fake_cupy(count) -> types.ModuleType:
    """A cupy whose `getDeviceCount()` returns `count`, or raises it where it is an exception."""
    def device_count() -> int:
        if isinstance(count, Exception):
            raise count
        return count

    module = types.ModuleType("cupy")
    module.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=device_count))
    return module


def test_auto_without_cupy_falls_back_to_cpu_saying_why(kernel_cache, lone_file: Path, monkeypatch) -> None:
    message = fallback_warning(lone_file, monkeypatch, None)
    assert message.startswith("rs2gpu.load(backend='auto') runs the kernels on the cpu backend (the Rust code, "
                              "built by rustc): cupy is not installed (pip install 'rs2gpu[cuda]'")


def test_auto_without_a_cuda_device_falls_back_to_cpu_saying_why(kernel_cache, lone_file: Path, monkeypatch) -> None:
    message = fallback_warning(lone_file, monkeypatch, fake_cupy(RuntimeError("no CUDA-capable device is detected")))
    assert "cupy finds no usable CUDA device (RuntimeError: no CUDA-capable device is detected)" in message


def test_auto_asked_for_a_device_beyond_the_last_falls_back_saying_so(kernel_cache, lone_file: Path,
                                                                       monkeypatch) -> None:
    message = fallback_warning(lone_file, monkeypatch, fake_cupy(0))
    assert "cupy finds 0 CUDA device(s), so there is no device 0" in message


def test_auto_set_to_cpu_by_the_environment_says_nothing(kernel_cache, lone_file: Path, monkeypatch) -> None:
    monkeypatch.setenv("RS2GPU_BACKEND", "cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rs2gpu.load(lone_file, backend="auto").backend == "cpu"


def test_the_module_names_its_crate_backend_and_kernels(kernel_cache, lone_file: Path) -> None:
    module = rs2gpu.load(lone_file, backend="cpu")
    assert repr(module) == "<rs2gpu kernels of `saxpy` on the cpu backend: saxpy>"


def test_numpy_is_a_dependency_of_the_base_install() -> None:
    # every call's arguments go through numpy, on every backend
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert any(requirement.split(">")[0].split("=")[0].strip() == "numpy" for requirement in project["dependencies"])
