"""clipkit.curvature against closed forms and finite differences."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from clipkit import curvature as cv
from clipkit import momentum as mo

F64 = torch.float64


def _central_differences(f, x, h=1e-4):
    """f' and f'' by central differences, in float64 (error O(h^2))."""
    slope = (f(x + h) - f(x - h)) / (2 * h)
    curv = (f(x + h) - 2 * f(x) + f(x - h)) / (h * h)
    return slope, curv


# --- the exponential -----------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    a=st.floats(0.2, 5.0) | st.floats(-5.0, -0.2),
    x=st.lists(st.floats(-3.0, 3.0), min_size=1, max_size=8),
)
def test_exponential_ratio_is_one_over_a_at_every_x(a, x):
    xs = torch.tensor(x, dtype=F64)
    by_autograd = cv.slope_curvature_ratio(lambda t: cv.exponential(t, a), xs)
    torch.testing.assert_close(by_autograd, torch.full_like(xs, 1.0 / a), rtol=1e-12, atol=0)
    torch.testing.assert_close(cv.exponential_ratio(xs, a), by_autograd, rtol=1e-12, atol=0)


def test_exponential_closed_form_matches_autograd():
    xs = torch.linspace(-4, 2, 13, dtype=F64)
    for a in (0.5, 1.0, 3.0, -2.0):
        f, s, c = cv.exponential_derivatives(xs, a)
        s_ag, c_ag = cv.slope_and_curvature(lambda t, a=a: cv.exponential(t, a), xs)
        torch.testing.assert_close(f, torch.exp(a * xs))
        torch.testing.assert_close(s, s_ag)
        torch.testing.assert_close(c, c_ag)
        torch.testing.assert_close(c, a * s)  # f'' = a f'


def test_slope_and_curvature_vanish_together_but_the_ratio_stays():
    # Martens and Sutskever's point, on exp(2x): both derivatives fall by e^{-2} per unit x
    xs = torch.tensor([0.0, -5.0, -10.0], dtype=F64)
    _, s, c = cv.exponential_derivatives(xs, 2.0)
    assert s[-1] < 1e-8 and c[-1] < 1e-8
    torch.testing.assert_close(s / c, torch.full_like(xs, 0.5))


def test_newton_step_on_the_exponential_has_length_one_over_a_everywhere():
    xs = torch.linspace(-6, 2, 9, dtype=F64)
    for a in (0.5, 2.0, -1.5):
        step = cv.newton_step_1d(lambda t, a=a: cv.exponential(t, a), xs) - xs
        torch.testing.assert_close(step, torch.full_like(xs, -1.0 / a))


def test_exponential_ratio_broadcasts_a_tensor_of_steepnesses():
    a = torch.tensor([[1.0], [4.0]], dtype=F64)
    out = cv.exponential_ratio(torch.zeros(3, dtype=F64), a)
    assert out.shape == (2, 3)
    torch.testing.assert_close(out[1], torch.full((3,), 0.25, dtype=F64))


# --- autograd derivatives against finite differences ---------------------------------------


@pytest.mark.parametrize(
    "f",
    [torch.sin, lambda t: torch.log1p(t**20), lambda t: t**3 - 2 * t, torch.tanh],
    ids=["sin", "cliff", "cubic", "tanh"],
)
def test_slope_and_curvature_match_central_differences(f):
    xs = torch.linspace(-1.1, 1.1, 23, dtype=F64)
    s, c = cv.slope_and_curvature(f, xs)
    s_fd, c_fd = _central_differences(f, xs)
    torch.testing.assert_close(s, s_fd, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(c, c_fd, rtol=1e-4, atol=1e-4)


def test_affine_function_has_zero_curvature_and_infinite_ratio():
    xs = torch.tensor([-1.0, 2.0])
    s, c = cv.slope_and_curvature(lambda t: 3 * t + 1, xs)
    assert s.tolist() == [3.0, 3.0] and c.tolist() == [0.0, 0.0]
    assert torch.isinf(cv.slope_curvature_ratio(lambda t: 3 * t + 1, xs)).all()


def test_results_carry_no_graph_and_work_under_no_grad():
    xs = torch.linspace(-1, 1, 5, requires_grad=True)
    with torch.no_grad():
        s, c = cv.slope_and_curvature(torch.sin, xs)
        g, h = cv.gradient_and_hessian(cv.saddle_loss, torch.ones(3, 2))
    for t in (s, c, g, h):
        assert not t.requires_grad
    torch.testing.assert_close(c, -torch.sin(xs.detach()))


def test_hessian_matches_finite_differences_of_the_gradient():
    def bowl(p):  # a non-quadratic surface with a mixed term
        x, y = p[..., 0], p[..., 1]
        return torch.sin(x) * y**2 + torch.exp(0.3 * x * y)

    p = torch.tensor([[0.4, -0.7], [1.2, 0.5], [-0.3, 0.9]], dtype=F64)
    _, h = cv.gradient_and_hessian(bowl, p)
    eps = 1e-5
    for j in range(2):
        e = torch.zeros(2, dtype=F64)
        e[j] = eps
        g_plus, _ = cv.gradient_and_hessian(bowl, p + e)
        g_minus, _ = cv.gradient_and_hessian(bowl, p - e)
        torch.testing.assert_close(
            h[..., :, j], (g_plus - g_minus) / (2 * eps), rtol=1e-6, atol=1e-7
        )
    torch.testing.assert_close(h, h.transpose(-1, -2))


# --- Newton steps --------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    centre=st.floats(-5, 5),
    scale=st.floats(0.1, 10),
    x=st.lists(st.floats(-10, 10), min_size=1, max_size=6),
)
def test_newton_1d_lands_on_the_minimum_of_a_quadratic_in_one_step(centre, scale, x):
    xs = torch.tensor(x, dtype=F64)
    landed = cv.newton_step_1d(lambda t: scale * (t - centre) ** 2 + 1.0, xs)
    torch.testing.assert_close(landed, torch.full_like(xs, centre), rtol=0, atol=1e-9)


