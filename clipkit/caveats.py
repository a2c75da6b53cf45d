"""The caveats of gradient clipping, from the book and beyond it, as numbers.

Section 10.11.1 of the book warns that clipping the norm of each minibatch's gradient is not
clipping the norm of the average, and suggests a random step of size ``v`` when the gradient
is infinite or NaN. Seed 003 adds three questions the book leaves open: one global norm or one
per group of parameters, norms of low-precision gradients, and vanishing gradients (which
clipping leaves alone: :func:`clipkit.compare.compare_clipping` on a small gradient shows it).

Each function runs one small experiment through :mod:`clipkit.clipping` (and, for contrast,
``torch.nn.utils``) and returns every number in a NamedTuple. Pure torch: results stay on the
inputs' device; randomness comes from an explicit ``torch.Generator``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from clipkit import clipping

# --- the book's caveat: clipping each minibatch is not clipping the average ---------------


class ClipThenAverage(NamedTuple):
    """Per-example (or per-minibatch) gradients, averaged before or after norm clipping."""

    mean: torch.Tensor  # (..., d) the plain average of the rows
    clipped_mean: torch.Tensor  # (..., d) clip(mean): the direction of the mean, capped
    mean_of_clipped: torch.Tensor  # (..., d) mean of clip(g_i): what per-batch clipping adds up
    scales: torch.Tensor  # (..., n) the factor each row was multiplied by: 1, or v / ||g_i||
    weights: torch.Tensor  # (..., n) each row's share in mean_of_clipped; 1/n in the mean
    angle: torch.Tensor  # (...,) degrees between mean_of_clipped and mean


def clip_then_average(grads: torch.Tensor, threshold: float) -> ClipThenAverage:
    """Clip every row of ``grads`` (shape ``(..., n, d)``) by norm, then average; and the reverse.

    The book warns that clipping the norm of each minibatch's gradient is not clipping the norm
    of the average: ``mean_i clip(g_i) = sum_i (s_i / n) g_i`` with ``s_i = min(1, v/||g_i||)``,
    so a row with a large gradient enters with the smaller weight ``s_i / n``. ``weights`` are
    the shares ``s_i / sum_j s_j``, to compare with ``1/n``.

    >>> g = torch.tensor([[1.0, 0.0], [0.0, 9.0]])
    >>> r = clip_then_average(g, 1.0)
    >>> r.mean.tolist(), r.clipped_mean.norm().item(), r.mean_of_clipped.tolist()
    ([0.5, 4.5], 1.0, [0.5, 0.5])
    >>> [round(w, 2) for w in r.weights.tolist()], round(r.angle.item(), 2)
    ([0.9, 0.1], 38.66)
    """
    clipped = clipping.clip_by_norm(grads, threshold, dim=-1)
    norms = torch.linalg.vector_norm(grads, dim=-1)
    scales = torch.where(norms > 0, torch.linalg.vector_norm(clipped, dim=-1) / norms, 1.0)
    mean = grads.mean(-2)
    mean_of_clipped = clipped.mean(-2)
    return ClipThenAverage(
        mean=mean,
        clipped_mean=clipping.clip_by_norm(mean, threshold, dim=-1),
        mean_of_clipped=mean_of_clipped,
        scales=scales,
        weights=scales / scales.sum(-1, keepdim=True),
        angle=clipping.angle_between(mean_of_clipped, mean, dim=-1),
    )


def _torch_clip_norm(g: torch.Tensor, max_norm: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``torch.nn.utils.clip_grad_norm_`` on a copy of ``g``: (its norm, the clipped copy)."""
    p = torch.zeros_like(g, requires_grad=True)
    p.grad = g.clone()
    norm = torch.nn.utils.clip_grad_norm_([p], max_norm)
    return norm, p.grad


def _clipkit_clip_norm(g: torch.Tensor, max_norm: float, **kw) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`clipkit.clipping.clip_grad_norm_` on a copy of ``g``: (its norm, the result)."""
    p = torch.zeros_like(g, requires_grad=True)
    p.grad = g.clone()
    norm = clipping.clip_grad_norm_([p], max_norm, **kw)
    return norm, p.grad


# --- the book's caveat: a gradient that is inf or NaN ----------------------------------------


class NonFinite(NamedTuple):
    """What torch and clipkit's ``nonfinite="random"`` make of one non-finite gradient."""

    gradient: torch.Tensor
    torch_norm: torch.Tensor  # inf or NaN
    torch_result: torch.Tensor  # torch scales anyway: inf * 0 is NaN, and NaN spreads
    random_step: torch.Tensor  # the book's escape: a random direction of length max_norm
    random_norm: torch.Tensor  # ||random_step|| = max_norm


def nonfinite_step(
    g: torch.Tensor, max_norm: float, *, generator: torch.Generator | None = None
) -> NonFinite:
    """Clip a gradient holding inf or NaN, the torch way and the book's way.

    The book: when the gradient is not finite, take a random step of size ``v``. That is
    :func:`clipkit.clipping.clip_grad_norm_` with ``nonfinite="random"``, seeded by
    ``generator``. torch (``torch.nn.utils.clip_grad_norm_``) multiplies by
    ``v / (||g|| + 1e-6)``, which is 0 for an infinite norm, so an infinite entry becomes NaN
    and the others 0; a NaN norm makes every entry NaN.

    >>> r = nonfinite_step(torch.tensor([float("inf"), 1.0]), 0.5,
    ...                    generator=torch.Generator().manual_seed(0))
    >>> r.torch_result.tolist(), round(r.random_norm.item(), 6)
    ([nan, 0.0], 0.5)
    """
    torch_norm, torch_result = _torch_clip_norm(g, max_norm)
    _, step = _clipkit_clip_norm(g, max_norm, nonfinite="random", generator=generator)
    return NonFinite(g, torch_norm, torch_result, step, torch.linalg.vector_norm(step))


