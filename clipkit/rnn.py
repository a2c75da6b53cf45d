"""A small recurrent net whose gradients explode, and a training loop with and without clipping.

The net is a vanilla tanh RNN with one input, ``hidden`` units and a linear read-out::

    h_0 = 0
    h_t = tanh(W_rec h_{t-1} + W_in x_t + b)        t = 1 .. T
    y   = w_out . h_T + c

Its task needs a long memory: the first input is a bit, +1 or -1, every later input is noise,
and the net must output the bit after T steps (:func:`first_bit_batch`). The loss is the squared
error, averaged over the batch (or summed, to show that the threshold does not transfer).

Back-propagation multiplies by ``diag(1 - h_t**2) W_rec`` once per step, so when the spectral
radius of ``W_rec`` is above 1 the gradient can grow like ``radius**T`` wherever the units are not
saturated: that is the cliff of Figure 10.17 in a real network. :func:`train` starts ``W_rec`` at
a chosen spectral radius (1.5 by default) and records, at every step, the gradient norm before
clipping, whether the step was clipped, and the loss.

All randomness comes from seeded ``torch.Generator`` objects: the same arguments give the same
run, bit for bit, on the same machine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache

import torch

from clipkit.clipping import clip_grad_norm_, get_total_norm
from clipkit.device import one_thread

SEED = 5  # the seed of the notebook's runs (see ``train``)
LENGTH = 50  # T, the steps between the bit and the answer
HIDDEN = 32
BATCH_SIZE = 32
RADIUS = 1.5  # spectral radius of W_rec at the start: above 1, so gradients can explode
LR = 0.05  # plain SGD
STEPS = 100
NOISE = 0.1  # standard deviation of the inputs after the first


def spectral_radius(w: torch.Tensor) -> torch.Tensor:
    """rho(W) = max_i |lambda_i(W)|, the largest modulus of an eigenvalue of a square matrix.

    >>> round(spectral_radius(torch.tensor([[0.0, 2.0], [-2.0, 0.0]])).item(), 6)
    2.0
    """
    return torch.linalg.eigvals(w).abs().max()


def with_spectral_radius(w: torch.Tensor, radius: float) -> torch.Tensor:
    """W * radius / rho(W): the same matrix, rescaled so that its spectral radius is ``radius``.

    Eigenvalues scale with the matrix, so the rescaled matrix has exactly the asked radius
    (up to rounding).

    >>> w = with_spectral_radius(torch.tensor([[1.0, 1.0], [0.0, 0.5]]), 1.5)
    >>> round(spectral_radius(w).item(), 6)
    1.5
    """
    return w * (radius / spectral_radius(w))


class TanhRNN(torch.nn.Module):
    """h_t = tanh(W_rec h_{t-1} + W_in x_t + b), y = w_out . h_T + c, with h_0 = 0.

    Input ``x`` has shape (batch, T, 1); the output has shape (batch,). The weights are drawn
    from ``generator``: W_rec ~ N(0, 1/hidden) rescaled to spectral radius ``radius``,
    W_in ~ N(0, 1), w_out ~ N(0, 1/hidden), biases zero.

    >>> net = TanhRNN(hidden=4, radius=1.5, generator=torch.Generator().manual_seed(0))
    >>> net(torch.zeros(3, 10, 1)).shape
    torch.Size([3])
    """

    def __init__(
        self,
        hidden: int = HIDDEN,
        radius: float = RADIUS,
        generator: torch.Generator | None = None,
    ):
        super().__init__()
        g = generator if generator is not None else torch.Generator().manual_seed(SEED)
        w_rec = torch.randn(hidden, hidden, generator=g) / hidden**0.5
        self.w_rec = torch.nn.Parameter(with_spectral_radius(w_rec, radius))
        self.w_in = torch.nn.Parameter(torch.randn(hidden, 1, generator=g))
        self.b = torch.nn.Parameter(torch.zeros(hidden))
        self.w_out = torch.nn.Parameter(torch.randn(hidden, generator=g) / hidden**0.5)
        self.c = torch.nn.Parameter(torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        drive = x @ self.w_in.T + self.b  # (batch, T, hidden): the input part of every step
        h = x.new_zeros(x.shape[0], self.w_rec.shape[0])
        for t in range(x.shape[1]):
            h = torch.tanh(torch.addmm(drive[:, t], h, self.w_rec.T))
        return h @ self.w_out + self.c


def first_bit_batch(
    batch_size: int = BATCH_SIZE,
    length: int = LENGTH,
    generator: torch.Generator | None = None,
    noise: float = NOISE,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of the "remember the first bit" task: inputs (batch, T, 1) and targets (batch,).

    x_1 = s with s = +1 or -1 at random; x_2 .. x_T ~ N(0, noise**2); the target is s.
    Predicting 0 gives a squared error of 1, so a loss well below 1 means the net remembers.

    >>> x, y = first_bit_batch(4, 5, torch.Generator().manual_seed(0))
    >>> x.shape, bool((x[:, 0, 0] == y).all())
    (torch.Size([4, 5, 1]), True)
    """
    g = generator if generator is not None else torch.Generator().manual_seed(SEED)
    bits = torch.randint(0, 2, (batch_size,), generator=g).float() * 2 - 1
    x = torch.randn(batch_size, length, 1, generator=g) * noise
    x[:, 0, 0] = bits
    return x, bits


