"""The disk cache of compiled kernels: entries survive between processes, are written atomically, and a
damaged entry is a miss, never a wrong binary. The CUDA compile path uses it, so a second process
compiling the same generated kernel finds the cubin without running NVRTC (no GPU is needed for that).
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from rs2gpu import config, pipeline
from rs2gpu.runtime import cache as cache_module
from rs2gpu.runtime.cache import BinaryCache, cache_key, replace_atomically
from rs2gpu.runtime.nvrtc import cached_compile_cuda, compile_cuda, cubin_symbols, cuda_cache_key

REPO = Path(__file__).resolve().parents[2]
KEY = cache_key("test", "entry")


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def entry_path(root: Path, key: str) -> Path:
    # the one file a put leaves behind
    (path,) = [root / p for p in files_under(root)]
    assert key in path.name
    return path


# ---------------------------------------------------------------- keys


def test_key_depends_on_every_part() -> None:
    assert cache_key("cuda", "source a") != cache_key("cuda", "source b")


def test_key_separates_its_parts() -> None:
    # ("ab", "c") and ("a", "bc") are different inputs, though their concatenations are equal
    assert cache_key("ab", "c") != cache_key("a", "bc")


def test_key_of_text_equals_key_of_its_utf8_bytes() -> None:
    assert cache_key("é") == cache_key("é".encode())


# ---------------------------------------------------------------- entries


def test_put_then_get_returns_the_same_bytes(tmp_path: Path) -> None:
    cache = BinaryCache(tmp_path)
    cache.put(KEY, b"\x7fELF binary")
    assert cache.get(KEY) == b"\x7fELF binary"
    assert (cache.hits, cache.misses) == (1, 0)


def test_another_cache_on_the_same_folder_sees_the_entry(tmp_path: Path) -> None:
    BinaryCache(tmp_path).put(KEY, b"shared")
    assert BinaryCache(tmp_path).get(KEY) == b"shared"


def test_empty_binary_round_trips(tmp_path: Path) -> None:
    cache = BinaryCache(tmp_path)
    cache.put(KEY, b"")
    assert cache.get(KEY) == b""


def test_put_replaces_an_older_entry(tmp_path: Path) -> None:
    cache = BinaryCache(tmp_path)
    cache.put(KEY, b"old")
    cache.put(KEY, b"new")
    assert cache.get(KEY) == b"new"
    assert len(files_under(tmp_path)) == 1


def test_put_leaves_no_temporary_file(tmp_path: Path) -> None:
    BinaryCache(tmp_path).put(KEY, b"data")
    assert len(files_under(tmp_path)) == 1


def test_failed_put_raises_nothing_and_leaves_no_temporary_file(tmp_path: Path, monkeypatch) -> None:
    # e.g. a full disk: the next process compiles again, nothing worse
    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_module.os, "replace", fail)
    cache = BinaryCache(tmp_path)
    cache.put(KEY, b"data")
    assert files_under(tmp_path) == []
    assert cache.get(KEY) is None


def test_a_file_replaced_atomically_holds_the_new_bytes_alone(tmp_path: Path) -> None:
    target = tmp_path / "lib.rs"
    target.write_bytes(b"an older and longer text")
    replace_atomically(target, b"new")
    assert target.read_bytes() == b"new"
    assert files_under(tmp_path) == ["lib.rs"]


def test_a_failed_atomic_replace_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch) -> None:
    def fail(src, dst):
        raise OSError(28, "No space left on device")

    target = tmp_path / "Cargo.toml"
    target.write_bytes(b"old")
    monkeypatch.setattr(cache_module.os, "replace", fail)
    with pytest.raises(OSError):
        replace_atomically(target, b"new")
    assert target.read_bytes() == b"old"
    assert files_under(tmp_path) == ["Cargo.toml"]


def test_missing_entry_is_a_miss(tmp_path: Path) -> None:
    cache = BinaryCache(tmp_path)
    assert cache.get(KEY) is None
    assert (cache.hits, cache.misses) == (0, 1)


def test_entry_with_a_flipped_byte_is_a_miss(tmp_path: Path) -> None:
    cache = BinaryCache(tmp_path)
    cache.put(KEY, b"\x7fELF binary")
    path = entry_path(tmp_path, KEY)
    data = bytearray(path.read_bytes())
    data[2] ^= 0x01
    path.write_bytes(bytes(data))
    assert cache.get(KEY) is None


def test_truncated_entry_is_a_miss(tmp_path: Path) -> None:
    cache = BinaryCache(tmp_path)
    cache.put(KEY, b"\x7fELF binary" * 100)
    path = entry_path(tmp_path, KEY)
    path.write_bytes(path.read_bytes()[:500])
    assert cache.get(KEY) is None


def test_empty_entry_file_is_a_miss(tmp_path: Path) -> None:
    cache = BinaryCache(tmp_path)
    cache.put(KEY, b"data")
    entry_path(tmp_path, KEY).write_bytes(b"")
    assert cache.get(KEY) is None


def test_unreadable_entry_is_a_miss(tmp_path: Path) -> None:
    cache = BinaryCache(tmp_path)
    cache.put(KEY, b"data")
    path = entry_path(tmp_path, KEY)
    path.unlink()
    path.mkdir()  # reading a directory fails with an OSError on every platform, even as root
    assert cache.get(KEY) is None


def test_cache_without_a_folder_stores_nothing(tmp_path: Path) -> None:
    cache = BinaryCache(None)
    cache.put(KEY, b"data")
    assert cache.get(KEY) is None
    assert cache.misses == 1


# ---------------------------------------------------------------- where the cache lives


def test_cache_dir_setting_off_disables_the_cache(monkeypatch) -> None:
    monkeypatch.setenv("RS2GPU_CACHE_DIR", "off")
    assert config.cache_dir() is None


def test_cache_dir_setting_names_the_folder(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RS2GPU_CACHE_DIR", str(tmp_path))
    assert config.cache_dir() == tmp_path


def test_cache_dir_defaults_to_xdg_cache_home(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("RS2GPU_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert config.cache_dir() == tmp_path / "rs2gpu"


# ---------------------------------------------------------------- the CUDA compile path


@pytest.fixture(scope="module")
def generated_triad() -> tuple[str, str, str]:
    """The CUDA C++ rs2gpu generates for the example crate's `triad`, its file name, and its launch symbol."""
    emitted = pipeline.translate(REPO / "examples" / "rajaperf", ("cuda",)).emitted
    kernel = emitted.abi.kernels["triad"]
    name = kernel.files["cuda"]
    return emitted.files[name], name, kernel.launches[0].general.symbol


