"""clipkit.descent against loops written out by hand, one run at a time, in plain Python floats."""

from __future__ import annotations

import math

import pytest
import torch

from clipkit.clipping import clip_by_norm
from clipkit.descent import Descent, descend, gradient_of


# A bent ravine: steep across (b), shallow along (w), with a w-b coupling and a non-quadratic
# term so that nothing below is exact for a quadratic by accident.
def ravine_loss(p: torch.Tensor) -> torch.Tensor:
    w, b = p[..., 0], p[..., 1]
    return 0.5 * w**2 + 12.0 * (b - 0.3 * w) ** 2 + 0.1 * torch.log1p(w**2)


def ravine_grad_py(w: float, b: float) -> tuple[float, float]:
    across = 24.0 * (b - 0.3 * w)
    return w - 0.3 * across + 0.2 * w / (1 + w * w), across


def hand_descent(start, eps, steps, *, v=None, mu=0.0, nesterov=False):
    """The update rules written out for one run (Sutskever et al. 2013; Eq. 10.48 for v)."""
    w, b = start
    uw = ub = 0.0
    path = [(w, b)]
    for _ in range(steps):
        gw, gb = ravine_grad_py(w + mu * uw, b + mu * ub) if nesterov else ravine_grad_py(w, b)
        norm = math.hypot(gw, gb)
        if v is not None and norm > v:
            gw, gb = gw * v / norm, gb * v / norm
        uw, ub = mu * uw - eps * gw, mu * ub - eps * gb
        w, b = w + uw, b + ub
        path.append((w, b))
    return torch.tensor(path, dtype=torch.float64)


START = (-2.0, 1.5)
GRAD = gradient_of(ravine_loss)


def run(start=START, eps=0.03, steps=30, **kw) -> Descent:
    return descend(GRAD, torch.tensor(start, dtype=torch.float64), eps, steps, **kw)


def test_plain_descent_matches_the_hand_loop():
    expected = hand_descent(START, 0.03, 30)
    torch.testing.assert_close(run().path, expected, rtol=1e-12, atol=1e-12)


def test_clipped_descent_matches_the_hand_loop_and_clips_only_long_gradients():
    result = run(max_norm=10.0)
    expected = hand_descent(START, 0.03, 30, v=10.0)
    torch.testing.assert_close(result.path, expected, rtol=0, atol=1e-12)
    # The run must contain both kinds of step, or this test would not test the rule.
    assert (result.grad_norms > 10.0).any() and (result.grad_norms < 10.0).any()
    steps = (result.path[1:] - result.path[:-1]).norm(dim=-1)
    assert steps.max() <= 0.03 * 10.0 * (1 + 1e-12)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_matches_the_hand_loop(nesterov):
    result = run(eps=0.02, steps=40, momentum=0.9, nesterov=nesterov, max_norm=30.0)
    expected = hand_descent(START, 0.02, 40, v=30.0, mu=0.9, nesterov=nesterov)
    torch.testing.assert_close(result.path, expected, rtol=0, atol=1e-12)


def test_nesterov_is_not_heavy_ball():
    heavy = run(eps=0.02, steps=40, momentum=0.9).path
    ahead = run(eps=0.02, steps=40, momentum=0.9, nesterov=True).path
    assert (heavy - ahead).abs().max() > 1e-2


def test_a_grid_of_starts_times_step_sizes_is_one_call_equal_to_single_runs():
    starts = torch.tensor([[-2.0, 1.5], [1.0, -1.0], [0.5, 2.0]], dtype=torch.float64)
    eps = torch.tensor([0.01, 0.05, 0.08, 0.2], dtype=torch.float64)  # 0.2 diverges across b
    thresholds = torch.tensor([3.0, 1.0, 100.0, 0.5], dtype=torch.float64)
    for v in (None, thresholds):
        batch = descend(GRAD, starts[:, None, :], eps, 25, max_norm=v, bounds=[(-5, 5)] * 2)
        assert batch.path.shape == (3, 4, 26, 2) and batch.left_at.shape == (3, 4)
        for i in range(3):
            for j in range(4):
                one = descend(
                    GRAD, starts[i], eps[j], 25, max_norm=None if v is None else v[j],
                    bounds=[(-5, 5)] * 2,
                )  # fmt: skip
                torch.testing.assert_close(batch.path[i, j], one.path, rtol=0, atol=0)
                torch.testing.assert_close(batch.grad_norms[i, j], one.grad_norms, rtol=0, atol=0)
                assert batch.left_at[i, j] == one.left_at
        # Step 0.2 overshoots the steep b-direction and escapes, unless clipped to length 0.1.
        assert batch.left[:, 3].tolist() == [v is None] * 3


