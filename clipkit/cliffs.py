"""Loss surfaces with cliffs: where a gradient step goes wrong.

A recurrent net applies its weight once per time step, so its loss can hold terms like
``w**T``: flat for ``|w| < 1`` and exploding once ``|w|`` passes 1. The toys here keep that
shape with one or two parameters so that a learner can see the whole landscape.

The two-parameter landscapes (:class:`Landscape`) carry their picture, start point and
default runs: :func:`figure_10_17`, a closed-form rebuild of the book's Figure 10.17, and
:func:`rnn_unit_figure`, the one-unit recurrent net that the book's figure comes from.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from clipkit.descent import Descent, descend

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


# --- Two-parameter landscapes: Figure 10.17 rebuilt, and the network behind it ---------------

Pair = tuple[float, float]


def _axes(box: tuple[Pair, Pair], n: int, dtype, device) -> list[torch.Tensor]:
    return [torch.linspace(lo, hi, n, dtype=dtype, device=device) for lo, hi in box]


def _floats(w, b) -> tuple[torch.Tensor, torch.Tensor]:
    w, b = torch.as_tensor(w), torch.as_tensor(b)
    dtype = torch.promote_types(w.dtype, b.dtype)
    dtype = dtype if dtype.is_floating_point else torch.get_default_dtype()
    return torch.broadcast_tensors(w.to(dtype), b.to(dtype))


def gradient_field(loss_fn: Callable, w, b) -> tuple[torch.Tensor, torch.Tensor]:
    """(dL/dw, dL/db) at every point of a grid, in one backward pass.

    ``loss_fn(w, b)`` works elementwise on broadcast tensors; ``w`` and ``b`` broadcast, e.g.
    shapes (N, 1) and (1, M) give an N x M field. Each point's loss depends on that point alone,
    so the gradient of the summed loss is the field.

    >>> dw, db = gradient_field(lambda w, b: w**2 * b, torch.tensor([[1.0], [2.0]]), 3.0)
    >>> dw.tolist(), db.tolist()
    ([[6.0], [12.0]], [[1.0], [4.0]])
    """
    w, b = _floats(w, b)
    with torch.enable_grad():  # a widget may call this under torch.no_grad()
        # contiguous(): a broadcast view shares memory across points; each needs its own leaf.
        w = w.detach().contiguous().requires_grad_(True)
        b = b.detach().contiguous().requires_grad_(True)
        dw, db = torch.autograd.grad(loss_fn(w, b).sum(), (w, b))
    return dw, db


def log_grad_norm(dw: torch.Tensor, db: torch.Tensor, floor: float = 1e-12) -> torch.Tensor:
    """log10 ||(dw, db)||, for shading by steepness: the norms on a cliff span many decades.

    >>> log_grad_norm(torch.tensor([3.0, 0.0]), torch.tensor([4.0, 0.0])).tolist()
    [0.6989700198173523, -12.0]
    """
    return torch.log10(torch.hypot(dw, db).clamp_min(floor))


@dataclass(frozen=True)
class Landscape:
    """A loss of two parameters (w, b) with its picture, start point and default runs.

    ``bounds`` is the picture, ((w_min, w_max), (b_min, b_max)); a run that leaves it has left
    the picture. ``step_size``, ``max_norm`` and ``steps`` are a demo's defaults. Subclasses
    give ``loss(w, b)``, elementwise over broadcast tensors; ``grad`` falls back on autograd.
    """

    start: Pair
    bounds: tuple[Pair, Pair]
    step_size: float
    max_norm: float
    steps: int

    def loss(self, w, b) -> torch.Tensor:
        raise NotImplementedError

    def grad(self, w, b) -> tuple[torch.Tensor, torch.Tensor]:
        """(dL/dw, dL/db), broadcast over ``w`` and ``b``."""
        return gradient_field(self.loss, w, b)

    def grad_at(self, p: torch.Tensor) -> torch.Tensor:
        """The gradient at points (..., 2), as (..., 2): the ``grad_fn`` of descent."""
        return torch.stack(self.grad(p[..., 0], p[..., 1]), -1)

    def grid(self, n: int = 200, dtype=None, device=None) -> tuple[torch.Tensor, torch.Tensor]:
        """Axes covering the picture: w of shape (1, n) and b of shape (n, 1), for imshow."""
        w, b = _axes(self.bounds, n, dtype, device)
        return w[None, :], b[:, None]

    def descend(self, step_size=None, max_norm=None, steps=None, start=None, **kw) -> Descent:
        """:func:`clipkit.descent.descend` in the picture; ``max_norm=None`` is plain descent.

        Step sizes, thresholds and starts (..., 2) may be tensors: one run each.
        """
        p0 = torch.as_tensor(self.start if start is None else start, dtype=kw.pop("dtype", None))
        eps = self.step_size if step_size is None else step_size
        n = self.steps if steps is None else steps
        return descend(self.grad_at, p0, eps, n, max_norm=max_norm, bounds=self.bounds, **kw)


@dataclass(frozen=True)
class CliffValley(Landscape):
    """Figure 10.17 rebuilt: L(w, b) = a (b - w/2)**2 - s w + exp(k (w - c)).

    A valley with floor b = w/2 slopes down into a wall, the exponential, near w = c:

        dL/dw = -a (b - w/2) - s + k exp(k (w - c)),    dL/db = 2 a (b - w/2).

    Not the book's network (:func:`rnn_unit_loss`) but its shape: a gentle slope that leads
    into a face so steep that one plain step from it is thrown far away.
    """

    a: float
    s: float
    k: float
    c: float

    def loss(self, w, b) -> torch.Tensor:
        w, b = _floats(w, b)
        return self.a * (b - w / 2) ** 2 - self.s * w + torch.exp(self.k * (w - self.c))

    def grad(self, w, b) -> tuple[torch.Tensor, torch.Tensor]:
        w, b = _floats(w, b)
        across = 2 * self.a * (b - w / 2)
        return -across / 2 - self.s + self.k * torch.exp(self.k * (w - self.c)), across

    def valley_floor(self, w) -> torch.Tensor:
        """The floor of the valley, b = w/2: where dL/db = 0."""
        return torch.as_tensor(w) / 2

    @property
    def minimum(self) -> Pair:
        """Where the wall's push balances the slope s: w* = c + log(s/k)/k, b* = w*/2."""
        w = self.c + math.log(self.s / self.k) / self.k
        return w, w / 2


