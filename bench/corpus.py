"""The benchmark's view of the Rust kernel crate: every kernel rs2gpu translates and compiles, and for
every other `#[kernel]` the reason it is left out.

rs2gpu translates a crate as a whole and stops at the first kernel it rejects, so the benchmark works on a
copy of the crate from which the rejected items are blanked out (spaces in place of their text, so line
numbers and diagnostics stay those of the original files), translating again until what remains goes
through. A kernel whose generated CUDA NVRTC rejects is left out the same way. Nothing is dropped
silently: each left-out kernel keeps its first diagnostic as the reason.
"""
from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from rs2gpu.ir.abi import KernelABI
from rs2gpu.runtime.options import DEFAULT_ARCH

MAX_ROUNDS = 12
_KERNEL_ATTRIBUTE = re.compile(rb"#\s*\[\s*(?:rs2gpu\s*::\s*)?kernel\b")
_SUPPORT_DEPENDENCY = re.compile(r'(rs2gpu\s*=\s*\{[^}]*path\s*=\s*)"[^"]*"')


@dataclass(frozen=True)
class Item:
    """A top-level item of a Rust file, with the attributes and doc comments right before it."""

    file: str    # as diagnostics name it, e.g. "src/basic.rs"
    name: str
    kernel: bool
    start_byte: int
    end_byte: int
    first_line: int
    last_line: int
    function: bool = False
    doc: str = ""  # its `///` comment, without the slashes


@dataclass
class Corpus:
    root: Path                                             # the crate copy that translates and compiles
    kernels: dict[str, KernelABI] = field(default_factory=dict)  # the ABI of each kernel that made it
    sources: dict[str, str] = field(default_factory=dict)   # generated CUDA, by file name
    written: set[str] = field(default_factory=set)          # every #[kernel] of the original crate
    failures: dict[str, str] = field(default_factory=dict)  # left-out kernel -> why
    plain: dict[str, str] = field(default_factory=dict)     # functions that are not kernels -> what their doc says

    def status(self, rust_name: str) -> str:
        """'ok', or why the benchmark cannot run the generated side of this kernel."""
        if rust_name in self.kernels:
            return "ok"
        if rust_name in self.failures:
            return f"not translated: {self.failures[rust_name]}"
        if rust_name in self.plain:
            return f"not a kernel: `{rust_name}` is plain Rust in the crate" + \
                (f" ({self.plain[rust_name]})" if self.plain[rust_name] else "")
        return "not written: no such #[kernel] in the crate yet"


def why_not_a_kernel(doc: str) -> str:
    """The paragraph of a doc comment that mentions `#[kernel]`, on one line."""
    for paragraph in doc.split("\n\n"):
        if "#[kernel]" in paragraph:
            return " ".join(paragraph.split())
    return ""


def rust_items(text: str, file: str) -> list[Item]:
    """Top-level items of one Rust file (tree-sitter, the parser rs2gpu itself uses)."""
    from rs2gpu.frontend.source import parse_text

    data = text.encode("utf-8")
    root = parse_text(file, text).tree.root_node
    items: list[Item] = []
    pending = []  # attributes and comments waiting for the item they belong to
    for node in root.children:
        if node.type in ("attribute_item", "line_comment", "block_comment"):
            pending.append(node)
            continue
        name_node = node.child_by_field_name("name")
        name = data[name_node.start_byte:name_node.end_byte].decode() if name_node is not None else node.type
        head = pending[0] if pending else node
        kernel = node.type == "function_item" and any(
            _KERNEL_ATTRIBUTE.search(data[a.start_byte:a.end_byte]) for a in pending if a.type == "attribute_item")
        doc = "\n".join(data[c.start_byte:c.end_byte].decode().removeprefix("///").strip()
                        for c in pending if c.type == "line_comment"
                        and data[c.start_byte:c.end_byte].startswith(b"///"))
        items.append(Item(file, name, kernel, head.start_byte, node.end_byte, head.start_point[0] + 1,
                          node.end_point[0] + 1, node.type == "function_item", doc))
        pending = []
    return items


def blank(text: str, item: Item) -> str:
    """The text with the item replaced by spaces (newlines kept, so every other line keeps its number)."""
    data = bytearray(text.encode("utf-8"))
    for k in range(item.start_byte, item.end_byte):
        if data[k] != ord("\n"):
            data[k] = ord(" ")
    return data.decode("utf-8")


def copy_crate(crate: Path, destination: Path) -> Path:
    """Cargo.toml and src/ of `crate` under `destination`, the support-crate dependency made absolute."""
    import rs2gpu

    if destination.exists():
        shutil.rmtree(destination)
    destination.mkdir(parents=True)
    shutil.copytree(crate / "src", destination / "src")
    for name in ("Cargo.toml", "Cargo.lock"):
        if (crate / name).exists():
            shutil.copy2(crate / name, destination / name)
    manifest = destination / "Cargo.toml"
    if manifest.exists():
        support = rs2gpu.support_crate_path().as_posix()
        text = _SUPPORT_DEPENDENCY.sub(lambda m: f'{m.group(1)}"{support}"', manifest.read_text(encoding="utf-8"))
        manifest.write_text(text, encoding="utf-8")
    return destination


