"""Independent references that several test files compare clipkit against.

Each goes through another implementation (torch.nn.utils, numpy in float64), never through
clipkit, so a bug in clipkit cannot hide by agreeing with itself.
"""

from __future__ import annotations

import math

import numpy as np
import torch


def torch_clip_norm(row: torch.Tensor, v: float) -> torch.Tensor:
    """``row`` clipped by torch.nn.utils.clip_grad_norm_ (torch's rule, with its 1e-6)."""
    p = torch.nn.Parameter(torch.zeros_like(row))
    p.grad = row.clone()
    torch.nn.utils.clip_grad_norm_([p], v)
    return p.grad


def torch_clip_value(row: torch.Tensor, v: float) -> torch.Tensor:
    """``row`` clipped entry by entry by torch.nn.utils.clip_grad_value_."""
    p = torch.nn.Parameter(torch.zeros_like(row))
    p.grad = row.clone()
    torch.nn.utils.clip_grad_value_([p], v)
    return p.grad


def np_angle(a, b) -> float:
    """The angle between vectors ``a`` and ``b`` in degrees, by numpy in float64."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    c = a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
    return math.degrees(math.acos(max(-1.0, min(1.0, c))))
