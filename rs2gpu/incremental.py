"""Incremental translation: a crate translated before is not translated again, and of a changed crate only
the kernels whose inputs changed are checked and emitted again.

`translate(path, targets)` gives what `rs2gpu translate` writes (every generated file and manifest.json)
with the warnings, through two kinds of entries in the disk cache (`RS2GPU_CACHE_DIR`, `translations/`):

- the crate's, keyed by rs2gpu (its version and its translator's files), the targets and every source file
  (name and bytes): the crate's kernels, each with the key of its own entry, and the warnings. When the
  sources did not change, nothing is parsed or lowered.
- each kernel's, keyed by rs2gpu, the targets, the kernel's text and place, the text and place of every
  helper it calls (directly or not), the text of the crate outside its functions, and what every file of
  the crate shares (the struct and const definitions and the names no local may take): the kernel's files,
  its entry of manifest.json and the checker's warnings about it.

On a miss of the crate's entry the frontend lowers the whole crate; then only the kernels without an entry
are checked and emitted. A place is part of a kernel's key because the generated files name where their
code came from: an edit that moves a kernel (lines added above it) translates it again.

Diagnostics: a kernel with errors is never stored, so a crate with errors is translated afresh each time
and reports every diagnostic as `pipeline.translate` does (the kernels without errors are stored). An entry
that cannot be read back whole (a truncated or corrupt file, a different format) is a miss.
"""
from __future__ import annotations

import json
import pickle
import time
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from rs2gpu import config, pipeline, workers
from rs2gpu.checker import check_kernel
from rs2gpu.emit import CrateContext, emit_kernel, reachable_helpers, render_prelude
from rs2gpu.emit.dialect import DIALECTS
from rs2gpu.frontend import lower_files
from rs2gpu.frontend.generics import GenericSignature, is_open, open_generics
from rs2gpu.frontend.source import locate_sources, parse_file
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.abi import CrateABI
from rs2gpu.ir.abi_json import json_text
from rs2gpu.ir.diagnostics import CompileFailed, Diagnostic, DiagnosticSink
from rs2gpu.ir.plan import CheckedCrate
from rs2gpu.runtime.cache import cache_key, replace_atomically

CACHE_FOLDER = "translations"
_FORMAT = b"rs2gpu-translation-2\n"


@dataclass
class Translated:
    """What a translation writes, and what it reports."""

    crate: str
    sources: dict[str, str]              # file name → text, to render the warnings
    files: dict[str, str]                # every generated file, manifest.json included: name → text
    kernels: dict[str, tuple[int, tuple[str, ...]]]  # kernel → (launches, its files), in the manifest's order
    warnings: list[Diagnostic]
    open_generics: list[GenericSignature]  # the generic kernels without `types(...)`: checked, without code
    translated: list[str] = field(default_factory=list)  # the kernels this call checked (and emitted, if not open)
    seconds: dict[str, float] = field(default_factory=dict)  # by stage, of the stages this call ran


def translate(path: Path, targets: tuple[str, ...] = pipeline.ALL_TARGETS, cache_root: Path | None = None,
              use_cache: bool = True) -> Translated:
    """Translate the crate at `path` through the cache in `cache_root` (default: the disk cache folder's
    `translations/`; none where `RS2GPU_CACHE_DIR=off`); `use_cache=False` neither reads nor writes it.
    Raises CompileFailed as `pipeline.translate` does."""
    if use_cache and cache_root is None:
        base = config.cache_dir()
        cache_root = base / CACHE_FOLDER if base is not None else None
    store = _Store(cache_root if use_cache else None)
    name, located = locate_sources(Path(path))
    data = [(display, file.read_bytes()) for display, file in located]
    sources = {display: raw.decode("utf-8", errors="replace") for display, raw in data}
    crate_key = cache_key(_translator_digest(), repr(targets), name,
                          *(part for display, raw in data for part in (display, raw)))
    cached = _from_crate_entry(store, crate_key, name, sources, targets)
    if cached is not None:
        return cached
    with pipeline.collector_paused():
        result, pieces, packed = _translate(store, name, data, sources, targets)
        store.put(crate_key, {"pieces": pieces, "files": packed, "manifest": result.files[pipeline.MANIFEST],
                              "kernels": result.kernels, "warnings": result.warnings,
                              "open_generics": result.open_generics})
    return result


