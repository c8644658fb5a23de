"""The CPU backend: the original Rust, compiled by rustc (through cargo, offline) into a shared library,
called through ctypes with the same argument checks and host checks as the GPU backends.

It is the semantic reference: what the GPU must compute is what this computes. Each kernel gets an
`extern "C"` shim that rebuilds the slices from (pointer, length) pairs, calls the kernel, writes its
result, and turns a Rust panic into an error code and message instead of unwinding into Python.
The built library is cached by the hash of the crate's sources and the shims, so a machine without
rustc can use a library built elsewhere.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from rs2gpu.ir.abi import ArgRole, CrateABI, KernelABI, ParamKind, Returned
from rs2gpu.ir.types import PRIMITIVES
from rs2gpu.runtime.cache import cache_key, replace_atomically
from rs2gpu.runtime.callplan import CallPlan
from rs2gpu.runtime.errors import KernelPanic, ToolchainUnavailable
from rs2gpu.runtime.hostchecks import check_call
from rs2gpu.runtime.streams import take_stream


def _ctype(name: str):
    """The ctypes type of a primitive, from its width and kind."""
    p = PRIMITIVES[name]
    if p.kind == "bool":
        return ctypes.c_bool
    if p.kind == "half":
        return ctypes.c_uint16  # its bits
    if p.kind == "float":
        return ctypes.c_float if p.bits == 32 else ctypes.c_double
    return getattr(ctypes, f"c_{'u' if p.kind == 'unsigned' else ''}int{p.bits}")


PANIC_BUFFER = 4096

_PANIC_SUPPORT = """
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};

thread_local! { static PANIC: RefCell<String> = RefCell::new(String::new()); }

/// Runs `body`; on a panic, writes "message\\nfile:line:col" into `msg` and returns 1.
unsafe fn rs2gpu_guard(msg: *mut u8, cap: usize, body: impl FnOnce()) -> i32 {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        panic::set_hook(Box::new(|info| {
            let text = if let Some(s) = info.payload().downcast_ref::<&str>() { s.to_string() }
                else if let Some(s) = info.payload().downcast_ref::<String>() { s.clone() }
                else { String::from("panic") };
            let place = info.location().map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column())).unwrap_or_default();
            PANIC.with(|p| *p.borrow_mut() = format!("{}\\n{}", text, place));
        }));
    });
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(()) => 0,
        Err(_) => {
            let text = PANIC.with(|p| p.borrow().clone());
            let bytes = text.as_bytes();
            let n = bytes.len().min(cap.saturating_sub(1));
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), msg, n);
            *msg.add(n) = 0;
            1
        }
    }
}
"""


def _result_layout(returns: Returned | None) -> list[tuple[str, int]]:
    """(type, offset) of each returned scalar in the result buffer, laid out like a repr(C) tuple."""
    if returns is None:
        return []
    ty = returns.type
    types = [t.strip() for t in ty.strip("()").split(",") if t.strip()] if ty.startswith("(") else [ty]
    out, offset = [], 0
    for t in types:
        size = PRIMITIVES[t].size
        offset = (offset + size - 1) // size * size
        out.append((t, offset))
        offset += size
    return out


def _is_half(rust_type: str) -> bool:
    return rust_type in PRIMITIVES and PRIMITIVES[rust_type].kind == "half"


def shim_source(entry_by_name: dict[str, KernelABI]) -> str:
    """The crate's C ABI: one `extern "C"` function per kernel, taking each slice as a pointer and a length
    and each by-value aggregate as a pointer, and returning 1 with the panic's message in a buffer.

    Its own names are invented, positional and `rs2gpu_`-prefixed (the kernel is called positionally), so
    no parameter name of a kernel (`out`, `a` beside `a_len`) can clash with them. A half type's elements
    and values cross as their u16 bits (the types are `repr(transparent)` over u16), and the kernel's
    signature gives them their type back by inference: the kernels may name the support crate's types
    or the `half` crate's, which the shim need not name."""
    lines = []
    for name, entry in entry_by_name.items():
        module, _, function = entry.rust_path.rpartition("::")
        scope = "crate::kernels" + ("::" + module if module else "")
        params, setup, call_args = [], [], []
        for position, p in enumerate(entry.params):
            n = f"rs2gpu_arg{position}"
            mut = "mut" if p.mutable else "const"
            if p.kind == ParamKind.SLICE:
                half = _is_half(p.layout.type)
                params += [f"{n}_ptr: *{mut} {'u16' if half else p.layout.type}", f"{n}_len: usize"]
                maker = "from_raw_parts_mut" if p.mutable else "from_raw_parts"
                setup.append(f"let {n} = if {n}_len == 0 {{ &{'mut ' if p.mutable else ''}[] }} else "
                             f"{{ core::slice::{maker}({n}_ptr{'.cast()' if half else ''}, {n}_len) }};")
            elif p.kind in (ParamKind.ARRAY, ParamKind.STRUCT_REF):
                target = f"[{p.layout.type}; {p.length}]" if p.kind == ParamKind.ARRAY else p.layout.type
                params.append(f"{n}_ptr: *{mut} {target}")
                setup.append(f"let {n} = &{'mut ' if p.mutable else ''}*{n}_ptr;")
            elif p.kind == ParamKind.SCALAR and _is_half(p.rust_type):
                params.append(f"{n}_bits: u16")
                setup.append(f"let {n} = core::mem::transmute::<u16, _>({n}_bits);")
            elif p.kind == ParamKind.SCALAR:
                params.append(f"{n}: {p.rust_type}")
            else:
                params.append(f"{n}_ptr: *const u8")
                setup.append(f"let {n}: {p.rust_type} = core::ptr::read_unaligned({n}_ptr as *const {p.rust_type});")
            call_args.append(n)
        results = _result_layout(entry.returns)
        generic = entry.generic
        # (a half type argument is named as the support crate's, the crate every shim depends on)
        turbofish = f"::<{', '.join(f'rs2gpu::{t}' if _is_half(t) else t for t in generic.type_args)}>" \
            if generic else ""
        call = f"{scope}::{function}{turbofish}({', '.join(call_args)})"
        if not results:
            body = f"{call};"
        elif len(results) == 1 and not entry.returns.type.startswith("("):
            body = (f"let rs2gpu_value = {call}; "
                    f"core::ptr::write_unaligned(rs2gpu_out as *mut {results[0][0]}, rs2gpu_value);")
        else:
            writes = " ".join(f"core::ptr::write_unaligned(rs2gpu_out.add({off}) as *mut {t}, rs2gpu_value.{i});"
                              for i, (t, off) in enumerate(results))
            body = f"let rs2gpu_value = {call}; {writes}"
        own = ["rs2gpu_out: *mut u8", "rs2gpu_msg: *mut u8", "rs2gpu_cap: usize"]
        lines.append(f"""
#[allow(unused_imports, non_snake_case, clippy::all)]
pub mod rs2gpu_shim_{name} {{
    use {scope}::*;
    #[no_mangle]
    pub unsafe extern "C" fn rs2gpu_cpu_{name}({', '.join(params + own)}) -> i32 {{
        super::rs2gpu_guard(rs2gpu_msg, rs2gpu_cap, || {{
            {' '.join(setup)}
            {body}
        }})
    }}
}}""")
    return _PANIC_SUPPORT + "\n".join(lines) + "\n"