def rnn_unit_loss(w, b, steps: int = 50, x0: float = 0.5, target: float = 0.7) -> torch.Tensor:
    """Pascanu, Mikolov and Bengio (2013)'s one-unit recurrent net, the one behind Fig. 10.17.

        x_t = w sigmoid(x_{t-1}) + b,  x_0 = 0.5,    L(w, b) = (sigmoid(x_50) - 0.7)**2

    ``w`` and ``b`` broadcast, so a whole grid is one call. For w above about 4 the map
    x -> w sigmoid(x) + b has two stable fixed points for some b; where the final state switches
    from one to the other the loss falls by some 0.4 across a sliver of b: the cliff.

    Either side of the cliff at w = 6 (float64 for exact digits):

    >>> w, b = torch.tensor(6.0, dtype=torch.float64), torch.tensor([-3.5, -3.0])
    >>> [round(x, 3) for x in rnn_unit_loss(w, b).tolist()]
    [0.441, 0.053]
    """
    w, b = _floats(w, b)
    x = torch.full_like(w, x0)
    for _ in range(steps):
        x = w * torch.sigmoid(x) + b
    return (torch.sigmoid(x) - target) ** 2


@dataclass(frozen=True)
class RNNUnit(Landscape):
    """:func:`rnn_unit_loss` as a landscape; its gradient comes from autograd.

    ``patch`` is a rectangle of start points on the plateau below the cliff, for runs from
    many starts at once: one run's fate at a cliff this thin hangs on its exact start.
    """

    patch: tuple[Pair, Pair] = ((4.5, 6.0), (-4.0, -3.0))
    unroll: int = 50
    x0: float = 0.5
    target: float = 0.7

    def loss(self, w, b) -> torch.Tensor:
        return rnn_unit_loss(w, b, self.unroll, self.x0, self.target)

    def patch_starts(self, n: int = 10, dtype=None, device=None) -> torch.Tensor:
        """An n x n grid of starts covering ``patch``, shape (n, n, 2), indexed [w, b]."""
        return torch.stack(torch.meshgrid(*_axes(self.patch, n, dtype, device), indexing="ij"), -1)


def figure_10_17() -> CliffValley:
    """The rebuilt Figure 10.17, with constants from ``tools/search_figure_10_17.py``.

    L(w, b) = 5 (b - w/2)**2 - 5 w + exp(20 (w - 1)) on w in [-4, 4], b in [-3, 3], from
    (w, b) = (-0.25, 1.75). Plain descent with step 0.05 lands on the wall at update 3, meets a
    gradient of about 78 (18 times the one before) and is thrown 3.9 to the left, still in the
    picture; with step 0.1 it leaves the picture at update 2; clipped at 1 it stays inside for
    every step size up to 0.5 (tests/test_cliffs.py checks all three).

    >>> fig = figure_10_17()
    >>> fig.descend(0.05).left.item(), fig.descend(0.1).left_at.item()
    (False, 2)
    >>> fig.descend(0.3, max_norm=1.0).left.item()
    False
    """
    return CliffValley(
        start=(-0.25, 1.75),
        bounds=((-4.0, 4.0), (-3.0, 3.0)),
        step_size=0.05,
        max_norm=1.0,
        steps=40,
        a=5.0,
        s=5.0,
        k=20.0,
        c=1.0,
    )


def rnn_unit_figure() -> RNNUnit:
    """Pascanu's one-unit net on w in [2, 8], b in [-6, 0], where its cliff crosses the picture.

    From (5.2, -3.1), plain descent with step 1 creeps up the plateau (gradients near 0.1),
    lands on the cliff at update 3, meets a gradient of about 6000 and leaves the picture at
    update 4; clipped at 0.5 it crosses the cliff and ends below a loss of 0.05. Over the 100
    starts of ``patch_starts()`` about a third of the plain runs are thrown out and none of
    the clipped ones (tests/test_cliffs.py).

    >>> net = rnn_unit_figure()
    >>> net.descend().left_at.item(), net.descend(max_norm=net.max_norm).left.item()
    (4, False)
    """
    return RNNUnit(
        start=(5.2, -3.1),
        bounds=((2.0, 8.0), (-6.0, 0.0)),
        step_size=1.0,
        max_norm=0.5,
        steps=50,
    )