def _translate(store: _Store, name: str, data: list[tuple[str, bytes]], sources: dict[str, str],
               targets: tuple[str, ...]) -> tuple[Translated, list[str], dict[str, list]]:
    """The translation, the pieces its files share and its files made of them (see `_pack`)."""
    from rs2gpu import __version__

    seconds: dict[str, float] = {}
    start = time.perf_counter()
    crate, lowered = lower_files(name, [parse_file(display, raw) for display, raw in data])
    seconds["frontend"] = time.perf_counter() - start
    # The crate holds the kernels that lowered cleanly: they are checked even where others did not lower,
    # so that one kernel's error hides no other kernel's (as `pipeline.check` does).
    diagnostics = list(dict.fromkeys(lowered.items))
    start = time.perf_counter()
    shared = CrateContext(CheckedCrate(crate, ()))
    functions = {f.name: f for f in crate.functions}
    consts = {c.name: c.value for c in crate.consts}
    common = cache_key(_translator_digest(), repr(targets), _outside_functions(crate), _shared_digest(shared, crate))
    lines = {file: text.split("\n") for file, text in crate.sources.items()}
    # without a store nothing is kept, so the files need no packing (see `_pack`)
    pieces = ([*(render_prelude(DIALECTS[t]) for t in targets), shared.structs, shared.consts]
              if store.root is not None else [])
    items, entries, fresh, misses = [], {}, [], []
    for fn in crate.kernels:
        key = _kernel_key(common, crate, lines, fn)
        entries[fn.name] = (key, store.get(key))
        if entries[fn.name][1] is None:
            misses.append(fn)

    def translate_kernel(fn: ir.Function) -> tuple[list[Diagnostic], dict | None]:
        """The checker's diagnostics of a kernel, and its entry: None where it has errors; without files
        for an open generic kernel (checked for every type its bounds admit, no code)."""
        sink = DiagnosticSink()
        plan = check_kernel(fn, sink, functions, consts)
        if sink.has_errors:
            return sink.items, None
        if is_open(plan.function):
            return sink.items, {"warnings": sink.items}
        return sink.items, _emitted_entry(shared, {"warnings": sink.items, "plan": plan}, targets, __version__,
                                          pieces)
    translated = dict(zip((fn.name for fn in misses), workers.spread(translate_kernel, misses)))
    for fn in crate.kernels:
        key, entry = entries.pop(fn.name)
        if fn.name in translated:
            found, entry = translated[fn.name]
            items += found
            if entry is None:
                continue
            fresh.append(fn.name)
        else:
            items += entry["warnings"]
        entries[fn.name] = (key, entry)
    seconds["checker"] = time.perf_counter() - start  # and the emitter's, for the kernels checked
    diagnostics += [d for d in dict.fromkeys(items) if d not in diagnostics]
    errors = lowered.has_errors or any(d.severity == "error" for d in items)
    for kernel in fresh if not lowered.has_errors else ():
        key, entry = entries[kernel]
        if "files" in entry:  # the kernels without errors are good whatever the others hold, where the
            store.put(key, entry)  # crate's shared items all lowered (their text is in every kernel's key)
    if errors:
        raise CompileFailed(pipeline.in_source_order(diagnostics, crate.sources), crate.sources)
    start = time.perf_counter()
    packed, kernels, manifest = {}, {}, {}
    for kernel, (key, entry) in entries.items():
        if "files" not in entry:  # an open generic kernel: no code
            continue
        packed.update(entry["files"])
        kernels[kernel] = (entry["launches"], tuple(entry["files"]))
        manifest[kernel] = entry["manifest"]
    files = {file: _unpack(segments, pieces) for file, segments in packed.items()}
    files[pipeline.MANIFEST] = _manifest(CrateABI(crate.name, __version__, tuple(targets), {}), manifest)
    seconds["emit"] = time.perf_counter() - start
    warnings = [d for d in diagnostics if d.severity == "warning"]
    translated = Translated(crate.name, sources, files, kernels, warnings, open_generics(crate), fresh, seconds)
    return translated, pieces, packed


def _emitted_entry(shared: CrateContext, checked: dict, targets: tuple[str, ...], version: str,
                   pieces: list[str]) -> dict:
    files, abi = emit_kernel(shared, checked["plan"], targets, version)
    return {"warnings": checked["warnings"], "files": {name: _pack(text, pieces) for name, text in files.items()},
            "launches": len(abi.launches), "manifest": json_text(abi)}


def _from_crate_entry(store: _Store, crate_key: str, name: str, sources: dict[str, str],
                      targets: tuple[str, ...]) -> Translated | None:
    """The translation the crate's entry holds; None if there is none."""
    entry = store.get(crate_key)
    if entry is None:
        return None
    files = {file: _unpack(segments, entry["pieces"]) for file, segments in entry["files"].items()}
    files[pipeline.MANIFEST] = entry["manifest"]
    return Translated(name, sources, files, entry["kernels"], entry["warnings"], entry["open_generics"])


def _pack(text: str, pieces: list[str]) -> list:
    """`text` as a list of its own strings and the indices in `pieces` of the texts it holds, in order:
    every kernel's file holds its dialect's prelude and the crate's struct and const definitions, which
    an entry then stores once (a crate's files are mostly these)."""
    segments, at = [], 0
    for index, piece in enumerate(pieces):
        found = text.find(piece, at) if piece else -1
        if found >= 0:
            segments += [text[at:found], index]
            at = found + len(piece)
    segments.append(text[at:])
    return segments


