"""Per-tensor CPU work, kept clear of OpenMP barriers when the machine is crowded (private).

torch parallelises each CPU op on its own: every ``dot`` or ``mul_`` on a large tensor starts
an OpenMP team and ends in a barrier that waits for all of its threads. A clip over 190
tensors passes some 200 to 400 such barriers. On a quiet machine each costs microseconds and
torch's own threading is the fastest way through (measured: 1.4 times one plain read of the
bytes, against 1.8 to 2 for the worker threads below). On a crowded one (CI's two shared
cores, a notebook beside a browser and a test run) a barrier waits until the scheduler runs a
descheduled thread again, and we measured a whole clip at over a second, thirty times one
read of the same bytes.

So when the load average passes twice the core count, the tensors are dealt, balanced by size, to
as many worker threads as torch would use, and each worker runs its ops single-threaded: the
same parallelism, and the only wait is one join at the end (torch lets go of the GIL inside
every op). ``torch.set_num_threads`` is per thread for OpenMP and MKL, so the workers' setting
never reaches the caller's thread.
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
PIECE = 1 << 22  # entries: larger dense tensors are cut up, so one huge one still uses every core

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


def _pieces(t: torch.Tensor) -> list[torch.Tensor]:
    flat = dense_view(t) if t.numel() > PIECE else None
    return [t] if flat is None else list(flat.split(PIECE))


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


def busy() -> bool:
    """Is the machine crowded: a one-minute load average above twice the number of cores?

    Twice, because a clip's own OpenMP threads already count up to one load per core.
    """
    try:
        return os.getloadavg()[0] > 2 * (os.cpu_count() or 1)
    except (AttributeError, OSError):  # no load average (Windows): assume a quiet machine
        return False


def map_parts(fn: Callable[[list[torch.Tensor]], object], tensors: list[torch.Tensor]) -> list:
    """``fn`` over parts of ``tensors``: all in one call here, or dealt to workers when busy.

    ``fn`` must not care how a tensor is cut: large dense ones arrive as 1-D pieces.
    """
    threads = torch.get_num_threads()
    if threads <= 1 or sum(t.numel() for t in tensors) < INLINE_BELOW or not busy():
        return [fn(tensors)]
    pieces = [piece for t in tensors for piece in _pieces(t)]
    return list(_get_pool(threads).map(fn, balanced(pieces, threads)))
