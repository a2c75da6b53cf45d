"""The total-norm kernel and the in-place rescale behind clipkit's torch-style API (private).

Two routes, picked by where the gradients live:

* **Host route** (every tensor on the CPU). Reading a number back costs nothing here, so the
  kernel works in Python floats: for p = 2 one BLAS ``torch.dot(g, g)`` per tensor (faster
  than torch's CPU ``_foreach_norm`` and far more accurate, since MKL's dot keeps many
  partial sums), the per-tensor squares summed in float64, and the rescale skipped outright
  when the coefficient is 1 (torch multiplies every gradient by 1 in that case). The tensors
  go to worker threads instead when the machine is crowded (``clipkit._host_pool`` says why).
* **Device route** (anything else). torch's design: per-tensor norms stay on the device
  (``_foreach_norm`` where torch has it), are combined there, and the clamped coefficient is
  multiplied in on the device. No ``.item()`` and no Python ``if`` on a tensor's value, so the
  host never waits for the GPU. Setting :data:`FORCE_DEVICE_ROUTE` runs it on the CPU, which is
  how the tests check that both routes give the same numbers.

Either way float16 and bfloat16 gradients are measured in float32 (their squares overflow
float16 above 256) and the norm comes back in float32, or float64 if any gradient is float64.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable

import torch

from clipkit._clip_args import FOREACH_DEVICES
from clipkit._host_pool import dense_view, map_parts

FORCE_DEVICE_ROUTE = False  # tests flip this to run the sync-free route on the CPU
EPS = 1e-6  # torch's guard in max_norm / (norm + eps); kept for parity
_LOW = (torch.float16, torch.bfloat16)
_DOT_DTYPES = (torch.float32, torch.float64)
_SLICE = 1 << 22  # entries per float32 copy of a float16 or bfloat16 gradient (16 MiB)


def host_route(tensors: list[torch.Tensor]) -> bool:
    return not FORCE_DEVICE_ROUTE and all(t.device.type == "cpu" for t in tensors)


def result_dtype(tensors: list[torch.Tensor]) -> torch.dtype:
    wide = any(t.dtype in (torch.float64, torch.complex128) for t in tensors)
    return torch.float64 if wide else torch.float32


def accumulator(t: torch.Tensor) -> torch.dtype | None:
    return torch.float32 if t.dtype in _LOW else None  # None: the tensor's own dtype


def _dense_flat(t: torch.Tensor) -> torch.Tensor:
    """``t`` as one 1-D tensor: a view when its entries fill one block of memory, else a copy."""
    flat = dense_view(t)
    return flat if flat is not None else t.reshape(-1)


def _host_sum_of_squares(t: torch.Tensor) -> float:
    if t.dtype in _DOT_DTYPES:
        flat = _dense_flat(t)
        s = torch.dot(flat, flat).item()
        if math.isfinite(s):
            return s
        # The float32 squares overflowed (entries above ~1.8e19), or the gradient really holds
        # an inf or a NaN; float64 tells the two apart.
        return torch.linalg.vector_norm(t, 2, dtype=torch.float64).item() ** 2
    if t.dtype in _LOW:
        # float32 copies, a slice at a time so a huge embedding does not double in memory, each
        # summed by dot: torch's float32 norm kernel adds in sequence and drifts (about 7e-5
        # on 100,000 equal entries), dot does not.
        flat = _dense_flat(t)
        return math.fsum(
            torch.dot(piece, piece).item()
            for piece in (flat[i : i + _SLICE].float() for i in range(0, flat.numel(), _SLICE))
        )
    return torch.linalg.vector_norm(t, 2).item() ** 2  # complex or integer: rare, keep it plain


def _sums_of_squares(part: list[torch.Tensor]) -> float:
    return math.fsum(_host_sum_of_squares(t) for t in part)


def _norms_of(p: float) -> Callable[[list[torch.Tensor]], list[torch.Tensor]]:
    return lambda part: [torch.linalg.vector_norm(t, p, dtype=accumulator(t)) for t in part]


def _host_total_norm(tensors: list[torch.Tensor], p: float) -> float:
    if p == 2.0:
        return math.sqrt(math.fsum(map_parts(_sums_of_squares, tensors)))
    per_tensor = [n for part in map_parts(_norms_of(p), tensors) for n in part]
    # Combine the per-tensor norms as torch does (the p-norm of the p-norms; order does not
    # matter), in float64 so that |norm|**p for large p does not overflow float32.
    stacked = torch.stack([n.to(torch.float64) for n in per_tensor])
    return torch.linalg.vector_norm(stacked, p).item()


def use_foreach(foreach: bool | None, device: torch.device, tensors: list) -> bool:
    supported = device.type in FOREACH_DEVICES
    if foreach is None:
        return supported and all(type(t) is torch.Tensor for t in tensors)
    if foreach and not supported:
        raise RuntimeError(
            f"foreach=True was passed, but torch has no foreach kernels for {device.type} tensors"
        )
    return foreach


def by_device_and_dtype(tensors: list[torch.Tensor]) -> dict:
    groups = defaultdict(list)
    for t in tensors:
        groups[(t.device, t.dtype)].append(t)
    return groups


def _device_total_norm(tensors: list[torch.Tensor], p: float, foreach: bool | None):
    out_device, out_dtype = tensors[0].device, result_dtype(tensors)
    norms = []
    for (device, dtype), group in by_device_and_dtype(tensors).items():
        acc = torch.float32 if dtype in _LOW else None
        if use_foreach(foreach, device, group):
            norms.extend(torch._foreach_norm(group, p, dtype=acc))
        else:
            norms.extend(torch.linalg.vector_norm(t, p, dtype=acc) for t in group)
    stacked = torch.stack([n.to(device=out_device, dtype=out_dtype) for n in norms])
    return torch.linalg.vector_norm(stacked, p)


def total_norm(tensors: list[torch.Tensor], p: float, foreach: bool | None) -> torch.Tensor:
    """The p-norm of all ``tensors`` taken as one vector, as a 0-d tensor on the first's device."""
    if not tensors:
        return torch.tensor(0.0)  # torch's answer for nothing to measure
    if host_route(tensors):  # foreach is moot here: the CPU supports both, and dot beats either
        return torch.tensor(_host_total_norm(tensors, p), dtype=result_dtype(tensors))
    return _device_total_norm(tensors, p, foreach)


