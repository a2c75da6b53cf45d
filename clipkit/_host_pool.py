"""Per-tensor CPU work kept clear of OpenMP barriers when the machine is crowded (private).

torch parallelises each CPU op on its own: every ``dot`` or ``mul_`` on a large tensor starts
an OpenMP team and ends in a barrier that waits for all of its threads, some 200 to 400
barriers for a clip over 190 tensors. On a quiet machine each costs microseconds, and torch's
threading is the fastest way through: 1.2 to 1.35 times one plain read of the bytes, where
the worker threads below take 1.3 to 1.45 (they pay for cutting the tensors up in Python). On
a crowded machine (CI's two shared cores, a notebook beside a browser and a test run) a
barrier waits until the scheduler runs a descheduled thread again, and we measured a whole
clip at over a second, thirty times one read of the same bytes, where the workers took 1.0 to
1.4 reads.

So when the load average passes one and a half times the core count, the work is cut into one
part per thread torch would use (each large tensor sliced as OpenMP would slice it) and handed
to worker threads that run their ops single-threaded: OpenMP's parallelism, with one join at
the end instead of a barrier per op (torch lets go of the GIL inside every op).
``torch.set_num_threads`` is per thread for OpenMP and MKL, so the workers' setting never
reaches the caller's thread.
"""

from __future__ import annotations

import heapq
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import torch

# Below 64k entries in all, hardly any tensor reaches the 32,768 entries at which torch starts
# an OpenMP team, and a hand-off to a worker costs more than the work.
INLINE_BELOW = 1 << 16
SPLIT_FROM = 1 << 15  # entries: from here torch would parallelise a tensor, and so do we

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


if hasattr(os, "register_at_fork"):  # POSIX only; Windows has no fork to survive
    os.register_at_fork(after_in_child=_forget_pool)


def dense_view(t: torch.Tensor) -> torch.Tensor | None:
    """``t`` as a 1-D view if its entries fill one block of memory in some order, else None.

    A transposed or channels-last gradient has no gaps, only another order; a sum of squares,
    a scale or a clamp does not care about order, so they can run on the block directly.

    >>> dense_view(torch.zeros(3, 4).t()).shape, dense_view(torch.zeros(4, 6)[:, ::2])
    (torch.Size([12]), None)
    """
    if t.is_contiguous():
        return t.view(-1)
    expected = 1
    for stride, size in sorted((s, n) for s, n in zip(t.stride(), t.shape, strict=True) if n != 1):
        if stride != expected:
            return None  # gaps or overlaps
        expected *= size
    return t.as_strided((t.numel(),), (1,))


def split(tensors: list[torch.Tensor], parts: int) -> list[list[torch.Tensor]]:
    """Cut every large dense tensor into ``parts`` slices, worker i taking slice i of each.

    That is OpenMP's own static schedule, so each core streams through the same mix of memory,
    cached and not, and all finish together; measured on 200 MB it beats dealing whole tensors
    by 20 %. Small tensors, and large ones with gaps, go whole to the lightest part.

    >>> [[t.numel() for t in part] for part in split([torch.zeros(100_000), torch.zeros(9)], 2)]
    [[50000, 9], [50000]]
    """
    out: list[list[torch.Tensor]] = [[] for _ in range(parts)]
    whole = []
    for t in tensors:
        flat = dense_view(t) if t.numel() >= SPLIT_FROM else None
        if flat is None:
            whole.append(t)
        else:
            for part, piece in zip(out, flat.chunk(parts), strict=False):
                part.append(piece)
    heap = [(sum(t.numel() for t in part), i) for i, part in enumerate(out)]
    heapq.heapify(heap)
    for t in sorted(whole, key=torch.Tensor.numel, reverse=True):
        load, i = heapq.heappop(heap)
        out[i].append(t)
        heapq.heappush(heap, (load + t.numel(), i))
    return [part for part in out if part]


def busy() -> bool:
    """Is the machine crowded: a one-minute load average above 1.5 times the core count?

    Not 1 times: a clip's own OpenMP threads already count up to one load per core.
    """
    try:
        return os.getloadavg()[0] > 1.5 * (os.cpu_count() or 1)
    except (AttributeError, OSError):  # no load average (Windows): assume a quiet machine
        return False


def map_parts(fn: Callable[[list[torch.Tensor]], object], tensors: list[torch.Tensor]) -> list:
    """``fn`` over ``tensors`` in one call, or over one part per worker thread when ``busy()``.

    ``fn`` must not care how a tensor is cut: large dense ones arrive as 1-D slices.
    """
    threads = torch.get_num_threads()
    if threads <= 1 or sum(t.numel() for t in tensors) < INLINE_BELOW or not busy():
        return [fn(tensors)]
    return list(_get_pool(threads).map(fn, split(tensors, threads)))