class CpuLibrary:
    """Builds (or finds in the cache) the shared library of a crate's kernels."""

    def __init__(self, crate_root: Path, package: str | None, single_file: Path | None, sources: dict[str, str],
                 crate: CrateABI, cache_dir: Path, support_crate: Path) -> None:
        self.abi = crate
        self.source_root = single_file.resolve().parent if single_file is not None else crate_root.resolve()
        shim = shim_source(crate.kernels)
        if single_file is not None:
            header = f'#[path = {str(single_file.resolve())!r}]\nmod kernels;\n'.replace("'", '"')
            dependency = f'rs2gpu = {{ path = "{support_crate.resolve().as_posix()}" }}'
        else:
            header = "use rs2gpu_user_kernels as kernels;\n"
            dependency = (f'rs2gpu_user_kernels = {{ path = "{crate_root.resolve().as_posix()}", '
                          f'package = "{package}" }}')
            if any(_is_half(t) for entry in crate.kernels.values() if entry.generic for t in entry.generic.type_args):
                dependency += f'\nrs2gpu = {{ path = "{support_crate.resolve().as_posix()}" }}'

        self.lib_rs = header + shim
        self.cargo_toml = f"""[package]
name = "rs2gpu-cpu-shim"
version = "0.0.0"
edition = "2021"

[lib]
crate-type = ["cdylib"]
path = "lib.rs"

[dependencies]
{dependency}

[profile.release]
debug-assertions = false
overflow-checks = false
panic = "unwind"

[workspace]
"""
        # The key leaves out where the crate lives, so a library built on one machine serves another.
        key = cache_key("cpu", shim, package or "lone file", *[f"{k}\n{sources[k]}" for k in sorted(sources)])
        self.key = key
        self.folder = Path(cache_dir).resolve() / "cpu" / key[:16]
        self.path = self.folder / "librs2gpu_kernels.so"

    def build(self) -> Path:
        if self.path.exists():
            return self.path
        cargo = shutil.which("cargo")
        if cargo is None:
            raise ToolchainUnavailable("the cpu backend builds the Rust kernels with cargo, which is not on PATH; "
                                       "install Rust (rustup.rs), or copy a library built elsewhere into the "
                                       f"cache folder {self.folder}")
        self.folder.mkdir(parents=True, exist_ok=True)
        # Processes building the same library share the folder; cargo locks its target folder, and the
        # sources are replaced whole, so a build never reads another process's half-written file.
        replace_atomically(self.folder / "Cargo.toml", self.cargo_toml.encode())
        replace_atomically(self.folder / "lib.rs", self.lib_rs.encode())
        # Panic locations relative to the crate (src/lib.rs:5:9) wherever it lies: the cache key leaves the
        # crate's location out, so the library may serve an identical crate in another folder.
        encoded = os.environ.get("CARGO_ENCODED_RUSTFLAGS")
        flags = encoded.split("\x1f") if encoded else os.environ.get("RUSTFLAGS", "").split()
        flags.append(f"--remap-path-prefix={self.source_root.as_posix()}/=")
        env = dict(os.environ, CARGO_TARGET_DIR=str(self.folder / "target"),
                   CARGO_ENCODED_RUSTFLAGS="\x1f".join(flags))
        done = subprocess.run([cargo, "build", "--release", "--offline", "--quiet"], cwd=self.folder, env=env,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise ToolchainUnavailable(f"building the kernels with cargo failed:\n{done.stderr}")
        built = self.folder / "target" / "release" / "librs2gpu_cpu_shim.so"
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".so")  # one per process: no races
        os.close(fd)
        shutil.copy(built, tmp)  # the content and the permission bits cargo gave the library
        os.replace(tmp, self.path)
        return self.path


