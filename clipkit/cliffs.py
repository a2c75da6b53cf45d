"""Loss surfaces with cliffs: where a gradient step goes wrong.

A recurrent net applies its weight once per time step, so its loss can hold terms like
``w**T``: flat for ``|w| < 1`` and exploding once ``|w|`` passes 1. The toys here keep that
shape with one or two parameters so that a learner can see the whole landscape.
"""

from __future__ import annotations

import torch

CLIFF_EXPONENT = 20  # the number of time steps the toy pretends to unroll


def one_weight_cliff_loss(w: torch.Tensor, exponent: int = CLIFF_EXPONENT) -> torch.Tensor:
    """The one-weight cliff, L(w) = log(1 + w**n), elementwise, with n = 20 by default.

    The logarithm keeps the loss readable on a plot while ``w**n`` supplies the cliff.

    >>> one_weight_cliff_loss(torch.tensor([0.0, 1.0])).tolist()
    [0.0, 0.6931471824645996]
    """
    return torch.log1p(w**exponent)


def one_weight_cliff_grad(w: torch.Tensor, exponent: int = CLIFF_EXPONENT) -> torch.Tensor:
    """Its slope in closed form, dL/dw = n w**(n-1) / (1 + w**n), elementwise.

    >>> round(one_weight_cliff_grad(torch.tensor(0.90, dtype=torch.float64)).item(), 2)
    2.41
    """
    return exponent * w ** (exponent - 1) / (1 + w**exponent)


def power_growth(radius: float | torch.Tensor, steps: int) -> torch.Tensor:
    """``radius**t`` for t = 0, 1, ..., steps: how a direction with that eigenvalue scales.

    A recurrent net multiplies its state by the same matrix once per time step, so the part of
    the state along an eigenvector with eigenvalue ``radius`` is scaled by ``radius**t`` after
    ``t`` steps: it explodes for ``radius > 1`` and fades for ``radius < 1``. A tensor
    ``radius`` of shape ``(...)`` gives ``(..., steps + 1)``; a number is taken in float64.

    >>> round(power_growth(1.1, 50)[-1].item(), 1)
    117.4
    """
    r = torch.as_tensor(radius, dtype=torch.float64 if not torch.is_tensor(radius) else None)
    t = torch.arange(steps + 1, dtype=r.dtype, device=r.device)
    return r.unsqueeze(-1) ** t


def one_weight_cliff_step(
    w: torch.Tensor, lr: float | torch.Tensor, exponent: int = CLIFF_EXPONENT
) -> torch.Tensor:
    """One plain gradient-descent step on the one-weight cliff: w - lr * dL/dw.

    >>> w = torch.tensor([0.90, 1.05], dtype=torch.float64)
    >>> [round(x, 2) for x in one_weight_cliff_step(w, 0.1).tolist()]
    [0.66, -0.33]
    """
    return w - lr * one_weight_cliff_grad(w, exponent)
