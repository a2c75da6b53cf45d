"""Where clipkit's demos put their tensors.

The math functions never choose a device themselves: they follow their inputs. Only the
notebooks and demos, which create tensors from nothing, ask :func:`default_device`.
"""

from __future__ import annotations

import os

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
