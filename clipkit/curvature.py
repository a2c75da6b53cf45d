"""Slope, curvature and the Newton step: what a second-order method divides by.

Martens and Sutskever (2011) point out that second derivatives may vanish together with the
first, so that their ratio, the length of a Newton step, can stay steady where the gradient
alone would crawl. The functions here compute that ratio for any 1-D function by autograd,
give it in closed form for the exponential, and take Newton steps in one and two dimensions,
with a saddle and a ravine to show where second-order steps help and where they mislead.

Everything is batched: leading dimensions of ``x`` (1-D functions) or of ``p`` without its last
axis (2-D functions) are independent points, so a whole curve or grid is one call. Results stay
on the inputs' device and carry no autograd graph.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

Function = Callable[[torch.Tensor], torch.Tensor]

RAVINE_KAPPA = 50.0  # curvature across the ravine over curvature along it: the condition number


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


def ravine_loss(p: torch.Tensor, kappa: float = RAVINE_KAPPA) -> torch.Tensor:
    """f(x, y) = (x^2 + kappa y^2) / 2 on points (..., 2): a long, narrow valley along x.

    The Hessian is diag(1, kappa). Plain descent must keep lr < 2 / kappa to stay stable
    across the valley, and then it moves along the floor by a factor (1 - lr) per step only.
    Axis-aligned on purpose: gradient descent and momentum are unchanged by a rotation of the
    plane, so a tilted valley would look different but give the same numbers.

    >>> ravine_loss(torch.tensor([[2.0, 0.0], [0.0, 1.0]]), kappa=10.0).tolist()
    [2.0, 5.0]
    """
    return 0.5 * (p[..., 0] ** 2 + kappa * p[..., 1] ** 2)


def ravine_grad(p: torch.Tensor, kappa: float = RAVINE_KAPPA) -> torch.Tensor:
    """The gradient of :func:`ravine_loss` in closed form, (x, kappa y).

    A demo's slider runs hundreds of steps per move; a closed form costs a few microseconds a
    step where autograd costs a hundred.

    >>> ravine_grad(torch.tensor([2.0, 1.0]), kappa=10.0).tolist()
    [2.0, 10.0]
    """
    return torch.stack([p[..., 0], kappa * p[..., 1]], dim=-1)


# --- how large a step momentum tolerates ---------------------------------------------------


def stable_step_limit(
    curvature: float | torch.Tensor, momentum: float | torch.Tensor = 0.0, nesterov: bool = False
) -> torch.Tensor:
    """The largest step size eps for which descent on a quadratic of this curvature h settles.

    On f(x) = h x^2 / 2, with the update of :func:`clipkit.descent.descend`, the iterates obey
    a two-term recurrence; its roots stay inside the unit circle exactly when

        plain (mu = 0):   eps h < 2
        heavy ball:       eps h < 2 (1 + mu)
        Nesterov:         eps h < 2 (1 + mu) / (1 + 2 mu)

    so heavy-ball momentum widens the range of safe steps and Nesterov momentum narrows it.
    In a ravine the largest curvature (kappa across the valley) sets the limit.

    >>> plain, nesterov = stable_step_limit(50.0), stable_step_limit(50.0, 0.9, nesterov=True)
    >>> round(plain.item(), 4), round(nesterov.item(), 4)
    (0.04, 0.0271)
    """
    h, mu = torch.as_tensor(curvature), torch.as_tensor(momentum)
    # follow a float64 argument (a demo's batch of momenta); plain numbers give the default dtype
    dtype = torch.promote_types(h.dtype, mu.dtype)
    if not dtype.is_floating_point:
        dtype = torch.get_default_dtype()
    h, mu = h.to(dtype), mu.to(dtype=dtype, device=h.device)
    # Jury's test on z^2 - c(1 + mu) z + c mu (Nesterov, c = 1 - eps h) or on
    # z^2 - (1 + mu - eps h) z + mu (heavy ball); the binding condition is at z = -1.
    factor = 2 * (1 + mu) / (1 + 2 * mu) if nesterov else 2 * (1 + mu)
    return factor / h


# --- the ravine race: plain descent against Nesterov momentum ------------------------------

RAVINE_START = (-4.0, 1.0)  # far along the valley floor, and up one wall
SETTLE_TARGET = 1e-3  # "at the bottom": the loss stays below this


def steps_to_settle(losses: torch.Tensor, target: float = SETTLE_TARGET) -> torch.Tensor:
    """(...,) int64: the first step t after which losses[..., t:] all stay below ``target``.

    -1 where the run has not settled by its last step. Momentum makes a loss curve ring, so
    "first dip below the target" would flatter it; this counts only for good.

    >>> steps_to_settle(torch.tensor([[5.0, 1e-4, 2.0, 1e-4], [5.0, 4.0, 3.0, 2.0]])).tolist()
    [3, -1]
    """
    above = losses >= target  # NaN compares False; descend never stores one
    t = torch.arange(losses.shape[-1], device=losses.device)
    last_above = torch.where(above, t, torch.full_like(t, -1)).amax(-1)
    settled = last_above < losses.shape[-1] - 1
    return torch.where(settled, last_above + 1, torch.full_like(last_above, -1))


def ravine_race(
    step_size: float | torch.Tensor,
    momentum: float | torch.Tensor,
    steps: int,
    *,
    start: tuple[float, float] | torch.Tensor = RAVINE_START,
    kappa: float = RAVINE_KAPPA,
    bounds=None,
):
    """Plain descent and Nesterov momentum, same start and step size, on :func:`ravine_loss`.

    Returns ``(run, losses)``: ``run`` is a :class:`clipkit.descent.Descent` whose last batch
    axis has length 2 (index 0 plain, momentum 0; index 1 Nesterov with ``momentum``), and
    ``losses`` (..., 2, steps + 1) the loss at every point of both paths. ``step_size`` and
    ``momentum`` may be tensors that broadcast together, for a sweep in one call.

    >>> run, losses = ravine_race(0.02, 0.9, 100, start=torch.tensor(RAVINE_START).double())
    >>> [f"{v:.3g}" for v in losses[..., -1].tolist()]
    ['0.141', '3.08e-05']
    """
    from clipkit.descent import descend  # a sibling math module, no cycle

    start = torch.as_tensor(start)
    if not start.is_floating_point():
        start = start.to(torch.get_default_dtype())
    as_t = lambda v: torch.as_tensor(v, dtype=start.dtype, device=start.device)  # noqa: E731
    mu = as_t(momentum)
    mus = torch.stack([torch.zeros_like(mu), mu], dim=-1)  # (..., 2): plain, then Nesterov
    eps = as_t(step_size).unsqueeze(-1)
    # Nesterov with mu = 0 is plain descent exactly, so one call runs both
    run = descend(
        lambda p: ravine_grad(p, kappa),
        start,
        eps,
        steps,
        momentum=mus,
        nesterov=True,
        bounds=bounds,
    )
    return run, ravine_loss(run.path, kappa)


def momentum_path_on_quadratic(
    curvatures: torch.Tensor | tuple[float, ...],
    start: torch.Tensor,
    step_size: float | torch.Tensor,
    momentum: float | torch.Tensor,
    steps: int,
    *,
    nesterov: bool = True,
) -> torch.Tensor:
    """Path (..., steps + 1, d) of momentum descent on f = sum_i h_i theta_i^2 / 2, in closed form.

    The same iterates as :func:`clipkit.descent.descend` (no clipping, no bounds), but on a
    diagonal quadratic each coordinate follows a linear map of (theta, u):

        Nesterov:    theta' = c theta + mu c u,  u' = -eps h theta + mu c u,  with c = 1 - eps h
        heavy ball:  theta' = c theta + mu u,    u' = -eps h theta + mu u

    so the whole path is M^t applied to (theta_0, 0). The powers M^0 .. M^steps come from
    log2(steps) batched matrix products instead of one Python step each, which lets a slider
    rerun hundreds of steps in a millisecond. ``step_size`` and ``momentum`` broadcast against
    ``start.shape[:-1]``. A run that blows up overflows to inf or nan; ``descend`` stops instead.

    >>> start = torch.tensor([-4.0, 1.0], dtype=torch.float64)
    >>> p = momentum_path_on_quadratic((1.0, 50.0), start, 0.02, 0.9, 2)
    >>> [round(v, 4) for v in p[-1].tolist()]
    [-3.771, 0.0]
    """
    h = torch.as_tensor(curvatures, dtype=start.dtype, device=start.device)
    eps = torch.as_tensor(step_size, dtype=start.dtype, device=start.device)
    mu = torch.as_tensor(momentum, dtype=start.dtype, device=start.device)
    batch = torch.broadcast_shapes(start.shape[:-1], eps.shape, mu.shape)
    eps, mu = eps.expand(batch)[..., None], mu.expand(batch)[..., None]  # (..., 1) against d
    c = 1 - eps * h
    carry = mu * c if nesterov else mu.expand_as(c)  # what u contributes to theta' and to u'
    # M: (..., d, 2, 2) acting on the column (theta, u)
    m = torch.stack([torch.stack([c, carry], -1), torch.stack([-eps * h, carry], -1)], -2)
    powers = torch.eye(2, dtype=start.dtype, device=start.device).expand(*m.shape[:-2], 1, 2, 2)
    square = m  # M^(2^k)
    while powers.shape[-3] < steps + 1:
        # doubling: from M^0..M^(n-1), the next n powers are those times M^n
        powers = torch.cat([powers, powers @ square.unsqueeze(-3)], dim=-3)
        square = square @ square
    theta0 = start.expand(*batch, start.shape[-1])
    # theta_t = (M^t)[0, 0] theta_0, since the velocity starts at zero
    path = powers[..., : steps + 1, 0, 0] * theta0.unsqueeze(-1)  # (..., d, steps + 1)
    return path.transpose(-1, -2)
