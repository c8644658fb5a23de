"""What a kernel reads back after its launches, and the device memory its reductions work in.

One layout of 8-byte words, after the 88-byte panic record, in launch order: one word per reduction
result (two for a min/max-location reduction) and one per slice the launch writes through an index list
(its order flag, see `emit.verify`). The words have two homes, both laid out like that:
- the results are written by the last block of their launch straight into page-locked host memory that
  the device addresses (`DeviceBackend.mapped`), so after a call the host only waits for the stream: no
  copy follows the launches, and none of its latency is part of the call. The word after them is the
  done word the call's last launch sets after its results, where it reduces (`Launch.signals_done` in the
  ABI): a call that ends with it and copies nothing after it waits for that word instead;
- the panic record and the order flags live in the module's `rs2gpu_readback` area (see the prelude) on
  the device, where any thread may write them; the host copies them, with one asynchronous copy into
  pinned memory, only after launches that can have written them.
The blocks' partial results live in one device buffer per kernel, sized for the largest grid a launch with
reductions gets.

Nothing here is allocated per call.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from rs2gpu.ir.abi import KernelABI, Launch, Returned
from rs2gpu.ir.types import PRIMITIVES

READBACK_SYMBOL = "rs2gpu_readback"
PANIC_RECORD_BYTES = 88  # rs2gpu_panic_record: 10 words with a key over a piece, then the launch's number
RESULT_WORD = 8
PARTIAL_BYTES = {False: 8, True: 16}  # per block: a scalar, or a (value, location) pair


@dataclass(frozen=True)
class ResultSlot:
    """Where one reduced value lands: its word in the readback area, and how to read it."""

    name: str
    format: str   # struct format of the value, e.g. "<d"
    offset: int   # byte offset in the readback area


class Readback:
    """The readback area and the partials buffer of one loaded kernel (see the module docstring)."""

    def __init__(self, backend, module, entry: KernelABI, max_blocks: int) -> None:
        self.checks = bool(entry.panics)
        self.slots, self._flags, partial_offsets, partial_bytes, end = _layout(entry.launches, max_blocks)
        if end != PANIC_RECORD_BYTES + RESULT_WORD * entry.result_words:
            raise ValueError(f"the ABI's reductions and index lists fill {end - PANIC_RECORD_BYTES} bytes "
                             f"of results, its result_words say {entry.result_words} words")
        self.result_bytes = end - PANIC_RECORD_BYTES
        # whether a call that ran must wait for its results even without a panic record: reductions' results
        # (the order flags of index lists matter only with the record, from the launches that check them)
        self.has_results = any(self.slots)
        self._has_flags = any(self._flags)
        used = self.checks or self.result_bytes
        self.area = backend.global_address(module, READBACK_SYMBOL) if used else 0
        self.end = end
        self.fetched = backend.pinned(end) if used else None  # the area as last copied
        signals = [launch.signals_done for launch in entry.launches]
        mapped_bytes = end + RESULT_WORD * any(signals)
        self.results_host, results_device = backend.mapped(mapped_bytes) if self.has_results else (None, 0)
        self._done = memoryview(self.results_host)[end:end + 4].cast("I") if any(signals) else None
        self._unpack_all, self._names = _unpack_every_result(self.slots, self.results_host)
        # one buffer for every launch: the launches run one after another on the stream
        self._partials = backend.alloc(partial_bytes) if partial_bytes else None
        self.pointers: list[dict] = []  # per launch: ("partials" | "result", name) -> device address
        for slots, offsets in zip(self.slots, partial_offsets):
            pointers = {("partials", name): self._partials.ptr + at for name, at in offsets.items()}
            pointers.update({("result", slot.name): results_device + slot.offset for slot in slots})
            self.pointers.append(pointers)
        for pointers, signal in zip(self.pointers, signals):
            if signal:
                pointers["done", ""] = results_device + end
        self._backend = backend

    def clear_done(self) -> None:
        """Clear the done word before a call's launches: the last call that could set it has set it or
        has been waited for, so no launch in flight writes it any more."""
        if self._done is not None:
            self._done[0] = 0

    def wait(self, last_launch_ran: bool) -> None:
        """Wait for a call that queued nothing after its launches: for the done word where the last launch
        sets it and ran, else for the stream."""
        if self._done is not None and last_launch_ran:
            self._backend.wait_for_word(self._done)
        else:
            self._backend.synchronize()

    def fetch(self, with_record: bool) -> None:
        """Enqueue the copy of the order flags, and of the panic record `with_record`, after the launches
        on the same stream (nothing where there is neither); the caller synchronizes the stream before
        reading `panic`, `flag` or `results`."""
        if with_record or self._has_flags:
            first = 0 if with_record else PANIC_RECORD_BYTES
            self._backend.copy_to_host_async(self.fetched.ctypes.data + first, self.area + first, self.end - first)

    def panic(self) -> tuple[int, int, int]:
        """(site, index, len) of the panic record as fetched; site 0 means no panic."""
        return decode_panic(struct.unpack_from(f"<{PANIC_RECORD_BYTES // 8}Q", self.fetched, 0))

    def flag_address(self, launch: int, target: str) -> int:
        """The device address of the order flag of launch `launch`'s writes to `target` through a list."""
        return self.area + self._flags[launch][target]

    def flag(self, launch: int, target: str) -> int:
        """That flag as fetched: the stamp of the last call whose loop found the list out of order."""
        return struct.unpack_from("<I", self.fetched, self._flags[launch][target])[0]

    def zero_flags(self) -> None:
        """Zero every order flag in stream order (no wait), when the marks start again from stamp 1."""
        offsets = [offset for flags in self._flags for offset in flags.values()]
        if offsets:
            first, last = min(offsets), max(offsets) + RESULT_WORD
            self._backend.zero_async(self.area + first, last - first)

    def reset_panic(self) -> None:
        """Zero the device's panic record for the next call, in stream order (no wait)."""
        self._backend.zero_async(self.area, PANIC_RECORD_BYTES)

    def results(self, seeds: list[dict], ran: list[bool]) -> dict:
        """Each reduction's value after the call (once the stream is done): as the device wrote it for the
        launches that ran, and its seed (the value before the loop) for a launch that ran no iteration."""
        if self._unpack_all is not None and all(ran):
            return dict(zip(self._names, self._unpack_all()))
        out = {}
        for slots, seed, launch_ran in zip(self.slots, seeds, ran):
            for slot in slots:
                out[slot.name] = (struct.unpack_from(slot.format, self.results_host, slot.offset)[0]
                                  if launch_ran else seed[slot.name])
        return out

    def returned_reader(self, returns: Returned | None):
        """For a call whose launches all ran: a function that reads what the kernel returns straight from
        the results, where that is one reduction or a tuple of them, as DOT's and REDUCE3_INT's are (None
        for anything else, which the returned expression computes from `results`). It is the Python that
        runs between a reduction call's wait and its return."""
        if self._unpack_all is None or returns is None:
            return None
        expr = returns.expr
        parts = expr["tuple"] if "tuple" in expr else [expr]
        if not all(set(part) == {"reduction"} for part in parts):
            return None
        positions = [self._names.index(part["reduction"]) for part in parts]
        unpack = self._unpack_all
        if "tuple" not in expr:
            only = positions[0]
            return lambda: unpack()[only]
        if positions == list(range(len(self._names))):
            return unpack  # the results in their slots' order are the tuple

        def read() -> tuple:
            values = unpack()
            return tuple([values[k] for k in positions])
        return read


