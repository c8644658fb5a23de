"""The kernels of a large crate checked and emitted by forked worker processes, one share of them each.

A kernel's translation depends on the crate only through what the frontend lowered before the fork, so each
share computes what one process would, and the results come back in the kernels' order. It is done only
where it is safe and pays: the platform forks (the children then start from the lowered crate, with nothing
to send them), the process runs no other thread (a fork copies none, and a lock one of them held would stay
held in the child), the machine has more than one core, and there are at least `MIN_ITEMS` kernels (a fork
and the results' way back cost milliseconds).
"""
from __future__ import annotations

import multiprocessing
import os
import threading
from typing import Callable, Sequence

MIN_ITEMS = 32
MAX_WORKERS = 8

# the map in progress, (function, shares): a forked child finds its share here
_work: tuple[Callable, list[Sequence]] | None = None
last_processes = 1  # the processes the last `spread` ran in, this one included


def spread(function: Callable, items: Sequence) -> list:
    """`[function(item) for item in items]`, over forked workers where that is safe and pays."""
    global _work, last_processes
    last_processes = 1
    workers = min(os.cpu_count() or 1, MAX_WORKERS, len(items) // (MIN_ITEMS // 2))
    if workers < 2 or len(items) < MIN_ITEMS or threading.active_count() > 1 \
            or "fork" not in multiprocessing.get_all_start_methods():
        return [function(item) for item in items]
    size = -(-len(items) // workers)
    _work = (function, [items[k:k + size] for k in range(0, len(items), size)])
    try:
        # the first share is this process's own, computed while the children compute theirs
        with multiprocessing.get_context("fork").Pool(len(_work[1]) - 1) as pool:
            others = pool.map_async(_run_share, range(1, len(_work[1])))
            shares = [_run_share(0), *others.get()]
        last_processes = len(shares)
    finally:
        _work = None
    return [result for share in shares for result in share]


def _run_share(index: int) -> list:
    function, shares = _work
    return [function(item) for item in shares[index]]
