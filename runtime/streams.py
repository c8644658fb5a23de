"""The stream a call is queued on: `k.f(..., stream=s)`.

A call on a GPU backend runs on one stream: by default the current one of the array library (cupy's current
stream on cuda, HIP's null stream on hip), or the stream named by `stream=`. Its copies, launches and the
waits for its results all go there, so it runs after the work queued there before it and before the work
queued after it. The cpu backend takes the same argument and runs the call before returning, which keeps
that order too.
"""
from __future__ import annotations

STREAM_KEYWORD = "stream"


def stream_handle(stream) -> int | None:
    """The driver's handle of a stream given to a call: a cupy stream (`.ptr`), a torch stream
    (`.cuda_stream`), or the handle itself as an int; None for None (the default stream of the call)."""
    if stream is None:
        return None
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    for attribute in ("ptr", "cuda_stream"):
        handle = getattr(stream, attribute, None)
        if isinstance(handle, int) and not isinstance(handle, bool):
            return handle
    raise TypeError(f"stream= takes a cupy stream, a torch stream or a stream handle (an int), "
                    f"got {type(stream).__name__}")


def take_stream(by_name, kwargs: dict) -> int | None:
    """Take `stream=` out of a call's keyword arguments and return its handle (None where the call names
    none). A kernel with a parameter named `stream` (`by_name`: the kernel's parameters by name) gets the
    keyword for that parameter instead."""
    if STREAM_KEYWORD not in kwargs or STREAM_KEYWORD in by_name:
        return None
    return stream_handle(kwargs.pop(STREAM_KEYWORD))
