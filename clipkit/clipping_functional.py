"""The functional forms of gradient clipping, named after Optax; they follow the book's rule.

Each takes a tensor or a list (or tuple) of tensors and returns new tensors of the same
structure; a list is one vector, so Eq. 10.48 measures all of it at once. The rule is the
book's and Pascanu's: no epsilon, a strict comparison, the scale v / ||g|| (Eq. 10.49).
torch's in-place rule lives in :mod:`clipkit.clipping`. Everything here is plain tensor
arithmetic: it stays on the inputs' device, never reads a value back to the host, and autograd
can differentiate it.
"""

from __future__ import annotations

import math

import torch

from clipkit import _clip_args as check
from clipkit._norms import accumulator as _accumulator
from clipkit._norms import result_dtype


def _as_list(g) -> tuple[list[torch.Tensor], bool]:
    if isinstance(g, torch.Tensor):
        return [g], True
    if not isinstance(g, (list, tuple)):
        raise TypeError(f"g must be a tensor or a list of tensors, got {type(g).__name__}")
    items = check.tensors("g", g)
    if any(t is None for t in items):
        raise TypeError("g must not contain None: drop the missing gradients first")
    return items, False


def _rebuild(template, items: list[torch.Tensor]):
    if isinstance(template, torch.Tensor):
        return items[0]
    return type(template)(items)


def global_norm(tensors, norm_type=2.0) -> torch.Tensor:
    """The p-norm of all ``tensors`` taken as one vector, ||g|| in Eq. 10.48.

    ||g||_p = (sum over every entry of every tensor of |g_i|^p)^(1/p); max |g_i| for p = inf.
    Computed as torch does, as the p-norm of the per-tensor norms. float16 and bfloat16 are
    summed in float32, and the result is float32 for them. ``tensor(0.)`` for an empty list.

    >>> global_norm([torch.tensor([3.0]), torch.tensor([4.0])])
    tensor(5.)
    >>> global_norm(torch.tensor([3.0, -4.0]), norm_type=float("inf"))
    tensor(4.)
    """
    items, _ = _as_list(tensors)
    p = check.norm_type(norm_type)
    if not items:
        return torch.tensor(0.0)
    device, dtype = items[0].device, result_dtype(items)
    norms = [torch.linalg.vector_norm(t, p, dtype=_accumulator(t)) for t in items]
    return torch.linalg.vector_norm(torch.stack([n.to(device, dtype) for n in norms]), p)


def book_clip_factor(norm: torch.Tensor, max_norm) -> torch.Tensor:
    """The factor of Eq. 10.49 by the book's rule: v / ||g|| where ||g|| > v, else exactly 1.

    ``max_norm`` (v) is a number or a tensor that broadcasts against ``norm``; infinity means
    "never clip". A strict comparison and no epsilon (Pascanu et al. 2013), unlike torch's
    min(v / (||g|| + 1e-6), 1). Plain tensor arithmetic: no value is read back to the host.

    >>> book_clip_factor(torch.tensor([20.0, 0.5, 1.0]), 2.0)
    tensor([0.1000, 1.0000, 1.0000])
    """
    return torch.where(norm > max_norm, max_norm / norm, torch.ones_like(norm))


