"""GPU timing, two ways.

events: CUDA events around one call, median of many reps, the sides of a table row taking their reps in
  turn (`events_in_turn`). Before each rep the stream first reads a 256 MB
  scratch buffer (so no input is left in the 60 MB L2, and the lines left there are clean: overwriting the
  buffer instead would leave the L2 full of dirty lines, whose write-back would land inside the next call's
  span) and then runs a short spin kernel, so that the host has queued the start event, the call and the end
  event before the GPU reaches them: the events then time the kernel on the device, cold L2, without the
  host's launch cost.
back_to_back: RAJAPerf's way: many calls between two synchronizations, host clock, divided by the count;
  the minimum of a few passes. At RAJAPerf's default sizes the data stays in L2 from one call to the next,
  and for short kernels the host's launch rate is part of the figure, as it is in RAJAPerf's.
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from bench.data import address
from rs2gpu.runtime.options import DEFAULT_ARCH

FLUSH_BYTES = 256 << 20
SPIN_NS = 100_000

_TIMER_SOURCE = r"""
extern "C" __global__ void bench_evict(const ulonglong2* __restrict__ lines, unsigned long long count,
                                       unsigned long long* sink)
{
    unsigned long long folded = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < count;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const ulonglong2 line = lines[i];
        folded ^= line.x ^ line.y;
    }
    if (folded == 1) {  // never: the scratch holds zeros; the store only keeps the loads from being dropped
        *sink = folded;
    }
}

extern "C" __global__ void bench_spin(unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
"""


def device_healthy(cp) -> bool:
    """Whether the device still runs work: after a kernel faults, every later call on the context fails,
    so a run stops rather than record errors for the rows that follow."""
    try:
        probe = cp.zeros(16)
        probe += 1
        cp.cuda.runtime.deviceSynchronize()
        return True
    except Exception:  # noqa: BLE001
        return False


def load_cubin(cp, binary: bytes, folder: Path, name: str):
    """A cupy RawModule of a cubin (cupy loads modules from files)."""
    path = Path(folder) / f"{name}.cubin"
    path.write_bytes(binary)
    return cp.RawModule(path=str(path))


class Timer:
    def __init__(self, cp, stream, arch: str = DEFAULT_ARCH["cuda"]) -> None:
        from rs2gpu.runtime.nvrtc import compile_cuda

        self.cp = cp
        self.stream = stream
        self.scratch = cp.zeros(FLUSH_BYTES, dtype=cp.uint8)
        self._sink = cp.zeros(1, dtype=cp.uint64)
        self._evict_blocks = 8 * cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["multiProcessorCount"]
        self._folder = tempfile.mkdtemp(prefix="bench-timer-")
        module = load_cubin(cp, compile_cuda(_TIMER_SOURCE, "timer.cu", arch).binary, Path(self._folder), "timer")
        self._evict = module.get_function("bench_evict")
        self._spin = module.get_function("bench_spin")
        self._start = cp.cuda.Event()
        self._end = cp.cuda.Event()

    def occupy(self) -> None:
        """Fill the L2 with clean lines and keep the GPU busy for a while, asynchronously on the stream."""
        self._evict((self._evict_blocks,), (256,), (self.scratch, self.cp.uint64(FLUSH_BYTES // 16), self._sink),
                    stream=self.stream)
        self._spin((1,), (1,), (self.cp.uint64(SPIN_NS),), stream=self.stream)

    def once(self, call) -> float:
        """Microseconds of one call between events, without the flush (a quick estimate)."""
        self.stream.synchronize()
        self._start.record(self.stream)
        call()
        self._end.record(self.stream)
        self._end.synchronize()
        return self.cp.cuda.get_elapsed_time(self._start, self._end) * 1e3

    def events(self, call, reps: int) -> list[float]:
        """Microseconds of each of `reps` calls between CUDA events, each after a flush and a spin."""
        times = []
        for _ in range(reps):
            self.occupy()
            self._start.record(self.stream)
            call()
            self._end.record(self.stream)
            self._end.synchronize()
            times.append(self.cp.cuda.get_elapsed_time(self._start, self._end) * 1e3)
        return times

    def back_to_back(self, call, count: int, passes: int) -> float:
        """Microseconds per call of `count` calls between two synchronizations, the best of `passes`."""
        best = float("inf")
        for _ in range(passes):
            self.stream.synchronize()
            started = time.perf_counter()
            for _ in range(count):
                call()
            self.stream.synchronize()
            best = min(best, (time.perf_counter() - started) / count)
        return best * 1e6


def events_in_turn(timer, calls: dict, reps: dict) -> dict[str, list[float]]:
    """`timer.events` of several calls (by name: hand, generated, cupy) taken in turn, one rep of each
    after the other while it has reps left, so that a slow spell of the device falls on every side alike
    (VOL3D at 100x runs at two levels, minutes apart, on either side): per name, the µs of each rep. An
    untimed call of the same side comes before each rep (the flush then clears the L2 of it), so that the
    host's code and data are as warm as when a side's reps follow one another: the events of a call that
    waits for its result span the host's return from the wait, 2-3 µs longer after the other side's call."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for rep in range(max(reps.values(), default=0)):
        for name, call in calls.items():
            if rep < reps[name]:
                call()
                times[name] += timer.events(call, 1)
    return times


def back_to_back_in_turn(timer, calls: dict, counts: dict, passes: dict) -> dict[str, float]:
    """`timer.back_to_back` of several calls, their passes taken in turn: per name, the best µs per call."""
    best = {name: float("inf") for name in calls}
    for rep in range(max(passes.values(), default=0)):
        for name, call in calls.items():
            if rep < passes[name]:
                best[name] = min(best[name], timer.back_to_back(call, counts[name], 1))
    return best


def plan_reps(estimate_us: float, rajaperf_reps: int, quick: bool) -> tuple[int, int, int]:
    """(event reps, back-to-back count, passes) that keep one side of one kernel to about a second."""
    if estimate_us > 20_000:
        return 3, 3, 1
    event_budget = 0.15 if quick else 0.3
    events = max(5, min(15 if quick else 50, int(event_budget * 1e6 / (estimate_us + 250))))
    count = max(3, min(max(rajaperf_reps, 3), int((0.1 if quick else 0.25) * 1e6 / max(estimate_us, 5.0))))
    return events, count, 2 if quick else 3


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def copy_bandwidth(cp, stream, nbytes: int = 2 << 30, reps: int = 10) -> float:
    """Device-to-device copy rate in bytes/s, counting bytes read plus bytes written."""
    src = cp.empty(nbytes, dtype=cp.uint8)
    dst = cp.empty(nbytes, dtype=cp.uint8)
    src.fill(1)
    cp.cuda.runtime.deviceSynchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for k in range(reps + 2):
        start.record(stream)
        cp.cuda.runtime.memcpyAsync(address(dst), address(src), nbytes, cp.cuda.runtime.memcpyDeviceToDevice,
                                    stream.ptr)
        end.record(stream)
        end.synchronize()
        if k >= 2:
            times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    del src, dst
    return 2 * nbytes / statistics.median(times)
