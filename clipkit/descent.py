"""Gradient descent, plain and clipped, on many runs at once.

Every leading dimension is a batch dimension: a grid of start points times a vector of step
sizes (or thresholds, or momenta) is one call, and each run is an independent row. A run that
leaves the picture (``bounds``) or whose next point would not be finite stops where it is, so a
path never holds an overflow or a NaN and the rest of the batch carries on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from clipkit import _clip_args as check
from clipkit.clipping_functional import book_clip_factor

GradFn = Callable[[torch.Tensor], torch.Tensor]


def gradient_of(loss_fn: Callable[[torch.Tensor], torch.Tensor]) -> GradFn:
    """Turn a batched loss ``(..., dim) -> (...)`` into its gradient ``(..., dim) -> (..., dim)``.

    Autograd differentiates the sum of the losses; because each row's loss depends on that row
    alone, the result is every row's own gradient in one backward pass.

    >>> grad = gradient_of(lambda p: (p**2).sum(-1))
    >>> grad(torch.tensor([[1.0, 2.0], [3.0, -1.0]])).tolist()
    [[2.0, 4.0], [6.0, -2.0]]
    """

    def grad_fn(x: torch.Tensor) -> torch.Tensor:
        # enable_grad: the caller may be inside torch.no_grad(), e.g. a widget's update.
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(loss_fn(x).sum(), x)
        return g

    return grad_fn


@dataclass(frozen=True)
class Descent:
    """The runs of :func:`descend`. ``...`` is the broadcast batch shape.

    path: (..., steps + 1, dim); ``path[..., 0, :]`` is the start, ``path[..., t, :]`` the point
        after update t. A stopped run repeats its last point.
    grad_norms: (..., steps); the norm of the gradient that update t + 1 used, before clipping
        (at the look-ahead point for Nesterov). Zero once the run has stopped; it can be inf or
        NaN at the very update where a run broke down.
    left_at: (...,) int64; the first t whose point is outside ``bounds`` or not finite, else -1.
        The path keeps a finite point that left (so a plot can show it leaving); a non-finite
        one is never stored, the run stays at its last finite point instead.
    diverged: (...,) bool; the run stopped because its next point was not finite.
    """

    path: torch.Tensor
    grad_norms: torch.Tensor
    left_at: torch.Tensor
    diverged: torch.Tensor

    @property
    def left(self) -> torch.Tensor:
        """(...,) bool: did the run leave ``bounds`` (or stop on a non-finite point)?"""
        return self.left_at >= 0

    @property
    def final(self) -> torch.Tensor:
        """(..., dim): where each run ended."""
        return self.path[..., -1, :]


def _bounds(bounds, dim: int, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if bounds is None:
        inf = torch.full((dim,), float("inf"), dtype=like.dtype, device=like.device)
        return -inf, inf
    box = torch.as_tensor(bounds, dtype=like.dtype, device=like.device)
    if box.shape != (dim, 2):
        raise ValueError(f"bounds must be {dim} pairs (low, high), got shape {tuple(box.shape)}")
    return box[:, 0], box[:, 1]


def descend(
    grad_fn: GradFn,
    start: torch.Tensor | Sequence[float],
    step_size: float | torch.Tensor,
    steps: int,
    *,
    max_norm: float | torch.Tensor | None = None,
    momentum: float | torch.Tensor = 0.0,
    nesterov: bool = False,
    bounds: Sequence[Sequence[float]] | torch.Tensor | None = None,
) -> Descent:
    """Run ``steps`` updates of gradient descent for every run in the batch.

    With velocity u (zero at the start), step size eps, momentum mu and gradient g:

        plain and heavy-ball:  u <- mu u - eps g(theta);          theta <- theta + u
        Nesterov:              u <- mu u - eps g(theta + mu u);   theta <- theta + u

    (Sutskever et al. 2013, Eqs. 1-4). With ``max_norm`` = v, each run's gradient is clipped
    first by the book's rule, Eq. 10.48: if ||g|| > v then g <- g v / ||g||.

    ``start`` is (..., dim). ``step_size``, ``max_norm`` and ``momentum`` are numbers or tensors
    that broadcast against ``start.shape[:-1]``: starts of shape (B, 1, dim) with step sizes of
    shape (S,) give B x S runs. ``grad_fn`` maps (..., dim) to (..., dim), row by row; build it
    from a loss with :func:`gradient_of`. ``bounds`` is one closed interval (low, high) per
    coordinate; a run stops at its first point outside (see :class:`Descent`).

    >>> run = descend(lambda p: 2 * p, torch.tensor([[1.0], [4.0]]), 0.25, 3, bounds=[(-3, 3)])
    >>> run.path[..., 0].tolist(), run.left_at.tolist()
    ([[1.0, 0.5, 0.25, 0.125], [4.0, 4.0, 4.0, 4.0]], [-1, 0])
    >>> descend(lambda p: 2 * p, torch.tensor([4.0]), 0.25, 2, max_norm=1.0).path.tolist()
    [[4.0], [3.75], [3.5]]
    """
    start = torch.as_tensor(start)
    if not start.is_floating_point():
        start = start.to(torch.get_default_dtype())
    if start.ndim == 0:
        raise ValueError("start needs a last dimension for the parameters, e.g. shape (1,)")
    as_t = lambda v: torch.as_tensor(v, dtype=start.dtype, device=start.device)  # noqa: E731
    eps, mu = as_t(step_size), as_t(momentum)
    v = None if max_norm is None else as_t(check.thresholds("max_norm", max_norm))
    shapes = [start.shape[:-1], eps.shape, mu.shape] + ([] if v is None else [v.shape])
    batch = torch.broadcast_shapes(*shapes)
    dim = start.shape[-1]
    # Trailing singleton: these scale whole rows (..., dim).
    eps, mu = eps.expand(batch)[..., None], mu.expand(batch)[..., None]
    low, high = _bounds(bounds, dim, start)

    def inside(x: torch.Tensor) -> torch.Tensor:
        return (torch.isfinite(x) & (x >= low) & (x <= high)).all(-1)

    x = start.expand(*batch, dim).clone()
    velocity = torch.zeros_like(x)
    moving = inside(x)
    left_at = torch.where(moving, -1, 0).to(torch.int64)
    diverged = ~torch.isfinite(x).all(-1)
    path, norms = [x], []
    for t in range(1, steps + 1):
        g = grad_fn(x + mu * velocity if nesterov else x)
        norm = torch.linalg.vector_norm(g, dim=-1)
        if v is not None:
            g = g * book_clip_factor(norm, v)[..., None]
        new_velocity = mu * velocity - eps * g
        new_x = x + new_velocity
        finite = torch.isfinite(new_x).all(-1)
        take = (moving & finite)[..., None]
        # where, not arithmetic: a stopped run's inf or NaN must not leak into its path.
        x = torch.where(take, new_x, x)
        velocity = torch.where(take, new_velocity, velocity)
        norms.append(torch.where(moving, norm, torch.zeros_like(norm)))
        stops = moving & ~inside(new_x)
        left_at = torch.where(stops, t, left_at)
        diverged = diverged | (moving & ~finite)
        moving = moving & ~stops
        path.append(x)
    grad_norms = torch.stack(norms, -1) if norms else start.new_zeros((*batch, 0))
    return Descent(torch.stack(path, -2), grad_norms, left_at, diverged)
