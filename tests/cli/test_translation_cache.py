"""The translation cache (`rs2gpu.incremental`): what it gives is what a fresh translation gives, and it
translates again exactly the kernels whose inputs changed.

The expected files are those of the translation without a cache (`pipeline.translate` and its manifest),
which the cache must reproduce byte for byte; the expected diagnostics are those that translation raises.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rs2gpu import incremental, pipeline
from rs2gpu.ir.diagnostics import CompileFailed

from tests.cli.running import rs2gpu, write_crate

# `scale` and `shift` call the helper `smooth`; `copy` calls nothing.
CRATE = """\
pub const GAIN: f64 = 2.0;

fn smooth(x: f64) -> f64 {
    if x > 1.0 {
        x.sqrt()
    } else {
        x * 0.5
    }
}

#[kernel]
pub fn scale(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        out[i] = GAIN * smooth(a[i]);
    }
}

#[kernel]
pub fn shift(out: &mut [f64], a: &[f64], s: f64) {
    for i in 0..out.len() {
        out[i] = smooth(a[i]) + s;
    }
}

#[kernel]
pub fn copy(out: &mut [f32], a: &[f32]) {
    for i in 0..out.len() {
        out[i] = a[i];
    }
}
"""

RACY = """
#[kernel]
pub fn racy(a: &mut [f64]) {
    for i in 0..a.len() - 1 {
        a[i] = a[i + 1];
    }
}
"""


def fresh_files(path: Path) -> dict[str, str]:
    """What `rs2gpu translate` writes, from the translation without a cache."""
    emitted = pipeline.translate(path).emitted
    return {**emitted.files, pipeline.MANIFEST: pipeline.manifest_text(emitted.abi)}


@pytest.fixture
def crate(tmp_path: Path) -> Path:
    return write_crate(tmp_path / "crate", CRATE)


def edit(crate: Path, old: str, new: str) -> None:
    lib = crate / "src" / "lib.rs"
    text = lib.read_text()
    assert text.count(old) == 1
    lib.write_text(text.replace(old, new))


def test_a_first_translation_translates_every_kernel_and_gives_the_fresh_files(crate: Path, tmp_path: Path) -> None:
    result = incremental.translate(crate, cache_root=tmp_path / "cache")
    assert sorted(result.translated) == ["copy", "scale", "shift"]
    assert result.files == fresh_files(crate)


def test_an_unchanged_crate_comes_from_the_cache_with_the_same_files(crate: Path, tmp_path: Path) -> None:
    first = incremental.translate(crate, cache_root=tmp_path / "cache")
    again = incremental.translate(crate, cache_root=tmp_path / "cache")
    assert again.translated == []
    assert again.files == first.files == fresh_files(crate)
    assert again.kernels == first.kernels


def test_editing_a_helper_translates_again_both_kernels_that_call_it(crate: Path, tmp_path: Path) -> None:
    incremental.translate(crate, cache_root=tmp_path / "cache")
    edit(crate, "x * 0.5", "x * 0.25")
    result = incremental.translate(crate, cache_root=tmp_path / "cache")
    assert sorted(result.translated) == ["scale", "shift"]
    assert result.files == fresh_files(crate)


def test_editing_one_kernel_translates_again_only_that_kernel(crate: Path, tmp_path: Path) -> None:
    incremental.translate(crate, cache_root=tmp_path / "cache")
    edit(crate, "smooth(a[i]) + s", "smooth(a[i]) - s")
    result = incremental.translate(crate, cache_root=tmp_path / "cache")
    assert result.translated == ["shift"]
    assert result.files == fresh_files(crate)


def test_the_first_caller_of_a_helper_ceasing_to_call_it_leaves_the_other_caller_as_a_fresh_translation(
        crate: Path, tmp_path: Path) -> None:
    """The helper is then lowered while lowering `shift`, not `scale`: `shift`'s entry must still be right."""
    incremental.translate(crate, cache_root=tmp_path / "cache")
    edit(crate, "GAIN * smooth(a[i])", "GAIN * a[i]")
    result = incremental.translate(crate, cache_root=tmp_path / "cache")
    assert result.translated == ["scale"]
    assert result.files == fresh_files(crate)


def test_editing_a_const_translates_every_kernel_again(crate: Path, tmp_path: Path) -> None:
    """Every kernel's file defines the crate's consts."""
    incremental.translate(crate, cache_root=tmp_path / "cache")
    edit(crate, "GAIN: f64 = 2.0", "GAIN: f64 = 3.0")
    result = incremental.translate(crate, cache_root=tmp_path / "cache")
    assert sorted(result.translated) == ["copy", "scale", "shift"]
    assert result.files == fresh_files(crate)