# --- beyond the book: low precision -----------------------------------------------------------


class LowPrecision(NamedTuple):
    """One large float16 (or bfloat16) gradient, clipped by torch and by clipkit."""

    true_norm: float  # in float64, from the formula
    torch_norm: torch.Tensor  # float16: inf once the true norm passes 65504
    torch_result: torch.Tensor  # every entry 0: v / (inf + 1e-6) = 0
    clipkit_norm: torch.Tensor  # summed in float32, so finite
    clipkit_result: torch.Tensor  # each entry value * v / ||g||, in float16


def low_precision_norm(
    n: int = 100_000,
    value: float = 300.0,
    max_norm: float = 1.0,
    *,
    dtype: torch.dtype = torch.float16,
    device: torch.device | str | None = None,
) -> LowPrecision:
    """``n`` gradient entries all equal to ``value`` in ``dtype``, clipped to ``max_norm``.

    The true norm is ``value * sqrt(n)``: 300 sqrt(100000) = 94868.3, above float16's largest
    number, 65504. torch returns the norm in float16, so it is inf, and scaling by
    ``v / (inf + 1e-6) = 0`` wipes the gradient without a word. clipkit sums the squares in
    float32 and clips as it should.

    >>> r = low_precision_norm()
    >>> round(r.true_norm, 1), r.torch_norm.item(), float(r.torch_result.abs().max())
    (94868.3, inf, 0.0)
    >>> abs(r.clipkit_norm.item() / r.true_norm - 1) < 1e-4, round(float(r.clipkit_result[0]), 5)
    (True, 0.00316)
    """
    g = torch.full((n,), value, dtype=dtype, device=device)
    torch_norm, torch_result = _torch_clip_norm(g, max_norm)
    clipkit_norm, clipkit_result = _clipkit_clip_norm(g, max_norm)
    return LowPrecision(
        true_norm=abs(value) * math.sqrt(n),
        torch_norm=torch_norm,
        torch_result=torch_result,
        clipkit_norm=clipkit_norm,
        clipkit_result=clipkit_result,
    )


# --- beyond the book: one global norm or one per group ---------------------------------------


class GroupClip(NamedTuple):
    """Each group's gradient norm before and after one global clip and after per-group clips."""

    names: tuple[str, ...]
    norms: torch.Tensor  # (G,) ||g_k|| before clipping
    total_norm: torch.Tensor  # ||g|| over all groups: sqrt(sum_k ||g_k||^2)
    after_global: torch.Tensor  # (G,) after clip_grad_norm_ over everything: one shared factor
    after_per_group: torch.Tensor  # (G,) after clip_grad_norm_per_group_: min(||g_k||, v)
    angle_global: torch.Tensor  # degrees between the whole update and g: 0
    angle_per_group: torch.Tensor  # degrees: per-group clipping turns the whole update


def global_vs_per_group(groups: dict[str, torch.Tensor], max_norm: float) -> GroupClip:
    """Clip the gradients in ``groups`` (name -> gradient) once globally and once per group.

    Global: :func:`clipkit.clipping.clip_grad_norm_`, one factor ``v / ||g||`` for every group,
    so one spiking group shrinks all the others. Per group:
    :func:`clipkit.clipping.clip_grad_norm_per_group_`, each group against ``v`` on its own.
    Both follow torch's rule (``v / (norm + 1e-6)``).

    >>> spike = {"emb": torch.tensor([30.0, 40.0]), "dense": torch.tensor([0.3, 0.4])}
    >>> r = global_vs_per_group(spike, 1.0)
    >>> [round(x, 3) for x in r.after_global.tolist()]  # the dense layer's step cut 50 times
    [1.0, 0.01]
    >>> [round(x, 3) for x in r.after_per_group.tolist()]  # the dense layer's step untouched
    [1.0, 0.5]
    """
    names = tuple(groups)
    grads = [groups[k] for k in names]

    def params():
        out = {}
        for k, g in zip(names, grads, strict=True):
            p = torch.zeros_like(g, requires_grad=True)
            p.grad = g.clone()
            out[k] = p
        return out

    one, each = params(), params()
    clipping.clip_grad_norm_(list(one.values()), max_norm)
    clipping.clip_grad_norm_per_group_({k: [p] for k, p in each.items()}, max_norm)

    def norms(ps):
        return torch.stack([torch.linalg.vector_norm(ps[k].grad) for k in names])

    def flat(tensors):
        return torch.cat([t.reshape(-1) for t in tensors])

    whole = flat(grads)
    return GroupClip(
        names=names,
        norms=torch.stack([torch.linalg.vector_norm(g) for g in grads]),
        total_norm=torch.linalg.vector_norm(whole),
        after_global=norms(one),
        after_per_group=norms(each),
        angle_global=clipping.angle_between(whole, flat(p.grad for p in one.values())),
        angle_per_group=clipping.angle_between(whole, flat(p.grad for p in each.values())),
    )
