"""Where clipkit's demos put their tensors.

The math functions never choose a device themselves: they follow their inputs. Only the
notebooks and demos, which create tensors from nothing, ask :func:`default_device`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import torch

ENV_VAR = "CLIPKIT_DEVICE"


def default_device() -> torch.device:
    """The device for new tensors: ``$CLIPKIT_DEVICE`` if set, else cuda, then mps, then cpu.

    >>> import os
    >>> os.environ["CLIPKIT_DEVICE"] = "cpu"
    >>> default_device()
    device(type='cpu')
    >>> del os.environ["CLIPKIT_DEVICE"]
    """
    chosen = os.environ.get(ENV_VAR, "").strip()
    if chosen:
        try:
            return torch.device(chosen)
        except RuntimeError as err:
            raise ValueError(
                f"{ENV_VAR}={chosen!r} is not a torch device (try 'cpu', 'cuda' or 'mps')"
            ) from err
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


@contextmanager
def one_thread() -> Iterator[None]:
    """Run the block on one CPU thread, then restore the thread count.

    For many small products (a 32 x 32 recurrent net, a grid of one-unit nets): more threads
    gain nothing there and lose a lot on a busy machine, and a chaotic run then gives the same
    bits whatever the machine's thread count.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
