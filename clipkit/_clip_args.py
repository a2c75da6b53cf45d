"""Argument checks shared by clipkit's clipping functions (private).

Every public clipping function runs all of these before it reads or writes a single gradient,
so a bad argument costs nothing: it raises, naming the argument and the value, and the model is
left exactly as it was. torch accepts some of these values silently (a negative ``max_norm``
flips every gradient, a NaN one turns them all into NaN); clipkit refuses them.
"""

from __future__ import annotations

import math
import numbers
import types
import warnings
from collections.abc import Iterable

import torch

POLICIES = ("propagate", "error", "random")
FOREACH_DEVICES = ("cpu", "cuda", "xpu")  # where torch has _foreach kernels


def _real(name: str, value: object) -> float:
    # bool is an int to Python, but max_norm=True is a slip, never a threshold of 1.
    if isinstance(value, bool) or isinstance(value, torch.Tensor) and value.dtype == torch.bool:
        raise TypeError(f"{name} must be a real number, not the bool {value!r}")
    if isinstance(value, torch.Tensor):
        if value.numel() != 1 or value.is_complex():
            raise TypeError(f"{name} must be a real number, got a tensor of shape {value.shape}")
        return float(value)  # one host read; pass a Python number to avoid it on a GPU
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    return float(value)


def threshold(name: str, value: object) -> float:
    """``value`` as a float > 0. Infinity is allowed and means "never clip"."""
    v = _real(name, value)
    if math.isnan(v) or v <= 0:
        raise ValueError(f"{name} must be a positive number (inf allowed), got {value!r}")
    return v


def thresholds(name: str, value: object) -> float | torch.Tensor:
    """Like :func:`threshold`, but a tensor of thresholds (one per run) is allowed too.

    A tensor is checked with one read back to the host, once, before any work.
    """
    if not isinstance(value, torch.Tensor) or value.ndim == 0:
        return threshold(name, value)
    if value.is_complex() or value.dtype == torch.bool:
        raise TypeError(f"{name} must hold real numbers, got a tensor of {value.dtype}")
    if not bool((value > 0).all()):  # NaN compares False, so it is refused too
        raise ValueError(f"{name} must hold positive numbers (inf allowed), got {value!r}")
    return value


def given_norm(value: object) -> None:
    """A total norm handed in by the caller: a tensor or a number, never negative.

    inf and NaN pass (they are what "propagate" acts on). A norm on a GPU is not read back.
    """
    if isinstance(value, torch.Tensor) and value.device.type != "cpu":
        return
    v = _real("total_norm", value)
    if v < 0:
        raise ValueError(f"total_norm is a norm and cannot be negative, got {value!r}")


def norm_type(value: object) -> float:
    """``value`` as a float p > 0; the string ``'inf'`` is accepted, as torch accepts it."""
    if isinstance(value, str):
        try:
            v = float(value)
        except ValueError:
            raise ValueError(f"norm_type must be a number or 'inf', got {value!r}") from None
    else:
        v = _real("norm_type", value)
    # p < 1 gives no norm (the triangle inequality fails) but torch computes it, so we do too;
    # p <= 0 is not even that: p = 0 counts non-zeros and a negative p rewards tiny entries.
    if math.isnan(v) or v <= 0:
        raise ValueError(f"norm_type must be > 0 (or inf), got {value!r}")
    return v


def tensors(name: str, value: object, *, warn_empty_generator: bool = False) -> list:
    """A single tensor or an iterable of tensors, as a list read once (generators included).

    ``None`` entries are kept here; the callers drop missing gradients themselves.
    """
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(
            f"{name} must be a tensor or an iterable of tensors, got {type(value).__name__}"
        )
    is_generator = isinstance(value, types.GeneratorType)
    items = list(value)  # read once: model.parameters() is a generator
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, torch.Tensor):
            raise TypeError(
                f"{name}[{i}] must be a torch.Tensor, got {item!r} ({type(item).__name__})"
            )
    if warn_empty_generator and is_generator and not items:
        warnings.warn(f"`{name}` is an empty generator: nothing will be clipped", stacklevel=4)
    return items


def grads_of(params: list) -> list[torch.Tensor]:
    """The gradients that exist, in order; parameters without one are skipped, as in torch."""
    return [p.grad for p in params if p is not None and p.grad is not None]


def policy(nonfinite: object, error_if_nonfinite: object) -> str:
    """The effective non-finite policy; torch's ``error_if_nonfinite=True`` means ``"error"``."""
    if nonfinite not in POLICIES:
        raise ValueError(f"nonfinite must be one of {POLICIES}, got {nonfinite!r}")
    if error_if_nonfinite:
        if nonfinite == "random":
            raise ValueError(
                "error_if_nonfinite=True contradicts nonfinite='random'; pass only one of them"
            )
        return "error"
    return str(nonfinite)


def foreach(value: object) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise TypeError(f"foreach must be None, True or False, got {value!r}")
    return value


def generator(value: object) -> torch.Generator | None:
    if value is not None and not isinstance(value, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got {value!r}")
    return value
