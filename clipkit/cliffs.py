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
