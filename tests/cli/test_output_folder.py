"""`rs2gpu translate -o DIR` into a folder that an earlier translation wrote: the folder ends up holding this
translation's files, and rs2gpu removes only what it wrote itself, recognised by the earlier run's
manifest.json or by the header on a generated file's first line, which names the file's kernel."""
from __future__ import annotations

import json
from pathlib import Path

from tests.cli.running import no_traceback, rs2gpu, write_crate

KEPT = """\
#[kernel]
pub fn kept(a: &mut [f64]) {
    for i in 0..a.len() {
        a[i] = 2.0 * a[i];
    }
}
"""

DROPPED = """
#[kernel]
pub fn dropped(a: &mut [f64]) {
    for i in 0..a.len() {
        a[i] = a[i] + 1.0;
    }
}
"""

KEPT_FILES = {"kept.cu", "kept.hip.cpp", "manifest.json"}
DROPPED_FILES = {"dropped.cu", "dropped.hip.cpp"}


def translate_both_then_one(tmp_path: Path, between=lambda out: None):
    """Translate a crate of `kept` and `dropped` into one folder, call `between(folder)`, then translate the
    crate again with `dropped` deleted from its source."""
    crate = write_crate(tmp_path / "crate", KEPT + DROPPED)
    out = tmp_path / "out"
    first = rs2gpu("translate", crate, "-o", out)
    assert first.returncode == 0, first.stderr
    assert {p.name for p in out.iterdir()} == KEPT_FILES | DROPPED_FILES
    between(out)
    (crate / "src" / "lib.rs").write_text(KEPT)
    second = rs2gpu("translate", crate, "-o", out)
    assert second.returncode == 0, second.stderr
    no_traceback(second)
    return out, second


def test_files_the_earlier_manifest_names_are_removed_when_this_translation_does_not_write_them(
        tmp_path: Path) -> None:
    # an older rs2gpu wrote other headers: the manifest alone says the file is rs2gpu's
    out, result = translate_both_then_one(tmp_path, lambda out: (out / "dropped.cu").write_text("// older\n"))
    assert {p.name for p in out.iterdir()} == KEPT_FILES
    assert "Removed dropped.cu, dropped.hip.cpp: written by an earlier translation, not by this one" in result.stdout
    assert sorted(json.loads((out / "manifest.json").read_text())["kernels"]) == ["kept"]


def test_generated_files_are_recognised_by_their_header_without_a_manifest(tmp_path: Path) -> None:
    out, _ = translate_both_then_one(tmp_path, lambda out: (out / "manifest.json").unlink())
    assert {p.name for p in out.iterdir()} == KEPT_FILES


def test_files_that_are_not_rs2gpus_stay(tmp_path: Path) -> None:
    def add_users_files(out: Path) -> None:
        (out / "notes.txt").write_text("mine")
        (out / "mine.cu").write_text("// my own kernel\n")
        # a copy under another name: its header names `dropped`, whose files are dropped.cu and dropped.hip.cpp
        (out / "dropped_by_hand.cu").write_text((out / "dropped.cu").read_text())
        (tmp_path / "outside.cu").write_text("// next to the folder\n")
        manifest = json.loads((out / "manifest.json").read_text())
        manifest["kernels"]["dropped"]["files"]["cuda"] = "../outside.cu"
        (out / "manifest.json").write_text(json.dumps(manifest))

    out, _ = translate_both_then_one(tmp_path, add_users_files)
    assert {p.name for p in out.iterdir()} == KEPT_FILES | {"notes.txt", "mine.cu", "dropped_by_hand.cu"}
    assert (tmp_path / "outside.cu").read_text() == "// next to the folder\n"


def test_a_failed_translation_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    crate = write_crate(tmp_path / "crate", KEPT + DROPPED)
    out = tmp_path / "out"
    assert rs2gpu("translate", crate, "-o", out, "-q").returncode == 0
    before = {p.name: p.read_text() for p in out.iterdir()}
    (crate / "src" / "lib.rs").write_text(KEPT.replace("a[i] = 2.0 * a[i]", "a[0] = a[i]"))  # a race
    assert rs2gpu("translate", crate, "-o", out).returncode == 1
    assert {p.name: p.read_text() for p in out.iterdir()} == before


def test_a_file_that_already_holds_its_text_is_left_as_it_is_and_a_changed_one_is_rewritten(tmp_path: Path) -> None:
    crate = write_crate(tmp_path / "crate", KEPT + DROPPED)
    out = tmp_path / "out"
    assert rs2gpu("translate", crate, "-o", out).returncode == 0
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    (crate / "src" / "lib.rs").write_text(KEPT + DROPPED.replace("1.0", "3.0"))
    assert rs2gpu("translate", crate, "-o", out).returncode == 0
    after = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    assert after.keys() == before.keys()
    # the literal is in the kernel's C++ only: its arguments, launches and places, which manifest.json
    # describes, are the same
    assert {name for name in after if after[name] != before[name]} == DROPPED_FILES
