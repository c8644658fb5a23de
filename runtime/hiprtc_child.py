"""hiprtc through ctypes, and the child process that runs one compile.

hiprtc can abort the whole process (ROCm 5.2 dies in free() on an unknown architecture such as gfx9999), so
`rs2gpu.runtime.hiprtc.compile_hip` never compiles in the caller's process: it runs this file as a script,
writes a JSON request to its stdin and reads a JSON reply from its stdout. This module imports only the
standard library, so the child needs no installed package and starts fast.
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
import sys
from typing import Any

# ROCm >= 6 ships hiprtc as its own library; ROCm 5 (Debian 12's libamdhip64-5) has it inside libamdhip64.
LIBRARY_NAMES = ("libhiprtc.so", "libhiprtc.so.7", "libhiprtc.so.6", "libamdhip64.so", "libamdhip64.so.5")

INSTALL_HINT = (
    "install hiprtc: on Debian/Ubuntu `apt-get install libamdhip64-dev` (ROCm 5), or ROCm >= 6 (libhiprtc.so) "
    "with its lib directory on LD_LIBRARY_PATH"
)

_HIPRTC_SUCCESS = 0

_c_size_p = ctypes.POINTER(ctypes.c_size_t)
_c_int_p = ctypes.POINTER(ctypes.c_int)
_c_str_array = ctypes.POINTER(ctypes.c_char_p)
_PROTOTYPES: dict[str, list[Any]] = {
    "hiprtcVersion": [_c_int_p, _c_int_p],
    "hiprtcCreateProgram": [
        ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, _c_str_array, _c_str_array
    ],
    "hiprtcCompileProgram": [ctypes.c_void_p, ctypes.c_int, _c_str_array],
    "hiprtcGetProgramLogSize": [ctypes.c_void_p, _c_size_p],
    "hiprtcGetProgramLog": [ctypes.c_void_p, ctypes.c_char_p],
    "hiprtcGetCodeSize": [ctypes.c_void_p, _c_size_p],
    "hiprtcGetCode": [ctypes.c_void_p, ctypes.c_char_p],
    "hiprtcDestroyProgram": [ctypes.POINTER(ctypes.c_void_p)],
}


class LibraryNotFound(Exception):
    pass


class HiprtcCallFailed(Exception):
    pass


def load_library() -> ctypes.CDLL:
    """The first library of LIBRARY_NAMES that loads and exports hiprtc, with prototypes set."""
    tried = []
    for name in LIBRARY_NAMES:
        try:
            lib = ctypes.CDLL(name)
        except OSError as exc:
            tried.append(f"{name}: {exc}")
            continue
        if not hasattr(lib, "hiprtcCompileProgram"):  # ROCm >= 6 moved hiprtc out of libamdhip64
            tried.append(f"{name}: no hiprtc symbols")
            continue
        for function, argtypes in _PROTOTYPES.items():
            getattr(lib, function).argtypes = argtypes
            getattr(lib, function).restype = ctypes.c_int
        lib.hiprtcGetErrorString.argtypes = [ctypes.c_int]
        lib.hiprtcGetErrorString.restype = ctypes.c_char_p
        return lib
    raise LibraryNotFound("hiprtc not found (" + "; ".join(tried) + "): " + INSTALL_HINT)


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("fname", ctypes.c_char_p),
        ("fbase", ctypes.c_void_p),
        ("sname", ctypes.c_char_p),
        ("saddr", ctypes.c_void_p),
    ]


def library_path(lib: ctypes.CDLL) -> str:
    """The real file behind `lib`: its versioned name (libamdhip64.so.5.2.21153) identifies the ROCm release."""
    try:
        dladdr = ctypes.CDLL(None).dladdr
    except AttributeError:
        return str(lib._name)
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    info = _DlInfo()
    if dladdr(ctypes.cast(lib.hiprtcVersion, ctypes.c_void_p), ctypes.byref(info)) and info.fname:
        return os.path.realpath(info.fname.decode())
    return str(lib._name)


def _call(lib: ctypes.CDLL, function: str, *args: Any) -> None:
    status = getattr(lib, function)(*args)
    if status != _HIPRTC_SUCCESS:
        raise HiprtcCallFailed(f"{function} failed: {lib.hiprtcGetErrorString(status).decode()}")


def version(lib: ctypes.CDLL) -> tuple[int, int]:
    major, minor = ctypes.c_int(), ctypes.c_int()
    _call(lib, "hiprtcVersion", ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def compile_program(lib: ctypes.CDLL, source: str, source_name: str, options: list[str]) -> dict[str, Any]:
    """Compile once; the reply has the status, its name, the log and the code object (base64)."""
    program = ctypes.c_void_p()
    _call(lib, "hiprtcCreateProgram", ctypes.byref(program), source.encode(), source_name.encode(), 0, None, None)
    try:
        encoded = [option.encode() for option in options]
        status = lib.hiprtcCompileProgram(program, len(encoded), (ctypes.c_char_p * len(encoded))(*encoded))
        size = ctypes.c_size_t()
        _call(lib, "hiprtcGetProgramLogSize", program, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value + 1)
        _call(lib, "hiprtcGetProgramLog", program, log)
        code = b""
        if status == _HIPRTC_SUCCESS:
            _call(lib, "hiprtcGetCodeSize", program, ctypes.byref(size))
            buffer = ctypes.create_string_buffer(size.value)
            _call(lib, "hiprtcGetCode", program, buffer)
            code = buffer.raw
    finally:
        _call(lib, "hiprtcDestroyProgram", ctypes.byref(program))
    return {
        "status": status,
        "status_name": lib.hiprtcGetErrorString(status).decode(),
        "log": log.value.decode("utf-8", errors="replace"),
        "code": base64.b64encode(code).decode("ascii"),
    }


def _serve(request: dict[str, Any]) -> dict[str, Any]:
    try:
        lib = load_library()
    except LibraryNotFound as exc:
        return {"unavailable": str(exc)}
    try:
        reply = compile_program(lib, request["source"], request["source_name"], request["options"])
        reply["version"] = version(lib)
    except HiprtcCallFailed as exc:
        return {"failed": str(exc)}
    reply["library"] = library_path(lib)
    return reply


def main() -> None:
    # The reply gets a private copy of stdout; anything hiprtc or comgr prints goes to stderr instead of
    # corrupting the JSON.
    reply_fd = os.dup(1)
    os.dup2(2, 1)
    reply = _serve(json.loads(sys.stdin.buffer.read()))
    with os.fdopen(reply_fd, "w") as out:
        json.dump(reply, out)


if __name__ == "__main__":
    main()