def prepare(crate: Path, workdir: Path, arch: str | None = DEFAULT_ARCH["cuda"], log=print) -> Corpus:
    """Translate `crate` (a copy of it under `workdir`), leaving out what rs2gpu rejects; with `arch`, also
    compile every generated kernel with NVRTC (through rs2gpu's disk cache, so that `rs2gpu.load` later
    finds the binaries) and leave out those that fail."""
    from rs2gpu import CompileFailed, pipeline

    root = copy_crate(Path(crate), Path(workdir) / Path(crate).name)
    files = {f"src/{p.relative_to(root / 'src').as_posix()}": p for p in sorted((root / "src").rglob("*.rs"))}
    texts = {name: path.read_text(encoding="utf-8") for name, path in files.items()}
    corpus = Corpus(root)
    items = [i for name, text in texts.items() for i in rust_items(text, name)]
    corpus.written = {i.name for i in items if i.kernel}
    corpus.plain = {i.name: why_not_a_kernel(i.doc) for i in items if i.function and not i.kernel}
    for _ in range(MAX_ROUNDS):
        try:
            translation = pipeline.translate(root, ("cuda",))
        except CompileFailed as failed:
            errors = [d for d in failed.diagnostics if d.severity == "error"]
            _leave_out(corpus, texts, files, [(d.span.file, d.span.line, f"{d.code} {d.message} "
                                               f"({d.span.file}:{d.span.line})") for d in errors])
            continue
        emitted = translation.emitted
        rejected = _compile_all(emitted, arch) if arch else {}
        if rejected:
            places = []
            for kernel, reason in rejected.items():
                file, line = emitted.abi.kernels[kernel].source.rsplit(":", 2)[:2]
                places.append((file, int(line), reason))
            _leave_out(corpus, texts, files, places)
            continue
        corpus.kernels = dict(emitted.abi.kernels)
        corpus.sources = dict(emitted.files)
        if corpus.failures:
            log(f"corpus: {len(corpus.kernels)} kernels translated, {len(corpus.failures)} left out")
        return corpus
    raise RuntimeError(f"the kernel crate still does not translate after leaving out {len(corpus.failures)} kernels")


def _leave_out(corpus: Corpus, texts: dict, files: dict, places: list[tuple[str, int, str]]) -> None:
    """Blank the items that hold the given (file, line, reason) places; record the kernels among them."""
    chosen: dict[tuple[str, str], tuple[Item, str]] = {}
    for file, line, reason in places:
        if file not in texts:
            raise RuntimeError(f"an error outside the crate's files cannot be attributed to a kernel: {reason}")
        holder = next((i for i in rust_items(texts[file], file) if i.first_line <= line <= i.last_line), None)
        if holder is None or holder.name == "use_declaration":
            raise RuntimeError(f"an error outside any item cannot be attributed to a kernel: {reason}")
        chosen.setdefault((file, holder.name), (holder, reason))
    for (file, _), (item, reason) in chosen.items():
        if item.kernel:
            corpus.failures.setdefault(item.name, reason)
        texts[file] = blank(texts[file], item)
        files[file].write_text(texts[file], encoding="utf-8")


def _compile_all(emitted, arch: str) -> dict[str, str]:
    """NVRTC every generated kernel (through rs2gpu's disk cache); the ones it rejects, with its first error."""
    from rs2gpu import config
    from rs2gpu.runtime.cache import BinaryCache
    from rs2gpu.runtime.errors import GpuCompileError
    from rs2gpu.runtime.nvrtc import cached_compile_cuda

    cache_dir = config.cache_dir()
    cache = BinaryCache(cache_dir / "kernels" if cache_dir else None)
    rejected = {}
    for name, entry in emitted.abi.kernels.items():
        file = entry.files["cuda"]
        try:
            cached_compile_cuda(cache, emitted.files[file], file, arch, entry.fast_math)
        except GpuCompileError as e:
            first = next((line for line in e.log.splitlines() if "error" in line), e.summary)
            rejected[name] = f"NVRTC rejects the generated CUDA: {first.strip()}"
    return rejected


def generated_binary(corpus: Corpus, rust_name: str, arch: str = DEFAULT_ARCH["cuda"]) -> bytes:
    """The cubin of one generated kernel, from rs2gpu's disk cache or compiled now (no GPU needed)."""
    from rs2gpu import config
    from rs2gpu.runtime.cache import BinaryCache
    from rs2gpu.runtime.nvrtc import cached_compile_cuda

    entry = corpus.kernels[rust_name]
    file = entry.files["cuda"]
    cache_dir = config.cache_dir()
    cache = BinaryCache(cache_dir / "kernels" if cache_dir else None)
    return cached_compile_cuda(cache, corpus.sources[file], file, arch, entry.fast_math)[0]
