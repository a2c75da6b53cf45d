"""Slope, curvature and the Newton step: what a second-order method divides by.

Martens and Sutskever (2011) point out that second derivatives may vanish together with the
first, so that their ratio, the length of a Newton step, can stay steady where the gradient
alone would crawl. The functions here compute that ratio for any 1-D function by autograd,
give it in closed form for the exponential, and take Newton steps in one and two dimensions,
with a saddle to show where second-order steps mislead. The ravine, and the momentum methods
that replaced second-order ones in practice, are in :mod:`clipkit.momentum`.

Everything is batched: leading dimensions of ``x`` (1-D functions) or of ``p`` without its last
axis (2-D functions) are independent points, so a whole curve or grid is one call. Results stay
on the inputs' device and carry no autograd graph.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

Function = Callable[[torch.Tensor], torch.Tensor]


# --- 1-D: slope, curvature and their ratio -------------------------------------------------


def slope_and_curvature(f: Function, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """First and second derivatives f'(x), f''(x) of an elementwise function, by autograd.

    ``f`` must act elementwise (each output depends on its own input only), so that the
    gradient of ``f(x).sum()`` is f' at every point at once.

    >>> s, c = slope_and_curvature(lambda t: t**3, torch.tensor([1.0, 2.0]))
    >>> s.tolist(), c.tolist()
    ([3.0, 12.0], [6.0, 12.0])
    """
    # enable_grad: the demos call this inside torch.no_grad() blocks too
    with torch.enable_grad():
        x = x.detach().requires_grad_(True)
        (slope,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
        if slope.requires_grad:
            (curv,) = torch.autograd.grad(slope.sum(), x, allow_unused=True)
        else:  # f is affine: its slope does not depend on x
            curv = None
    curv = torch.zeros_like(x) if curv is None else curv
    return slope.detach(), curv.detach()


def slope_curvature_ratio(f: Function, x: torch.Tensor) -> torch.Tensor:
    """f'(x) / f''(x), by autograd: the length (with sign) of the 1-D Newton step.

    Where f'' = 0 the ratio is inf or nan, as IEEE division gives it.

    >>> slope_curvature_ratio(lambda t: torch.exp(2 * t), torch.tensor([-3.0, 0.0, 1.0])).tolist()
    [0.5, 0.5, 0.5]
    """
    slope, curv = slope_and_curvature(f, x)
    return slope / curv


def newton_step_1d(f: Function, x: torch.Tensor) -> torch.Tensor:
    """One Newton step x - f'(x) / f''(x), elementwise.

    On a quadratic it lands on the stationary point; where f'' < 0 it climbs towards a maximum.

    >>> newton_step_1d(lambda t: (t - 3) ** 2, torch.tensor([-1.0, 10.0])).tolist()
    [3.0, 3.0]
    """
    return x - slope_curvature_ratio(f, x)


# --- the exponential of steepness a, in closed form ----------------------------------------


def exponential(x: torch.Tensor, a: float | torch.Tensor) -> torch.Tensor:
    """f(x) = exp(a x); a negative ``a`` gives the falling curve exp(-|a| x).

    >>> exponential(torch.tensor([0.0]), 3.0).tolist()
    [1.0]
    """
    return torch.exp(a * x)


def exponential_derivatives(
    x: torch.Tensor, a: float | torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(f, f', f'') of f(x) = exp(a x) in closed form: (e^{ax}, a e^{ax}, a^2 e^{ax}).

    All three shrink together as a x goes to minus infinity: the case Martens and Sutskever
    had in mind, where the slope vanishes and the curvature vanishes with it.

    >>> f, s, c = exponential_derivatives(torch.tensor(0.0), 2.0)
    >>> f.item(), s.item(), c.item()
    (1.0, 2.0, 4.0)
    """
    f = torch.exp(a * x)
    return f, a * f, a * a * f


def exponential_ratio(x: torch.Tensor, a: float | torch.Tensor) -> torch.Tensor:
    """f'/f'' = 1/a for f = exp(a x), at every x: the Newton step has the same length everywhere.

    Broadcast to the shape of ``x`` so that it can be compared point by point.

    >>> exponential_ratio(torch.tensor([-5.0, 0.0, 5.0]), 4.0).tolist()
    [0.25, 0.25, 0.25]
    """
    a = torch.as_tensor(a, dtype=x.dtype, device=x.device)
    return torch.broadcast_to(1.0 / a, torch.broadcast_shapes(x.shape, a.shape)).clone()


