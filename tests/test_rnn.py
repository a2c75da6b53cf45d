"""clipkit.rnn: the small tanh RNN whose gradients explode, and its training loop."""

from __future__ import annotations

import copy

import pytest
import torch

from clipkit import rnn

SMALL = {"steps": 6, "length": 12, "hidden": 8}  # a few milliseconds, same code paths


@pytest.fixture(scope="module")
def notebook_runs():
    """The two runs of notebook 03, section 4 (about a second each on one free core)."""
    return {clip: rnn.train(clip) for clip in (None, 1.0)}


def test_same_arguments_give_the_same_run_bit_for_bit():
    a, b = rnn.train(0.5, **SMALL), rnn.train(0.5, **SMALL)
    for field in ("grad_norm", "clipped", "loss"):
        assert torch.equal(getattr(a, field), getattr(b, field))
    for p, q in zip(a.net.parameters(), b.net.parameters(), strict=True):
        assert torch.equal(p, q)


def test_another_seed_gives_another_run():
    a, b = rnn.train(None, seed=1, **SMALL), rnn.train(None, seed=2, **SMALL)
    assert not torch.equal(a.loss, b.loss)


@pytest.mark.parametrize("radius", [0.9, 1.5, 2.0])
def test_recurrent_weights_start_at_the_asked_spectral_radius(radius):
    net = rnn.TanhRNN(hidden=32, radius=radius, generator=torch.Generator().manual_seed(0))
    eig = torch.linalg.eigvals(net.w_rec.detach().double())
    assert eig.abs().max().item() == pytest.approx(radius, rel=1e-5)


def _batch(size=16, length=12):
    return rnn.first_bit_batch(size, length, torch.Generator().manual_seed(11))


def test_the_clipped_step_matches_torch_clip_grad_norm_and_caps_the_update():
    net = rnn.TanhRNN(hidden=8, radius=1.8, generator=torch.Generator().manual_seed(4))
    x, y = _batch()
    twin = copy.deepcopy(net)
    before = [p.detach().clone() for p in net.parameters()]
    lr, max_norm = 0.1, 0.01

    _, norm = rnn.train_step(net, x, y, lr, max_norm)

    rnn.squared_error(twin, x, y).backward()
    torch_norm = torch.nn.utils.clip_grad_norm_(twin.parameters(), max_norm)
    with torch.no_grad():
        for p in twin.parameters():
            p -= lr * p.grad
    assert norm.item() == pytest.approx(torch_norm.item(), rel=1e-6)
    assert norm.item() > max_norm  # the cap was needed
    step = torch.cat([(p - b).flatten() for p, b in zip(net.parameters(), before, strict=True)])
    assert step.norm().item() == pytest.approx(lr * max_norm, rel=1e-4)
    for p, q in zip(net.parameters(), twin.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-7)


def test_without_clipping_the_step_is_the_whole_gradient():
    net = rnn.TanhRNN(hidden=8, radius=1.8, generator=torch.Generator().manual_seed(4))
    x, y = _batch()
    before = [p.detach().clone() for p in net.parameters()]
    _, norm = rnn.train_step(net, x, y, 0.1, None)
    step = torch.cat([(p - b).flatten() for p, b in zip(net.parameters(), before, strict=True)])
    assert step.norm().item() == pytest.approx(0.1 * norm.item(), rel=1e-4)


def test_recorded_norms_equal_norms_computed_independently():
    """Replay the first steps of a clipped run with torch alone, in float64."""
    steps, max_norm = 4, 0.5
    run = rnn.train(max_norm, steps=steps, length=12, hidden=8, seed=9)
    net = rnn.TanhRNN(8, rnn.RADIUS, torch.Generator().manual_seed(9))
    data = torch.Generator().manual_seed(10)
    for step in range(steps):
        x, y = rnn.first_bit_batch(rnn.BATCH_SIZE, 12, data)
        loss = ((net(x) - y) ** 2).mean()
        grads = torch.autograd.grad(loss, list(net.parameters()))
        norm = torch.cat([g.double().flatten() for g in grads]).norm().item()
        assert run.grad_norm[step].item() == pytest.approx(norm, rel=1e-5)
        assert run.loss[step].item() == pytest.approx(loss.item(), rel=1e-6)
        assert bool(run.clipped[step]) == (norm > max_norm)
        scale = min(1.0, max_norm / (norm + 1e-6))
        with torch.no_grad():
            for p, g in zip(net.parameters(), grads, strict=True):
                p -= rnn.LR * scale * g


def test_a_run_stops_cleanly_when_it_diverges():
    run = rnn.train(None, steps=40, length=12, hidden=8, lr=50.0)
    assert run.diverged_at is not None
    assert torch.isnan(run.loss[run.diverged_at :]).all()
    assert torch.isfinite(run.loss[: run.diverged_at]).all()
    assert not run.clipped.any()


def test_on_the_notebook_seed_clipping_does_better_than_plain_descent(notebook_runs):
    """Measured on this seed, not a law: the plain run is thrown off and never recovers."""
    plain, clipped = notebook_runs[None], notebook_runs[1.0]
    assert clipped.diverged_at is None
    assert clipped.loss[-20:].mean() < 0.01
    plain_end = plain.loss[torch.isfinite(plain.loss)][-20:].mean()
    assert plain.diverged_at is not None or plain_end > 100 * clipped.loss[-20:].mean()


def test_summing_over_the_batch_scales_the_norm_by_the_batch_size():
    net = rnn.TanhRNN(hidden=8, generator=torch.Generator().manual_seed(1))
    for size in (1, 7, 32):
        x, y = _batch(size)
        mean = rnn.gradient_norm(net, x, y, "mean").item()
        total = rnn.gradient_norm(net, x, y, "sum").item()
        assert total == pytest.approx(size * mean, rel=1e-5)


def test_typical_norms_rows_are_mean_and_sum():
    net = rnn.TanhRNN(hidden=8, generator=torch.Generator().manual_seed(1))
    norms = rnn.typical_norms(net, (2, 5), draws=3, length=12)
    assert norms.shape == (2, 2)
    torch.testing.assert_close(norms[1], norms[0] * torch.tensor([2.0, 5.0], dtype=torch.float64))


def test_gradient_norm_leaves_the_grads_alone():
    net = rnn.TanhRNN(hidden=8, generator=torch.Generator().manual_seed(1))
    rnn.gradient_norm(net, *_batch())
    assert all(p.grad is None for p in net.parameters())


def test_fraction_clipped_falls_as_the_threshold_rises(notebook_runs):
    norms = notebook_runs[1.0].grad_norm
    fractions = rnn.fraction_clipped(norms, torch.logspace(-3, 3, 25))
    assert (fractions.diff() <= 0).all()
    assert fractions[0] == 1.0 and fractions[-1] == 0.0
    assert fractions.shape == (25,)


def test_rule_of_thumb_ignores_the_steps_after_a_divergence():
    norms = torch.tensor([1.0, 3.0, float("nan"), float("nan")])
    assert rnn.rule_of_thumb(norms).item() == 2.0
    assert rnn.fraction_clipped(norms, 2.0).item() == 0.5


def test_unknown_reduction_is_refused():
    net = rnn.TanhRNN(hidden=4)
    with pytest.raises(ValueError, match="reduction"):
        rnn.squared_error(net, *_batch(), reduction="max")