def test_newton_2d_lands_on_the_minimum_of_any_positive_definite_quadratic():
    gen = torch.Generator().manual_seed(0)
    m = torch.randn(2, 2, generator=gen, dtype=F64)
    a = m @ m.T + 0.5 * torch.eye(2, dtype=F64)
    centre = torch.tensor([1.5, -0.5], dtype=F64)

    def quad(p):
        d = p - centre
        return 0.5 * torch.einsum("...i,ij,...j->...", d, a, d)

    starts = torch.randn(7, 2, generator=gen, dtype=F64) * 4
    torch.testing.assert_close(cv.newton_step(quad, starts), centre.expand(7, 2))


def test_newton_2d_solves_the_ravine_in_one_step_whatever_kappa():
    starts = torch.tensor([[-4.0, 1.0], [3.0, -0.2]], dtype=F64)
    for kappa in (1.0, 50.0, 1e4):
        landed = cv.newton_step(lambda p, k=kappa: mo.ravine_loss(p, k), starts)
        torch.testing.assert_close(landed, torch.zeros_like(starts))


def test_saddle_newton_jumps_to_the_saddle_point():
    gen = torch.Generator().manual_seed(1)
    starts = torch.randn(5, 4, 2, generator=gen, dtype=F64)  # a batch of shape (5, 4)
    landed = cv.newton_step(cv.saddle_loss, starts)
    assert landed.shape == starts.shape
    torch.testing.assert_close(landed, torch.zeros_like(starts))
    g, h = cv.gradient_and_hessian(cv.saddle_loss, landed)
    torch.testing.assert_close(g, torch.zeros_like(g))
    assert (torch.linalg.eigvalsh(h)[..., 0] < 0).all()  # it is a saddle, not a minimum


def test_saddle_gradient_descent_moves_away_along_y():
    lr, p = 0.1, torch.tensor([0.8, 0.05], dtype=F64)
    dist = [p.norm().item()]
    for k in range(1, 31):
        p = cv.gradient_step(cv.saddle_loss, p, lr)
        assert p[0].item() == pytest.approx(0.8 * (1 - 2 * lr) ** k)
        assert p[1].item() == pytest.approx(0.05 * (1 + 2 * lr) ** k)
        dist.append(p.norm().item())
    assert dist[-1] > 10 * dist[0]  # and it never stops: the loss falls without bound
    assert cv.saddle_loss(p).item() < cv.saddle_loss(torch.tensor([0.8, 0.05])).item()


def test_saddle_gradient_descent_from_exactly_y_zero_converges_to_the_saddle():
    # the one line from which descent does reach the saddle: measure zero, but it exists
    p = torch.tensor([1.0, 0.0], dtype=F64)
    for _ in range(100):
        p = cv.gradient_step(cv.saddle_loss, p, 0.1)
    assert p.norm().item() < 1e-9


def test_singular_hessian_raises():
    with pytest.raises(torch.linalg.LinAlgError):
        cv.newton_step(lambda p: p[..., 0] ** 2 + p[..., 1], torch.ones(2))


def test_ravine_hessian_is_diag_one_kappa():
    _, h = cv.gradient_and_hessian(lambda p: mo.ravine_loss(p, 30.0), torch.zeros(2, dtype=F64))
    torch.testing.assert_close(h, torch.diag(torch.tensor([1.0, 30.0], dtype=F64)))


# --- the stable step limit, against runs of clipkit.descent --------------------------------