def test_generated_kernel_compiles_to_a_cubin_with_its_launch_symbol(generated_triad) -> None:
    source, name, symbol = generated_triad
    binary = compile_cuda(source, name, "sm_90").binary
    assert symbol in cubin_symbols(binary)


def test_first_compile_runs_nvrtc_and_the_second_finds_the_cubin(tmp_path: Path, generated_triad) -> None:
    source, name, symbol = generated_triad
    cache = BinaryCache(tmp_path)
    first, compiled_first = cached_compile_cuda(cache, source, name, "sm_90")
    second, compiled_second = cached_compile_cuda(cache, source, name, "sm_90")
    assert (compiled_first, compiled_second) == (True, False)
    assert second == first and symbol in cubin_symbols(second)


def test_cache_key_depends_on_arch_and_fast_math(generated_triad) -> None:
    source = generated_triad[0]
    keys = {cuda_cache_key(source, "sm_90", False), cuda_cache_key(source, "sm_90", True),
            cuda_cache_key(source, "sm_80", False)}
    assert len(keys) == 3


def test_cuda_backend_compile_uses_the_disk_cache(tmp_path: Path, generated_triad) -> None:
    # CudaBackend.compile needs no device for this: only its cache, arch and counter
    from rs2gpu.runtime.cuda import CudaBackend

    source, name, _ = generated_triad
    backend = types.SimpleNamespace(cache=BinaryCache(tmp_path), arch="sm_90", compiles=0)
    first = CudaBackend.compile(backend, source, name, False)
    second = CudaBackend.compile(backend, source, name, False)
    assert second == first and backend.compiles == 1


SECOND_PROCESS = """
import hashlib, json, sys
from rs2gpu.runtime import nvrtc
from rs2gpu.runtime.cache import BinaryCache

def no_nvrtc(*args, **kwargs):
    raise AssertionError("NVRTC was called although the cubin is in the cache")

nvrtc.compile_cuda = no_nvrtc
source, name, root = json.loads(sys.stdin.read())
binary, compiled = nvrtc.cached_compile_cuda(BinaryCache(root), source, name, "sm_90")
print(json.dumps({"compiled": compiled, "sha256": hashlib.sha256(binary).hexdigest()}))
"""


def test_a_second_process_finds_the_cubin_without_nvrtc(tmp_path: Path, generated_triad) -> None:
    source, name, _ = generated_triad
    binary, compiled = cached_compile_cuda(BinaryCache(tmp_path), source, name, "sm_90")
    assert compiled
    done = subprocess.run([sys.executable, "-c", SECOND_PROCESS], input=json.dumps([source, name, str(tmp_path)]),
                          capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"compiled": False, "sha256": hashlib.sha256(binary).hexdigest()}