def clip_by_norm(g, max_norm, norm_type=2.0, *, dim=None):
    """Eq. 10.48 and 10.49: if ||g|| > v then g <- g v / ||g||, else g unchanged (book's rule).

    The direction is kept; only the length is capped at ``max_norm``. A list is one vector.
    With ``dim`` (a single tensor only), each slice along ``dim`` is a separate vector:
    ``dim=-1`` clips every row of a batch on its own, and ``max_norm`` may then be a tensor
    that broadcasts against the norms (the shape of ``g`` without ``dim``), one threshold per
    row, as :func:`clipkit.descent.descend` uses it.

    >>> clip_by_norm(torch.tensor([10.0, 1.0]), 1.0)
    tensor([0.9950, 0.0995])
    >>> clip_by_norm([torch.tensor([0.3]), torch.tensor([0.4])], 1.0)  # below v: unchanged
    [tensor([0.3000]), tensor([0.4000])]
    >>> clip_by_norm(torch.tensor([[3.0, 4.0], [3.0, 4.0]]), torch.tensor([1.0, 10.0]), dim=-1)
    tensor([[0.6000, 0.8000],
            [3.0000, 4.0000]])
    """
    items, single = _as_list(g)
    p = check.norm_type(norm_type)
    if dim is not None:
        if not single:
            raise ValueError("dim works on a single tensor; a list is always one vector")
        t = items[0]
        v = check.thresholds("max_norm", max_norm)
        norm = torch.linalg.vector_norm(t, p, dim=dim, dtype=_accumulator(t))
        factor = book_clip_factor(norm, v if not isinstance(v, torch.Tensor) else v.to(norm))
        # Back to keepdim form: the norms lost the axis ``dim``, counted from the end.
        return t * factor.unsqueeze(dim if dim < 0 else dim - t.ndim).to(t.dtype)
    v = check.threshold("max_norm", max_norm)
    if math.isinf(v):
        return _rebuild(g, [t.clone() for t in items])
    factor = book_clip_factor(global_norm(items, p), v)
    return _rebuild(g, [t * factor.to(t.device) for t in items])


def clip_by_value(g, clip_value):
    """Clip every entry into [-v, v] on its own: g_i <- max(-v, min(v, g_i)).

    Not the book's rule: it bounds each coordinate but turns the update, since the large
    entries shrink while the small ones stay (seed 003: (10, 1) becomes (1, 1)).

    >>> clip_by_value(torch.tensor([10.0, 1.0, -0.5]), 1.0)
    tensor([ 1.0000,  1.0000, -0.5000])
    """
    items, _ = _as_list(g)
    v = check.threshold("clip_value", clip_value)
    return _rebuild(g, [t.clamp(-v, v) for t in items])


def angle_between(a, b, *, dim=None) -> torch.Tensor:
    """The angle between two vectors in degrees, in [0, 180]; a list is one vector.

    Kahan's form, 2 atan2(||a/|a| - b/|b|||, ||a/|a| + b/|b|||), stays accurate for tiny
    and near-180 angles where acos of the cosine loses every digit. With ``dim``, a batch of
    angles along that dimension (``a`` and ``b`` are then tensors). NaN if either is zero.

    >>> round(angle_between(torch.tensor([10.0, 1.0]), torch.tensor([1.0, 1.0])).item(), 2)
    39.29
    """
    if dim is None:
        a = torch.cat([t.reshape(-1) for t in _as_list(a)[0]])
        b = torch.cat([t.reshape(-1) for t in _as_list(b)[0]])
        dim = -1
    wide = torch.promote_types(torch.promote_types(a.dtype, b.dtype), torch.float32)
    a, b = a.to(wide), b.to(wide)
    ua = a / torch.linalg.vector_norm(a, dim=dim, keepdim=True)
    ub = b / torch.linalg.vector_norm(b, dim=dim, keepdim=True)
    diff = torch.linalg.vector_norm(ua - ub, dim=dim)
    total = torch.linalg.vector_norm(ua + ub, dim=dim)
    return torch.rad2deg(2 * torch.atan2(diff, total))


def heading(v: torch.Tensor) -> torch.Tensor:
    """The direction of a 2-D vector in degrees from the first axis, atan2(v_2, v_1).

    The last dimension holds (v_1, v_2); leading dimensions are a batch.

    >>> heading(torch.tensor([[10.0, 1.0], [1.0, 1.0]])).round(decimals=2)
    tensor([ 5.7100, 45.0000])
    """
    if v.shape[-1] != 2:
        raise ValueError(
            f"heading needs 2-D vectors (last dimension 2), got shape {tuple(v.shape)}"
        )
    return torch.rad2deg(torch.atan2(v[..., 1], v[..., 0]))