def squared_error(
    net: TanhRNN, x: torch.Tensor, y: torch.Tensor, reduction: str = "mean"
) -> torch.Tensor:
    """L = (1/B) sum_i (y_hat_i - y_i)**2 for ``"mean"``, or the plain sum for ``"sum"``.

    The sum is exactly B times the mean, so its gradient (and the gradient's norm) is B times
    larger: a clipping threshold tuned for one does not carry over to the other.
    """
    if reduction not in ("mean", "sum"):
        raise ValueError(f"reduction must be 'mean' or 'sum', got {reduction!r}")
    err = (net(x) - y) ** 2
    return err.mean() if reduction == "mean" else err.sum()


def train_step(net, x, y, lr, max_norm=None):
    """One step of plain SGD, w <- w - lr g, with g clipped first; returns (loss, ||g||).

    ||g|| is the norm before clipping.

    The clipping call sits after ``backward()`` (it needs this batch's gradients) and before the
    update (it must change them before they are used). With a torch optimizer that means
    between ``loss.backward()`` and ``optimizer.step()``. With mixed precision
    (``torch.amp.GradScaler``) the gradients are still multiplied by the loss scale at that
    point: call ``scaler.unscale_(optimizer)`` first, then clip, then ``scaler.step(optimizer)``,
    or the threshold is compared with a scaled norm. The update is written out here rather than
    taken from ``torch.optim.SGD``; it is the same rule.
    """
    params = list(net.parameters())
    for p in params:
        p.grad = None
    loss = squared_error(net, x, y)
    loss.backward()  # 1. this batch's gradients in p.grad
    # (mixed precision: scaler.unscale_(optimizer) here, before the clip)
    if max_norm is None:
        norm = get_total_norm([p.grad for p in params])
    else:
        norm = clip_grad_norm_(params, max_norm)  # 2. clip: Eq. 10.48-10.49
    with torch.no_grad():  # 3. the update (optimizer.step()) uses the clipped gradient
        for p in params:
            p -= lr * p.grad
    return loss.detach(), norm


@dataclass(frozen=True)
class TrainingRun:
    """What :func:`train` records, one entry per step.

    ``grad_norm`` is the global 2-norm of the gradient before clipping, ``clipped`` whether it
    was above ``max_norm`` (always False without clipping; torch's rule, which
    :func:`clip_grad_norm_` follows, also scales by a factor within 1e-6 of 1 just below it),
    ``loss`` the batch loss before the step. After a divergence (a loss or a parameter that is
    no longer finite) the run stops: ``diverged_at`` is that step and the later entries are NaN
    (False for ``clipped``).
    ``seconds`` is the wall-clock time of the loop, the only entry that is not deterministic;
    ``net`` is the net as training left it.
    """

    grad_norm: torch.Tensor
    clipped: torch.Tensor
    loss: torch.Tensor
    max_norm: float | None
    diverged_at: int | None
    seconds: float
    net: TanhRNN

    @property
    def steps(self) -> int:
        return self.loss.numel()