def _unpack(segments: list, pieces: list[str]) -> str:
    return "".join(pieces[s] if isinstance(s, int) else s for s in segments)


def _manifest(crate_abi: CrateABI, kernels: dict[str, str]) -> str:
    """manifest.json (`pipeline.manifest_text`) of a crate whose kernels' entries are the JSON texts
    `kernels`, each written as `json_text` writes it alone: placed two levels down, where
    the crate's text holds it, each of its lines but the first is indented by four more spaces."""
    text = pipeline.manifest_text(crate_abi)
    if not kernels:
        return text
    placed = ",\n".join(f"    {json.dumps(name)}: " + entry.replace("\n", "\n    ") for name, entry in kernels.items())
    return text.replace('\n  "kernels": {},\n', '\n  "kernels": {\n' + placed + "\n  },\n", 1)


# ------------------------------------------------------------------ keys


@lru_cache(maxsize=1)
def _translator_digest() -> str:
    """rs2gpu's version and the text of every file of its translator (those that upgrading rs2gpu makes
    Cargo build the kernels again for)."""
    from rs2gpu import __version__
    from rs2gpu.cargo import translator_files

    return cache_key(__version__, *(part for file in translator_files() for part in (file.name, file.read_bytes())))


def _span_text(lines: dict[str, list[str]], span: ir.Span) -> str:
    """The text of `span`, from `lines` (each source file's lines)."""
    chosen = lines[span.file][span.line - 1:span.end_line]
    if len(chosen) == 1:
        return chosen[0][span.col - 1:span.end_col - 1]
    return "\n".join([chosen[0][span.col - 1:], *chosen[1:-1], chosen[-1][:span.end_col - 1]])


def _outside_functions(crate: ir.Crate) -> str:
    """The crate's text with the lines of its lowered functions (kernels and helpers) left out: its structs,
    consts, attributes, the helpers no kernel calls, ..., which any kernel may depend on."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for fn in crate.functions:
        spans.setdefault(fn.span.file, []).append((fn.span.line, fn.span.end_line))
    parts = []
    for file, text in sorted(crate.sources.items()):
        lines = text.split("\n")
        for first, last in spans.get(file, ()):
            for i in range(first - 1, last):
                lines[i] = ""
        parts += [file, "\n".join(lines)]
    return cache_key(*parts)


def _shared_digest(shared: CrateContext, crate: ir.Crate) -> str:
    """What every kernel's files share: the struct and const definitions (as written and as the IR holds
    them) and the names no local may take."""
    return cache_key(shared.structs, shared.consts, repr(crate.structs), repr(crate.consts),
                     *sorted(shared.reserved))


def _kernel_key(common: str, crate: ir.Crate, lines: dict[str, list[str]], fn: ir.Function) -> str:
    """`common` (what every kernel depends on) with the name, place and text of the kernel and of every
    helper it calls."""
    parts = [common]
    for f in (fn, *reachable_helpers(crate, fn.body)):
        parts += [f.name, repr(f.span), _span_text(lines, f.span)]
    return cache_key(*parts)


# ------------------------------------------------------------------ storage


class _Store:
    """Entries on disk: written to a temporary file and renamed into place (as runtime/cache.py writes
    binaries), each a format line, the CRC-32 of its data, then the pickled data. A CRC, not a SHA-256: a
    crate's entries hold all of its generated C++, and this check is on the path of every translation."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._folders: set[Path] = set()  # the folders of entries this store made or found

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def get(self, key: str):
        if self.root is None:
            return None
        try:
            raw = self._path(key).read_bytes()
        except OSError:
            return None
        head, data = raw[:len(_FORMAT) + 4], raw[len(_FORMAT) + 4:]
        if head[:len(_FORMAT)] != _FORMAT or int.from_bytes(head[len(_FORMAT):], "little") != zlib.crc32(data):
            return None
        try:
            return pickle.loads(data)
        except Exception:  # data that passed the check but is not this format's: a miss, like any bad entry
            return None

    def put(self, key: str, value) -> None:
        if self.root is None:
            return
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        path = self._path(key)
        try:
            if path.parent not in self._folders:  # a translation puts hundreds of entries in 256 folders
                path.parent.mkdir(parents=True, exist_ok=True)
                self._folders.add(path.parent)
            replace_atomically(path, _FORMAT + zlib.crc32(data).to_bytes(4, "little") + data)
        except OSError:
            pass  # a read-only or full cache folder costs a translation next time, nothing more


__all__ = ["translate", "Translated", "CACHE_FOLDER"]