def test_a_kernel_moved_by_lines_added_above_it_names_its_new_place(crate: Path, tmp_path: Path) -> None:
    incremental.translate(crate, cache_root=tmp_path / "cache")
    edit(crate, "#[kernel]\npub fn copy", "// copies\n// element by element\n#[kernel]\npub fn copy")
    result = incremental.translate(crate, cache_root=tmp_path / "cache")
    assert result.files == fresh_files(crate)


def test_corrupt_or_truncated_entries_are_misses_that_give_the_fresh_files(crate: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    incremental.translate(crate, cache_root=cache)
    entries = sorted(p for p in cache.rglob("*") if p.is_file())
    assert entries
    for k, entry in enumerate(entries):
        data = bytearray(entry.read_bytes())
        if k % 2:
            data[len(data) // 2] ^= 0xFF
            entry.write_bytes(bytes(data))
        else:
            entry.write_bytes(bytes(data[:len(data) // 3]))
    result = incremental.translate(crate, cache_root=cache)
    assert sorted(result.translated) == ["copy", "scale", "shift"]
    assert result.files == fresh_files(crate)


def test_a_crate_with_errors_reports_its_diagnostics_on_every_translation(crate: Path, tmp_path: Path) -> None:
    edit(crate, "#[kernel]\npub fn copy", RACY.strip() + "\n\n#[kernel]\npub fn copy")
    with pytest.raises(CompileFailed) as fresh:
        pipeline.translate(crate)
    for _ in range(2):
        with pytest.raises(CompileFailed) as cached:
            incremental.translate(crate, cache_root=tmp_path / "cache")
        assert cached.value.diagnostics == fresh.value.diagnostics
        assert [d.code for d in cached.value.diagnostics if d.severity == "error"]


def test_fixing_the_kernel_with_errors_translates_only_that_kernel(crate: Path, tmp_path: Path) -> None:
    edit(crate, "#[kernel]\npub fn copy", RACY.strip() + "\n\n#[kernel]\npub fn copy")
    with pytest.raises(CompileFailed):
        incremental.translate(crate, cache_root=tmp_path / "cache")
    edit(crate, "a[i] = a[i + 1];", "a[i] = a[i] + 1.0;")
    result = incremental.translate(crate, cache_root=tmp_path / "cache")
    assert result.translated == ["racy"]
    assert result.files == fresh_files(crate)


def test_without_the_cache_nothing_is_read_or_written(crate: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    incremental.translate(crate, cache_root=cache)
    result = incremental.translate(crate, cache_root=cache, use_cache=False)
    assert sorted(result.translated) == ["copy", "scale", "shift"]
    before = {p: p.stat().st_mtime_ns for p in cache.rglob("*")}
    edit(crate, "x * 0.5", "x * 0.75")
    incremental.translate(crate, cache_root=cache, use_cache=False)
    assert {p: p.stat().st_mtime_ns for p in cache.rglob("*")} == before


def test_the_command_keeps_its_cache_in_the_cache_folder_and_no_cache_skips_it(crate: Path, tmp_path: Path,
                                                                               monkeypatch) -> None:
    monkeypatch.setenv("RS2GPU_CACHE_DIR", str(tmp_path / "disk-cache"))
    skipped = rs2gpu("translate", crate, "-o", tmp_path / "out-1", "--no-cache")
    assert skipped.returncode == 0, skipped.stderr
    assert not (tmp_path / "disk-cache" / incremental.CACHE_FOLDER).exists()
    for out in ("out-2", "out-3"):  # the first fills the cache, the second reads it
        result = rs2gpu("translate", crate, "-o", tmp_path / out)
        assert result.returncode == 0, result.stderr
    assert any((tmp_path / "disk-cache" / incremental.CACHE_FOLDER).rglob("*"))
    written = [{p.name: p.read_text() for p in (tmp_path / out).iterdir()} for out in ("out-1", "out-2", "out-3")]
    assert written[0] == written[1] == written[2]


SPREAD = """
import json, sys
from pathlib import Path
from rs2gpu import incremental, workers
result = incremental.translate(Path(sys.argv[1]), cache_root=Path(sys.argv[2]))
json.dump({"processes": workers.last_processes, "files": result.files, "translated": result.translated},
          sys.stdout)
"""


def test_a_crate_of_many_kernels_is_translated_by_a_process_per_core_into_the_same_files(tmp_path: Path) -> None:
    """The corpus's kernels, translated in a process of its own (no other thread: the one kind of process
    that forks workers), a share per core, give the files of one fresh translation."""
    crate = Path(__file__).parents[2] / "examples" / "corpus"
    done = subprocess.run([sys.executable, "-c", SPREAD, str(crate), str(tmp_path / "cache")], capture_output=True,
                          text=True, check=True)
    result = json.loads(done.stdout)
    assert len(result["translated"]) >= 32  # enough to pay for a fork
    assert (result["processes"] > 1) == ((os.cpu_count() or 1) > 1)
    assert result["files"] == fresh_files(crate)
