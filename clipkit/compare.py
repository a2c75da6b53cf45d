"""Norm clipping and value clipping, compared.

Section 10.11.1 of the book gives two ways to cap a gradient ``g`` before the update. Clipping
the norm (Eq. 10.48 and 10.49) rescales the whole vector, ``g <- g v / ||g||`` when
``||g|| > v``, so the direction stays. Clipping each entry, ``g_i <- max(-v, min(v, g_i))``,
cuts the large entries and leaves the small ones, so the direction turns. This module measures
by how much, in two dimensions and in many. The caveats of clipping (per minibatch, non-finite
gradients, per-group norms, low precision) are in :mod:`clipkit.caveats`.

Pure torch and batched: leading dimensions are batch dimensions, results stay on the inputs'
device, and randomness comes from an explicit, seeded ``torch.Generator``. The clipping
itself is :mod:`clipkit.clipping`'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import torch

from clipkit import clipping

# --- the two clippings, side by side ------------------------------------------------------


class Clipped(NamedTuple):
    """A gradient and its two clipped versions; batched over leading dimensions."""

    gradient: torch.Tensor  # (..., d)
    norm: torch.Tensor  # (...,) ||g||
    by_norm: torch.Tensor  # (..., d) g v / ||g|| where ||g|| > v
    by_value: torch.Tensor  # (..., d) each entry clamped to [-v, v]
    angle_by_norm: torch.Tensor  # (...,) degrees between g and by_norm: 0 up to rounding
    angle_by_value: torch.Tensor  # (...,) degrees between g and by_value


def compare_clipping(g: torch.Tensor, threshold: float) -> Clipped:
    """Clip ``g`` both ways at ``threshold`` and measure how far each turns from ``g``.

    ``g`` has shape ``(..., d)``: every vector along the last dimension is one gradient, with
    its own norm. The clipping is :func:`clipkit.clipping.clip_by_norm` (the book's rule,
    ``dim=-1``) and :func:`clipkit.clipping.clip_by_value`; the angles are
    :func:`clipkit.clipping.angle_between`. The seeds' example, ``g = (10, 1)`` with
    threshold 1:

    >>> c = compare_clipping(torch.tensor([10.0, 1.0], dtype=torch.float64), 1.0)
    >>> round(c.norm.item(), 2), [round(x, 4) for x in c.by_norm.tolist()], c.by_value.tolist()
    (10.05, [0.995, 0.0995], [1.0, 1.0])
    >>> three = torch.stack([c.gradient, c.by_norm, c.by_value])
    >>> [round(h, 2) for h in clipping.heading(three).tolist()]
    [5.71, 5.71, 45.0]
    >>> round(c.angle_by_norm.item(), 6), round(c.angle_by_value.item(), 2)
    (0.0, 39.29)
    """
    by_norm = clipping.clip_by_norm(g, threshold, dim=-1)
    by_value = clipping.clip_by_value(g, threshold)
    return Clipped(
        gradient=g,
        norm=torch.linalg.vector_norm(g, dim=-1),
        by_norm=by_norm,
        by_value=by_value,
        angle_by_norm=clipping.angle_between(g, by_norm, dim=-1),
        angle_by_value=clipping.angle_between(g, by_value, dim=-1),
    )


# --- seed 000: a gradient that wanders in the plane ---------------------------------------


class Wander(NamedTuple):
    """A precomputed 2-D random walk of the gradient, clipped both ways at every frame."""

    threshold: float
    clipped: Clipped  # every field has a leading frame dimension of length n_frames


def _fold(x: torch.Tensor, half_width: float) -> torch.Tensor:
    """Reflect ``x`` into ``[-h, h]`` as a ball bounces off two walls (a triangle wave)."""
    period = 4 * half_width
    y = torch.remainder(x + half_width, period)
    return half_width - (y - 2 * half_width).abs()


def wandering_gradient(
    n_frames: int = 240,
    *,
    step: float = 0.25,
    box: float = 3.0,
    start: tuple[float, float] = (0.5, -0.5),
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """A gradient that wanders at random in the plane: ``(n_frames, 2)``.

    A Gaussian random walk, ``g_{t+1} = g_t + step z_t`` with ``z_t ~ N(0, I)``, reflected at
    the walls of the square ``[-box, box]^2`` so that it stays in the picture: the free walk is
    folded into the square, so each bounce mirrors the later steps of that coordinate. Frame 0 is
    ``start``. Seeded by ``generator`` (a new one seeded with 0 when none is given).

    >>> path = wandering_gradient(100, generator=torch.Generator().manual_seed(1))
    >>> path.shape, path[0].tolist(), bool(path.abs().max() <= 3.0)
    (torch.Size([100, 2]), [0.5, -0.5], True)
    """
    device = torch.device("cpu") if device is None else torch.device(device)
    if generator is None:
        generator = torch.Generator(device=device).manual_seed(0)
    steps = step * torch.randn(n_frames, 2, generator=generator, device=device, dtype=dtype)
    steps[0] = 0.0
    origin = torch.tensor(start, device=device, dtype=dtype)
    return _fold(origin + steps.cumsum(0), box)


def wandering_simulation(
    n_frames: int = 240,
    threshold: float = 1.0,
    *,
    seed: int = 0,
    device: torch.device | str | None = None,
    **walk,
) -> Wander:
    """Seed 000's simulation: the wandering gradient, clipped by value and by norm per frame.

    ``walk`` goes to :func:`wandering_gradient`. The angle to the original is 0 for norm
    clipping at every frame, and positive for value clipping whenever exactly one entry
    is larger than the threshold, or both are, unequally.

    >>> w = wandering_simulation(200, seed=3)
    >>> bool(w.clipped.angle_by_norm.abs().max() < 1e-3), bool(w.clipped.angle_by_value.max() > 5)
    (True, True)
    """
    device = torch.device("cpu") if device is None else torch.device(device)
    gen = torch.Generator(device=device).manual_seed(seed)
    path = wandering_gradient(n_frames, generator=gen, device=device, **walk)
    return Wander(threshold=threshold, clipped=compare_clipping(path, threshold))


# --- many dimensions: value clipping drifts toward sign(g) -------------------------------


class CosineGrid(NamedTuple):
    """Monte Carlo cosines between a clipped gradient and the gradient itself."""

    dims: torch.Tensor  # (D,) the dimensions, int64
    thresholds: torch.Tensor  # (T,) the thresholds, in units of the entries' scale
    by_value: torch.Tensor  # (D, T) mean cosine of clip_by_value(g, v) with g
    sign: torch.Tensor  # (D,) mean cosine of sign(g) with g: the limit v -> 0
    distribution: str


def sample_gradients(
    n_samples: int,
    dim: int,
    *,
    distribution: str = "gaussian",
    df: int = 3,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """``(n_samples, dim)`` random gradients with independent entries of scale 1.

    ``"gaussian"``: standard normal entries. ``"student_t"``: Student's t with ``df`` (a
    positive integer) degrees of freedom, ``z / sqrt(chi2_df / df)``, a heavy-tailed stand-in
    for the rare huge entries of a real gradient. The chi-square is a sum of ``df`` squared
    normals, so one seeded generator drives both.

    >>> sample_gradients(4, 3, generator=torch.Generator().manual_seed(0)).shape
    torch.Size([4, 3])
    """
    device = torch.device("cpu") if device is None else torch.device(device)
    if generator is None:
        generator = torch.Generator(device=device).manual_seed(0)
    kw = dict(generator=generator, device=device, dtype=dtype)
    if distribution == "gaussian":
        return torch.randn(n_samples, dim, **kw)
    if distribution == "student_t":
        if int(df) != df or df < 1:
            raise ValueError(f"df must be a positive integer, not {df!r}")
        z = torch.randn(n_samples, dim, int(df) + 1, **kw)
        return z[..., 0] / (z[..., 1:].square().mean(-1)).sqrt()
    raise ValueError(f"distribution must be 'gaussian' or 'student_t', not {distribution!r}")


def value_clip_cosine(
    dims: Sequence[int] | torch.Tensor,
    thresholds: Sequence[float] | torch.Tensor,
    n_samples: int = 256,
    *,
    distribution: str = "gaussian",
    df: int = 3,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> CosineGrid:
    """Mean cosine between ``clip_by_value(g, v)`` and ``g``, over a grid of dims x thresholds.

    For each dimension ``d`` and threshold ``v``, the average over ``n_samples`` random
    gradients (:func:`sample_gradients`) of ``cos(clip(g, v), g)``. Also the cosine of
    ``sign(g)`` with ``g``, which clipping approaches as ``v -> 0``: every entry is then cut
    to ``+-v``, so the clipped gradient is ``v sign(g)``.

    One call for the whole grid: ``n_samples`` gradients of the largest dimension are drawn
    once, and a smaller dimension uses the first ``d`` entries of each (the same draws for every
    ``d`` and ``v``, so the curves are smooth). Cumulative sums over the entries give every
    ``d`` at once. Memory: about ``len(thresholds) * n_samples * max(dims)`` numbers.

    >>> grid = value_clip_cosine([1, 1000], [0.5], 64, generator=torch.Generator().manual_seed(0))
    >>> grid.by_value.shape, grid.by_value[0, 0].item()
    (torch.Size([2, 1]), 1.0)
    >>> 0.75 < grid.sign[1].item() < 0.85  # sqrt(2/pi) = 0.798 for Gaussian entries
    True
    """
    device = torch.device("cpu") if device is None else torch.device(device)
    # The grid's axes are checked on the host, so the device never waits on a Python `if`.
    dims = torch.as_tensor(dims, dtype=torch.int64).cpu()
    levels = torch.as_tensor(thresholds, dtype=torch.float64).cpu()
    if dims.dim() != 1 or levels.dim() != 1 or (dims < 1).any() or (levels <= 0).any():
        raise ValueError("dims must be positive integers and thresholds positive, both 1-D")
    largest = int(dims.max())
    dims, v = dims.to(device), levels.to(device=device, dtype=dtype)
    g = sample_gradients(
        n_samples,
        largest,
        distribution=distribution,
        df=df,
        generator=generator,
        device=device,
        dtype=dtype,
    )  # (S, D)
    at = dims - 1

    def prefix(x: torch.Tensor) -> torch.Tensor:  # running sums over the entries, at each d
        return x.cumsum(-1).index_select(-1, at)

    gg = prefix(g.square())  # (S, nD)
    clipped = torch.stack([clipping.clip_by_value(g, t) for t in levels.tolist()])  # (T, S, D)
    dot = prefix(clipped * g)
    cc = prefix(clipped.square())
    by_value = (dot / (cc * gg).sqrt()).mean(1).T  # (nD, T)
    sign = (prefix(g.abs()) / (dims * gg).sqrt()).mean(0)  # ||g||_1 / (sqrt(d) ||g||_2)
    return CosineGrid(dims, v, by_value, sign, distribution)


def _normal_pdf(x: torch.Tensor) -> torch.Tensor:
    return torch.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def gaussian_value_clip_cosine_limit(threshold) -> torch.Tensor:
    """The cosine of ``clip(g, v)`` with ``g`` as ``d -> infinity``, for N(0, 1) entries.

    By the law of large numbers the cosine settles at
    ``E[g clip(g)] / sqrt(E[clip(g)^2] E[g^2])``, and for a standard normal entry
    ``E[g clip(g)] = erf(v / sqrt 2)`` and
    ``E[clip(g)^2] = erf(v / sqrt 2) - 2 v phi(v) + v^2 erfc(v / sqrt 2)``. It falls from 1
    (no entry clipped) to ``sqrt(2/pi)`` as ``v -> 0``.

    >>> [round(x, 4) for x in gaussian_value_clip_cosine_limit([1e-4, 1.0, 10.0]).tolist()]
    [0.7979, 0.9503, 1.0]
    """
    v = torch.as_tensor(threshold, dtype=torch.float64)
    inside = torch.special.erf(v / math.sqrt(2))
    second = inside - 2 * v * _normal_pdf(v) + v * v * torch.special.erfc(v / math.sqrt(2))
    return inside / second.sqrt()


def sign_cosine_limit(distribution: str = "gaussian", df: int = 3) -> float:
    """The cosine of ``sign(g)`` with ``g`` as ``d -> infinity``: ``E|g| / sqrt(E g^2)``.

    Gaussian entries: ``sqrt(2/pi)``. Student's t with ``df > 2``:
    ``E|t| = 2 sqrt(df) G((df+1)/2) / (sqrt(pi) (df-1) G(df/2))`` and ``E t^2 = df/(df-2)``,
    which gives ``2/pi`` for ``df = 3``: heavier tails, a larger turn.

    >>> round(sign_cosine_limit(), 4), round(sign_cosine_limit("student_t", 3), 4)
    (0.7979, 0.6366)
    """
    if distribution == "gaussian":
        return math.sqrt(2 / math.pi)
    if distribution == "student_t":
        if df <= 2:
            raise ValueError("E t^2 is infinite for df <= 2")
        log_mean_abs = (
            math.log(2 * math.sqrt(df))
            + math.lgamma((df + 1) / 2)
            - math.log(math.sqrt(math.pi) * (df - 1))
            - math.lgamma(df / 2)
        )
        return math.exp(log_mean_abs) / math.sqrt(df / (df - 2))
    raise ValueError(f"distribution must be 'gaussian' or 'student_t', not {distribution!r}")