@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("mu", [0.0, 0.5, 0.9])
def test_stable_step_limit_separates_settling_from_blowing_up(mu, nesterov):
    from clipkit.descent import descend

    h = 50.0
    limit = mo.stable_step_limit(h, mu, nesterov).item()
    steps = torch.tensor([0.97 * limit, 1.03 * limit], dtype=F64)
    run = descend(
        lambda p: h * p, torch.tensor([1.0], dtype=F64), steps, 2000, momentum=mu, nesterov=nesterov
    )
    final = run.final[..., 0].abs()
    assert final[0] < 1e-6  # just below the limit: it settles
    assert final[1] > 1.0 or bool(run.diverged[1])  # just above: it blows up


def test_nesterov_narrows_and_heavy_ball_widens_the_stable_range():
    plain = mo.stable_step_limit(50.0).item()
    assert mo.stable_step_limit(50.0, 0.9, nesterov=True).item() < plain
    assert mo.stable_step_limit(50.0, 0.9, nesterov=False).item() > plain


# --- the ravine race -----------------------------------------------------------------------


def test_steps_to_settle_counts_only_for_good():
    losses = torch.tensor(
        [
            [1e-4, 1e-4, 1e-4],  # below from the start
            [5.0, 1e-4, 2.0],  # dips, then rises: not settled
            [5.0, 2.0, 1e-4],  # settles at the last step
            [5.0, 2.0, 3.0],  # never below
        ]
    )
    assert mo.steps_to_settle(losses).tolist() == [0, -1, 2, -1]
    assert mo.steps_to_settle(torch.tensor([3.0, 0.5]), target=1.0).item() == 1


def test_ravine_race_rows_are_plain_descent_and_nesterov():
    from clipkit.descent import descend, gradient_of

    start = torch.tensor(mo.RAVINE_START, dtype=F64)
    run, losses = mo.ravine_race(0.02, 0.9, 60, start=start)
    grad = gradient_of(mo.ravine_loss)
    plain = descend(grad, start, 0.02, 60)
    nesterov = descend(grad, start, 0.02, 60, momentum=0.9, nesterov=True)
    torch.testing.assert_close(run.path[0], plain.path)
    torch.testing.assert_close(run.path[1], nesterov.path)
    torch.testing.assert_close(losses, mo.ravine_loss(run.path))


def test_ravine_race_sweeps_step_sizes_and_momenta_in_one_call():
    start = torch.tensor(mo.RAVINE_START, dtype=F64)
    lrs = torch.tensor([0.01, 0.02, 0.03], dtype=F64)[:, None]
    mus = torch.tensor([0.5, 0.9], dtype=F64)
    run, losses = mo.ravine_race(lrs, mus, 40, start=start)
    assert losses.shape == (3, 2, 2, 41)
    # the plain row does not depend on the momentum
    torch.testing.assert_close(losses[:, 0, 0], losses[:, 1, 0])
    _, single = mo.ravine_race(0.02, 0.9, 40, start=start)
    torch.testing.assert_close(losses[1, 1], single)


def test_hessian_bytes_is_n_squared_entries():
    assert cv.hessian_bytes(3) == 36
    assert cv.hessian_bytes(10**6, bytes_per_entry=8) == 8 * 10**12


# --- closed forms used by the demos --------------------------------------------------------


def test_closed_form_gradients_match_autograd():
    from clipkit.descent import gradient_of

    p = torch.randn(6, 2, generator=torch.Generator().manual_seed(3), dtype=F64)
    torch.testing.assert_close(cv.saddle_grad(p), gradient_of(cv.saddle_loss)(p))
    torch.testing.assert_close(
        mo.ravine_grad(p, 7.0), gradient_of(lambda q: mo.ravine_loss(q, 7.0))(p)
    )


@pytest.mark.parametrize("nesterov", [True, False])
def test_momentum_path_on_quadratic_matches_descend(nesterov):
    from clipkit.descent import descend

    # starts (2, 1, 1, 2), step sizes (3, 1), momenta (4,): a batch of 2 x 3 x 4 runs
    start = torch.tensor([[-4.0, 1.0], [2.0, -0.5]], dtype=F64)[:, None, None, :]
    lr = torch.tensor([0.005, 0.02, 0.025], dtype=F64)[:, None]
    mus = torch.tensor([0.0, 0.5, 0.9, 0.99], dtype=F64)
    closed = mo.momentum_path_on_quadratic((1.0, 50.0), start, lr, mus, 300, nesterov=nesterov)
    stepped = descend(mo.ravine_grad, start, lr, 300, momentum=mus, nesterov=nesterov)
    assert closed.shape == stepped.path.shape == (2, 3, 4, 301, 2)
    torch.testing.assert_close(closed, stepped.path, rtol=1e-9, atol=1e-12)


def test_momentum_path_on_quadratic_handles_step_counts_off_powers_of_two():
    start = torch.tensor([1.0], dtype=F64)
    for steps in (0, 1, 2, 3, 7, 64, 65):
        path = mo.momentum_path_on_quadratic((2.0,), start, 0.1, 0.0, steps)
        torch.testing.assert_close(path[:, 0], 0.8 ** torch.arange(steps + 1, dtype=F64))
