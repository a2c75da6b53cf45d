"""The ravine and momentum: what Sutskever et al. (2013) used instead of second-order steps.

Nesterov momentum with careful initialisation reached much of what Hessian-free optimisation
did, for one gradient per step. The functions here set up a ravine (a quadratic with condition
number kappa), give the step-size limits of plain, heavy-ball and Nesterov descent on it, race
them in one batched :func:`clipkit.descent.descend` call, and compute the same iterates in
closed form for a demo's slider. Results stay on the inputs' device.
"""

from __future__ import annotations

import torch

from clipkit.descent import descend

RAVINE_KAPPA = 50.0  # curvature across the ravine over curvature along it: the condition number


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
