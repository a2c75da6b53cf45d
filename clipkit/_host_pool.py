"""Per-tensor CPU work split over a few threads, with no OpenMP barrier per tensor (private).

torch parallelises each CPU op on its own: every ``dot`` or ``mul_`` on a large tensor starts
an OpenMP team and ends in a barrier that waits for all of its threads. A clip over 190
tensors passes some 200 to 400 such barriers. On an idle machine each costs microseconds; on a
busy one (two shared CI cores, a notebook beside a browser) a barrier waits until the
scheduler runs a descheduled thread again, and we measured a whole clip at over a second,
twenty times one read of the same bytes.

So the host route deals the tensors, balanced by size, to as many worker threads as torch would
use, and each worker runs its ops single-threaded. The parallelism is the same, the only wait
is one join at the end, and torch lets go of the GIL inside every op. ``torch.set_num_threads``
is per thread for OpenMP and MKL, so the workers' setting never reaches the caller's thread.
"""

from __future__ import annotations

import heapq
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import torch

INLINE_BELOW = 1 << 20  # entries in all: below this a thread hand-off costs more than it saves

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def _one_thread_each() -> None:
    torch.set_num_threads(1)  # this worker only: the OpenMP and MKL counts are thread-local


def _get_pool(size: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size != size:  # follow torch.set_num_threads in the caller
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(size, "clipkit-host", initializer=_one_thread_each)
            _pool_size = size
        return _pool


def _forget_pool() -> None:
    global _pool
    _pool = None  # a forked child (a DataLoader worker) has none of the parent's threads


os.register_at_fork(after_in_child=_forget_pool)


def balanced(tensors: list[torch.Tensor], parts: int) -> list[list[torch.Tensor]]:
    """Deal ``tensors`` into ``parts`` lists of nearly equal size: largest first, to the lightest.

    >>> [len(p) for p in balanced([torch.zeros(n) for n in (5, 4, 3, 3, 1)], 2)]
    [2, 3]
    """
    heap = [(0, i) for i in range(parts)]
    out: list[list[torch.Tensor]] = [[] for _ in range(parts)]
    for t in sorted(tensors, key=torch.Tensor.numel, reverse=True):
        load, i = heapq.heappop(heap)
        out[i].append(t)
        heapq.heappush(heap, (load + t.numel(), i))
    return [part for part in out if part]


def map_parts(fn: Callable[[list[torch.Tensor]], object], tensors: list[torch.Tensor]) -> list:
    """``fn`` over balanced parts of ``tensors``, in worker threads when that pays; the results."""
    threads = torch.get_num_threads()
    if threads <= 1 or sum(t.numel() for t in tensors) < INLINE_BELOW:
        return [fn(tensors)]
    return list(_get_pool(threads).map(fn, balanced(tensors, threads)))