def is_finite(norm: torch.Tensor) -> bool:
    """Reads the norm back: one host synchronisation, made only when the caller asked for it."""
    return bool(torch.isfinite(norm))


def scale_(grads: list[torch.Tensor], max_norm: float, norm, foreach: bool | None) -> None:
    """torch's rule, in place: g <- g * min(max_norm / (norm + 1e-6), 1)."""
    if not grads:
        return
    on_host = not isinstance(norm, torch.Tensor) or norm.device.type == "cpu"
    if on_host and host_route(grads):
        coef = max_norm / (float(norm) + EPS)
        if coef >= 1.0:  # nothing to shrink: skip a full read and write of every gradient
            return
        # A NaN coefficient or 0 (an inf norm) lands here too and spreads, as in torch. Each
        # worker goes backwards through the part it just measured, so it starts on the bytes
        # the norm pass left in the cache.
        map_parts(lambda part: [g.mul_(coef) for g in reversed(part)], grads)
        return
    norm = torch.as_tensor(norm)
    coef = torch.clamp(max_norm / (norm + EPS), max=1.0)  # stays on the device: no sync
    for (device, _), group in by_device_and_dtype(grads).items():
        coef_here = coef.to(device)
        if use_foreach(foreach, device, group):
            torch._foreach_mul_(group, coef_here)
        else:
            for g in group:
                g.mul_(coef_here)


def clamp_(grads: list[torch.Tensor], v: float, foreach: bool | None) -> None:
    """Clip by value in place: g <- clamp(g, -v, v), entry by entry."""
    if math.isinf(v):  # an infinite box holds every value but NaN, which clamp keeps anyway
        return
    if host_route(grads):
        map_parts(lambda part: [g.clamp_(-v, v) for g in part], grads)
        return
    for (device, _), group in by_device_and_dtype(grads).items():
        if use_foreach(foreach, device, group):
            torch._foreach_clamp_min_(group, -v)
            torch._foreach_clamp_max_(group, v)
        else:
            for g in group:
                g.clamp_(-v, v)


def random_direction_(
    grads: list[torch.Tensor], length: float, p: float, generator: torch.Generator | None
) -> None:
    """Overwrite ``grads`` with one random direction of p-norm ``length`` (the book's escape).

    The direction is Gaussian, drawn on the generator's device in float32 (float64 for float64
    gradients), so the written norm is ``length`` to within that dtype's rounding.
    """
    where = generator.device if generator is not None else grads[0].device
    draws = [
        torch.randn(
            g.shape,
            generator=generator,
            device=where,
            dtype=torch.float64 if g.dtype == torch.float64 else torch.float32,
        )
        for g in grads
    ]
    factor = length / _device_total_norm(draws, p, foreach=None)
    for g, d in zip(grads, draws, strict=True):
        g.copy_((d * factor.to(d.device)).to(g.device))


def raise_nonfinite(norm: torch.Tensor, p: float, what: str = "the gradients") -> None:
    raise RuntimeError(
        f"the total norm of order {p} of {what} is {float(norm)}, so they cannot be clipped; "
        "nothing was changed (nonfinite='propagate' scales them anyway, as torch does; "
        "nonfinite='random' takes a random step of length max_norm instead)"
    )


def nonfinite_check(norm: torch.Tensor, policy: str, p: float, what: str) -> bool:
    """For the "error" and "random" policies: is ``norm`` finite? Raises under "error".

    Under "propagate" it never looks (no host sync) and answers True.
    """
    if policy == "propagate" or is_finite(norm):
        return True
    if policy == "error":
        raise_nonfinite(norm, p, what)
    return False


def clip_(grads, max_norm, norm, p, finite, generator, foreach) -> None:
    """The last step of every norm clip: rescale by torch's rule, or take the random step."""
    if finite:
        scale_(grads, max_norm, norm, foreach)
    elif grads:
        random_direction_(grads, max_norm, p, generator)