def train(
    clip: float | None = None,
    *,
    steps: int = STEPS,
    lr: float = LR,
    batch_size: int = BATCH_SIZE,
    length: int = LENGTH,
    hidden: int = HIDDEN,
    radius: float = RADIUS,
    seed: int = SEED,
) -> TrainingRun:
    """Train a :class:`TanhRNN` on :func:`first_bit_batch` with plain SGD, clipping at ``clip``.

    ``clip=None`` trains without clipping; a number v clips the global gradient norm at v with
    :func:`clipkit.clipping.clip_grad_norm_` (see :func:`train_step` for where the call goes).
    The net is drawn from ``seed`` and the batches from ``seed + 1``, so runs that differ only
    in ``clip`` start from the same weights and see the same batches.

    >>> run = train(clip=1.0, steps=3, length=5, hidden=4)
    >>> run.grad_norm.shape, run.diverged_at
    (torch.Size([3]), None)
    """
    net = TanhRNN(hidden, radius, torch.Generator().manual_seed(seed))
    data = torch.Generator().manual_seed(seed + 1)
    nan = float("nan")
    norms, losses = [nan] * steps, [nan] * steps
    diverged_at = None
    start = time.perf_counter()
    with one_thread():
        for step in range(steps):
            x, y = first_bit_batch(batch_size, length, data)
            loss, norm = train_step(net, x, y, lr, clip)
            if not torch.isfinite(loss):
                diverged_at = step
                break
            norms[step], losses[step] = norm.item(), loss.item()
            if not all(torch.isfinite(p).all() for p in net.parameters()):
                diverged_at = step + 1
                break
    seconds = time.perf_counter() - start
    grad_norm = torch.tensor(norms, dtype=torch.float64)
    clipped = grad_norm > clip if clip is not None else torch.zeros(steps, dtype=torch.bool)
    loss = torch.tensor(losses, dtype=torch.float64)
    return TrainingRun(grad_norm, clipped, loss, clip, diverged_at, seconds, net)


CLIP = 1.0  # the threshold of the notebook's clipped run


@cache
def notebook_runs() -> tuple[TrainingRun, TrainingRun]:
    """(plain, clipped): :func:`train` without clipping and with ``clip=CLIP``, default
    arguments otherwise. Computed once per process and shared by the notebook and its demos.
    """
    return train(None), train(CLIP)


def fraction_clipped(norms: torch.Tensor, thresholds) -> torch.Tensor:
    """For each threshold v, the fraction of the (finite) recorded norms with ||g|| > v.

    A what-if count on one run's norms: a run trained with another threshold would itself
    take other steps and see other norms.

    >>> fraction_clipped(torch.tensor([0.5, 1.0, 2.0, 4.0]), [0.1, 1.0, 3.0, 5.0]).tolist()
    [1.0, 0.5, 0.25, 0.0]
    """
    norms = norms[torch.isfinite(norms)]
    v = torch.as_tensor(thresholds, dtype=norms.dtype)
    return (norms.unsqueeze(-1) > v.reshape(-1)).to(norms.dtype).mean(0).reshape(v.shape)


def rule_of_thumb(norms: torch.Tensor) -> torch.Tensor:
    """Pascanu et al.'s (2013) starting point for the threshold: the average gradient norm.

    They report that anything from half to ten times this value works about as well.

    >>> rule_of_thumb(torch.tensor([1.0, 2.0, float("nan"), 6.0])).item()
    3.0
    """
    return norms[torch.isfinite(norms)].mean()


def gradient_norm(
    net: TanhRNN, x: torch.Tensor, y: torch.Tensor, reduction: str = "mean"
) -> torch.Tensor:
    """||grad L|| at the net's current weights for one batch, with the loss reduced by
    ``reduction``. The net's ``.grad`` fields are left as they were."""
    params = list(net.parameters())
    grads = torch.autograd.grad(squared_error(net, x, y, reduction), params)
    return get_total_norm(grads)


def typical_norms(
    net: TanhRNN,
    batch_sizes=(8, 32, 128),
    reductions=("mean", "sum"),
    draws: int = 16,
    *,
    length: int = LENGTH,
    seed: int = SEED,
) -> torch.Tensor:
    """Median gradient norm over ``draws`` fresh batches at the net's current weights, for each
    loss reduction and batch size: shape ``(len(reductions), len(batch_sizes))``.

    Each cell sees its batches from the same seeded generator, so the numbers differ only
    through the reduction and the batch size; how much they move is measured, not assumed.
    (With ``"sum"`` each norm is exactly B times the ``"mean"`` one, see :func:`squared_error`.)
    """
    out = torch.empty(len(reductions), len(batch_sizes), dtype=torch.float64)
    with one_thread():
        for j, size in enumerate(batch_sizes):
            for i, reduction in enumerate(reductions):
                data = torch.Generator().manual_seed(seed + 2)
                batches = (first_bit_batch(size, length, data) for _ in range(draws))
                norms = [gradient_norm(net, x, y, reduction) for x, y in batches]
                out[i, j] = torch.stack(norms).median().item()
    return out
