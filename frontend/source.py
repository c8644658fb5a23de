"""Reading Rust files with tree-sitter, and turning tree-sitter positions into IR spans."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import tree_sitter_rust
from tree_sitter import Language, Node, Parser, Tree

from rs2gpu.ir.nodes import Span


@lru_cache(maxsize=1)
def _parser() -> Parser:
    return Parser(Language(tree_sitter_rust.language()))


@dataclass
class SourceFile:
    """One parsed .rs file. `name` is how diagnostics and `#line` directives refer to it."""

    name: str
    text: str
    tree: Tree
    not_utf8: Span | None = None  # where the first byte that is not UTF-8 was, in a file read from disk

    def span(self, node: Node) -> Span:
        (start_row, start_byte), (end_row, end_byte) = node.start_point, node.end_point
        ascii_rows = self._ascii_rows
        start_col = start_byte + 1 if start_row in ascii_rows else self._col(start_row, start_byte)
        end_col = end_byte + 1 if end_row in ascii_rows else self._col(end_row, end_byte)
        return Span(self.name, start_row + 1, start_col, end_row + 1, end_col)

    def _col(self, row: int, byte_col: int) -> int:
        # tree-sitter columns count bytes; rustc counts characters.
        line = self._lines[row] if row < len(self._lines) else b""
        return len(line[:byte_col].decode("utf-8", errors="replace")) + 1

    def __post_init__(self) -> None:
        self._lines = self.text.encode("utf-8").split(b"\n")
        # On an ASCII line a byte column is a character column; most lines are ASCII.
        self._ascii_rows = frozenset(row for row, line in enumerate(self._lines) if line.isascii())


def parse_text(name: str, text: str) -> SourceFile:
    return SourceFile(name, text, _parser().parse(text.encode("utf-8")))


def read_sources(path: Path) -> tuple[str, list[SourceFile]]:
    """The crate name and parsed files of `path`: a .rs file, a crate's src/ folder, or a crate root."""
    name, located = locate_sources(path)
    return name, [parse_file(display, file.read_bytes()) for display, file in located]


def locate_sources(path: Path) -> tuple[str, list[tuple[str, Path]]]:
    """The crate name and the files of `path` (see `read_sources`), each with the name it is shown by.

    File names are shown relative to the crate root (the folder holding Cargo.toml) when there is
    one, the way cargo prints them, and otherwise relative to the given folder.
    """
    path = path.resolve()
    if path.is_file():
        root = _crate_root(path.parent) or path.parent
        files = [path]
    else:
        root = _crate_root(path) or path
        search = path / "src" if (path / "Cargo.toml").exists() and (path / "src").is_dir() else path
        files = sorted(p for p in search.rglob("*.rs") if "target" not in p.relative_to(search).parts)
    name = _crate_name(root) or (path.stem if path.is_file() else path.name)
    return name, [(_display_name(f, root), f) for f in files]


def parse_file(name: str, data: bytes) -> SourceFile:
    try:
        return parse_text(name, data.decode("utf-8"))
    except UnicodeDecodeError as e:
        # rustc refuses such a file; parse it with U+FFFD for the bad bytes, so the error shows the line.
        before = data[:e.start].decode("utf-8")
        line, col = before.count("\n") + 1, len(before) - before.rfind("\n")
        file = parse_text(name, data.decode("utf-8", errors="replace"))
        file.not_utf8 = Span(name, line, col, line, col + 1)
        return file


def _crate_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / "Cargo.toml").exists():
            return folder
        if folder.name == "src":
            continue
        break
    return None


def _crate_name(root: Path) -> str | None:
    manifest = root / "Cargo.toml"
    if not manifest.exists():
        return None
    in_package = False
    for line in manifest.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("["):
            in_package = line == "[package]"
        elif in_package and line.startswith("name") and "=" in line:
            return line.split("=", 1)[1].strip().strip('"').replace("-", "_")
    return None


def _display_name(file: Path, root: Path) -> str:
    try:
        return file.relative_to(root).as_posix()
    except ValueError:
        return file.name


def text_of(node: Node) -> str:
    return node.text.decode("utf-8")


def crate_location(path: Path) -> tuple[Path | None, str | None, Path | None]:
    """(crate root, Cargo package name, lone file) for a path given to rs2gpu: a path inside a cargo
    crate gives its root and package; a .rs file outside any crate is a lone file."""
    path = Path(path).resolve()
    root = _crate_root(path.parent if path.is_file() else path)
    if root is None:
        return None, None, path if path.is_file() else None
    package = None
    in_package = False
    for line in (root / "Cargo.toml").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("["):
            in_package = line == "[package]"
        elif in_package and line.startswith("name") and "=" in line:
            package = line.split("=", 1)[1].strip().strip('"')
    return root, package, None