def _unpack_every_result(slots: list[list[ResultSlot]], memory) -> tuple:
    """(a function that reads every result in the host memory `memory` at once, in slot order: one unpack
    instead of one per result; the results' names in that order), or (None, ()) where there are none."""
    every = [slot for launch_slots in slots for slot in launch_slots]
    if not every:
        return None, ()
    layout, at = "<", every[0].offset
    for slot in every:  # the words between results are other launches' order flags: skipped
        layout += f"{slot.offset - at}x{slot.format.lstrip('<')}"
        at = slot.offset + struct.calcsize(slot.format)
    unpack, view, first = struct.Struct(layout).unpack_from, memoryview(memory), every[0].offset
    return (lambda: unpack(view, first)), tuple(slot.name for slot in every)


def decode_panic(words) -> tuple[int, int, int]:
    """(site, index, len) of a panic record's words (see the prelude): word 0 says whether there is a
    panic; each of words 1 to 9 holds in its low 16 bits a piece of the site (1 piece), the index (4) and the
    len (4), lowest first, and in its high bits the key of the failure it is from, the same in every word."""
    words = words[:10]  # the last word is the number of the launch that recorded
    if words[0] == 0:
        return 0, 0, 0
    if len({w >> 16 for w in words}) != 1:
        raise ValueError(f"the device's panic record mixes failures: {[hex(w) for w in words]}")
    pieces = [w & 0xFFFF for w in words[1:]]
    return pieces[0], _number(pieces[1:5]), _number(pieces[5:9])


def _number(pieces: list[int]) -> int:
    return sum(piece << (16 * k) for k, piece in enumerate(pieces))


def _layout(launches: tuple[Launch, ...], max_blocks: int):
    """Per launch, the result slots, the offsets of its order flags (by slice written through a list) in
    the area and of each reduction's partials in the partials buffer; the bytes of partials the largest
    launch needs, and where the area's words end."""
    slots, flags, partial_offsets, partial_bytes, offset = [], [], [], 0, PANIC_RECORD_BYTES
    for launch in launches:
        launch_slots, offsets, size = [], {}, 0
        for r in launch.reductions:
            located = r.location is not None
            offsets[r.name] = size
            size += PARTIAL_BYTES[located] * max_blocks
            for name, ty in [(r.name, r.type)] + ([(r.location.name, r.location.type)] if located else []):
                launch_slots.append(ResultSlot(name, "<" + PRIMITIVES[ty].pack, offset))
                offset += RESULT_WORD
        slots.append(launch_slots)
        flags.append({})
        for target in dict.fromkeys(write.target for write in launch.index_lists):
            flags[-1][target] = offset
            offset += RESULT_WORD
        partial_offsets.append(offsets)
        partial_bytes = max(partial_bytes, size)
    return slots, flags, partial_offsets, partial_bytes, offset