class CpuKernel:
    """One kernel of a CPU library: `kernel(*args)` calls the rustc-compiled Rust function, under the call
    contract every backend keeps (docs/call-contract.md): the host checks of the GPU backends first, and a
    call that panics leaves the host arrays as they were."""

    def __init__(self, library: ctypes.CDLL, name: str, entry: KernelABI, source_root: Path | None = None) -> None:
        self.name = name
        self._source_root = str(source_root.resolve()) + "/" if source_root is not None else None
        self.entry = entry
        self.plan = CallPlan(name, entry)
        self._fn = getattr(library, f"rs2gpu_cpu_{name}")
        argtypes = []
        for p in entry.params:
            for part in p.parts:
                # the Rust function takes every reference as a pointer, also the arrays the GPU ABI
                # passes by value
                if part.role == ArgRole.POINTER or p.kind in (ParamKind.STRUCT, ParamKind.ARRAY):
                    argtypes.append(ctypes.c_void_p)
                elif part.role == ArgRole.LENGTH:
                    argtypes.append(ctypes.c_uint64)
                else:
                    argtypes.append(_ctype(p.layout.type))
        self._fn.argtypes = argtypes + [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        self._fn.restype = ctypes.c_int32
        self._results = _result_layout(entry.returns)
        self._written = [p.name for p in entry.params if p.mutable and p.in_memory]
        self.last_transfers: list = []

    def __call__(self, *args, **kwargs):
        take_stream(self.plan.by_name, kwargs)  # checked as on the GPU; the call has ended when it returns
        call = self.plan.bind(args, kwargs, allow_device=False)
        after_running = check_call(self.plan, call)  # what a GPU raises after running the launches before it
        values, keep = [], []
        for p in self.entry.params:
            n = p.name
            if n in call.arrays:
                values.append(call.arrays[n].ptr)
                if p.kind == ParamKind.SLICE:
                    values.append(call.arrays[n].count)
            elif n in call.scalars:
                values.append(call.scalars[n])
            else:
                buffer = ctypes.create_string_buffer(call.structs[n], len(call.structs[n]))
                keep.append(buffer)
                values.append(ctypes.addressof(buffer))
        out = ctypes.create_string_buffer(64)
        msg = ctypes.create_string_buffer(PANIC_BUFFER)
        # what the Rust code may write, to put back where the call fails: the GPU backends copy nothing back then
        saved = [(call.arrays[n].host, call.arrays[n].host.copy()) for n in self._written]
        panicked = self._fn(*values, ctypes.addressof(out), msg, PANIC_BUFFER) != 0
        if panicked or after_running is not None:
            for array, before in saved:
                array[...] = before
        if panicked:
            message, _, location = msg.value.decode("utf-8", "replace").partition("\n")
            if self._source_root and location.startswith(self._source_root):
                location = location[len(self._source_root):]  # as in diagnostics: relative to the crate
            raise KernelPanic(message, location, self.name)
        if after_running is not None:
            raise after_running
        if not self._results:
            return None
        raw = out.raw
        values = [struct.unpack_from("<" + PRIMITIVES[t].pack, raw, off)[0] for t, off in self._results]
        return values[0] if not self.entry.returns.type.startswith("(") else tuple(values)