def test_left_at_counts_updates_and_freezes_on_the_first_point_outside():
    push = lambda p: -torch.ones_like(p)  # noqa: E731  constant slope: x_t = x_0 + t
    starts = torch.tensor([[0.0], [0.5], [3.0], [2.5]])
    result = descend(push, starts, 1.0, 5, bounds=[(-1.0, 2.5)])
    # 0 -> 1 -> 2 -> 3: update 3 leaves. 0.5 -> ... -> 2.5 stays (closed interval), 3.5 leaves.
    assert result.left_at.tolist() == [3, 3, 0, 1]
    assert result.left.tolist() == [True, True, True, True]
    assert result.path[0, :, 0].tolist() == [0.0, 1.0, 2.0, 3.0, 3.0, 3.0]
    assert result.path[1, :, 0].tolist() == [0.5, 1.5, 2.5, 3.5, 3.5, 3.5]
    assert result.path[2, :, 0].tolist() == [3.0] * 6
    assert result.grad_norms[0].tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert not result.diverged.any()
    stays = descend(push, torch.tensor([0.0]), 0.1, 5, bounds=[(-1.0, 2.5)])
    assert stays.left_at.item() == -1 and not stays.left.item()


def test_an_overflowing_run_stops_on_its_last_finite_point_and_spares_the_others():
    # The gradient of x**4 / 4 is x**3: from x = 10 with step 1 the run explodes within a few
    # updates (10, -990, ~1e9, ~-1e27, inf). float32 overflows sooner than float64.
    cube = lambda p: p**3  # noqa: E731
    starts = torch.tensor([[10.0], [0.5]])
    result = descend(cube, starts, 1.0, 8)
    assert torch.isfinite(result.path).all() and not result.path.isnan().any()
    assert result.diverged.tolist() == [True, False]
    t = result.left_at[0].item()
    assert 2 <= t <= 8 and result.left_at[1].item() == -1
    assert (result.path[0, t:] == result.path[0, t - 1]).all()
    assert (result.grad_norms[0, t:] == 0).all()
    torch.testing.assert_close(result.path[1], descend(cube, starts[1], 1.0, 8).path)


def test_gradient_of_gives_each_row_its_own_gradient_even_under_no_grad():
    points = torch.tensor([[-2.0, 1.5], [0.3, -0.7]], dtype=torch.float64)
    with torch.no_grad():
        g = GRAD(points)
    expected = torch.tensor([ravine_grad_py(*p) for p in points.tolist()], dtype=torch.float64)
    torch.testing.assert_close(g, expected, rtol=1e-12, atol=1e-12)


def test_per_run_thresholds_follow_the_book_rule_row_by_row():
    # descend clips with clip_by_norm's factor; per-run thresholds are a tensor max_norm.
    g = torch.tensor([[10.0, 1.0], [3.0, 4.0], [0.6, 0.8]], dtype=torch.float64)
    clipped = clip_by_norm(g, 1.0, dim=-1)
    torch.testing.assert_close(clipped[0], torch.tensor([10.0, 1.0]).double() / math.sqrt(101))
    assert torch.equal(clipped[2], g[2])  # norm exactly 1 is not above 1: left alone, bit for bit
    per_row = clip_by_norm(g, torch.tensor([20.0, 2.5, 0.5], dtype=torch.float64), dim=-1)
    assert per_row.norm(dim=-1).tolist() == pytest.approx([math.sqrt(101), 2.5, 0.5])
    torch.testing.assert_close(clip_by_norm(g.T, 1.0, dim=0), clipped.T)
    never = clip_by_norm(g, torch.tensor([float("inf"), 1.0, 1.0], dtype=torch.float64), dim=-1)
    assert torch.equal(never[0], g[0])


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), torch.tensor([1.0, -2.0])])
def test_a_threshold_that_is_no_threshold_is_refused(bad):
    with pytest.raises(ValueError, match="max_norm"):
        clip_by_norm(torch.ones(2, 2), bad, dim=-1)
    with pytest.raises(ValueError, match="max_norm"):
        descend(lambda p: p, torch.ones(2, 2), 0.1, 3, max_norm=bad)


def test_bounds_of_the_wrong_shape_are_refused():
    with pytest.raises(ValueError, match="bounds"):
        descend(lambda p: p, torch.ones(3, 2), 0.1, 3, bounds=[(-1, 1)])


def test_momenta_and_thresholds_are_batch_dimensions_too():
    mu = torch.tensor([0.0, 0.5, 0.9], dtype=torch.float64)
    v = torch.tensor([[1.0], [30.0]], dtype=torch.float64)  # (2, 1) x (3,) -> (2, 3) runs
    batch = run(eps=0.02, steps=20, momentum=mu, max_norm=v, nesterov=True)
    assert batch.path.shape == (2, 3, 21, 2)
    for i in range(2):
        for j in range(3):
            expected = hand_descent(
                START, 0.02, 20, v=v[i, 0].item(), mu=mu[j].item(), nesterov=True
            )
            torch.testing.assert_close(batch.path[i, j], expected, rtol=0, atol=1e-12)