# --- 2-D: gradient, Hessian and the Newton step --------------------------------------------


def gradient_and_hessian(f: Function, p: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradient (..., d) and Hessian (..., d, d) of ``f`` at the points ``p`` of shape (..., d).

    ``f`` maps (..., d) to (...), each point on its own, so one backward pass per coordinate
    gives a whole row of every Hessian in the batch (d passes in all, d is 2 here).

    >>> g, h = gradient_and_hessian(saddle_loss, torch.tensor([1.0, 2.0]))
    >>> g.tolist(), h.tolist()
    ([2.0, -4.0], [[2.0, 0.0], [0.0, -2.0]])
    """
    with torch.enable_grad():
        p = p.detach().requires_grad_(True)
        (grad,) = torch.autograd.grad(f(p).sum(), p, create_graph=True)
        rows = []
        for i in range(p.shape[-1]):
            row = None
            if grad.requires_grad:  # False when f is affine
                (row,) = torch.autograd.grad(
                    grad[..., i].sum(), p, retain_graph=True, allow_unused=True
                )
            rows.append(torch.zeros_like(p) if row is None else row)
    return grad.detach(), torch.stack(rows, dim=-2).detach()


def newton_step(f: Function, p: torch.Tensor) -> torch.Tensor:
    """One Newton step p - H^{-1} g at every point of the batch ``p`` (..., d).

    The step goes to the stationary point of the local quadratic model, whatever its kind:
    a minimum, a maximum or a saddle. A singular Hessian raises torch's LinAlgError.

    >>> newton_step(saddle_loss, torch.tensor([[0.8, 0.3], [-1.0, 2.0]])).tolist()
    [[0.0, 0.0], [0.0, 0.0]]
    """
    grad, hess = gradient_and_hessian(f, p)
    return p - torch.linalg.solve(hess, grad.unsqueeze(-1)).squeeze(-1)


def gradient_step(f: Function, p: torch.Tensor, lr: float | torch.Tensor) -> torch.Tensor:
    """One plain gradient step p - lr * grad f(p), batched like :func:`newton_step`.

    >>> gradient_step(saddle_loss, torch.tensor([1.0, 0.5]), 0.25).tolist()
    [0.5, 0.75]
    """
    grad, _ = gradient_and_hessian(f, p)
    return p - lr * grad


def hessian_bytes(n_params: int, bytes_per_entry: int = 4) -> int:
    """Memory for a dense n x n Hessian: n^2 entries (float32 by default), before any solve.

    A solve with it costs another order n^3 operations, which is why full Newton stays a toy.

    >>> hessian_bytes(10**6) // 10**12  # a million parameters: 4 terabytes
    4
    """
    return int(n_params) ** 2 * int(bytes_per_entry)


# --- two test surfaces ---------------------------------------------------------------------


def saddle_loss(p: torch.Tensor) -> torch.Tensor:
    """f(x, y) = x^2 - y^2 on points (..., 2): a minimum along x, a maximum along y.

    Its only stationary point, (0, 0), is a saddle. A Newton step jumps straight onto it from
    anywhere, because H = diag(2, -2) turns the uphill y-component of the gradient around;
    a gradient step shrinks x by (1 - 2 lr) and grows y by (1 + 2 lr), away from the saddle.

    >>> saddle_loss(torch.tensor([[1.0, 0.0], [0.0, 1.0]])).tolist()
    [1.0, -1.0]
    """
    return p[..., 0] ** 2 - p[..., 1] ** 2


def saddle_grad(p: torch.Tensor) -> torch.Tensor:
    """The gradient of :func:`saddle_loss` in closed form, (2x, -2y), for ``descend``.

    >>> saddle_grad(torch.tensor([1.0, 0.5])).tolist()
    [2.0, -1.0]
    """
    return torch.stack([2 * p[..., 0], -2 * p[..., 1]], dim=-1)
