"""The two-parameter landscapes of clipkit.cliffs.

The three claims about Figure 10.17 are checked with a descent written out here, one run at a
time in Python floats, so that they do not rest on clipkit.descent.
"""

from __future__ import annotations

import math

import pytest
import torch

from clipkit.cliffs import (
    CliffValley,
    figure_10_17,
    gradient_field,
    log_grad_norm,
    rnn_unit_figure,
    rnn_unit_loss,
)

F64 = torch.float64


def slope(fig: CliffValley, w: float, b: float) -> tuple[float, float]:
    across = 2 * fig.a * (b - w / 2)
    return -across / 2 - fig.s + fig.k * math.exp(fig.k * (w - fig.c)), across


def inside(fig: CliffValley, p: tuple[float, float]) -> bool:
    (w0, w1), (b0, b1) = fig.bounds
    return w0 <= p[0] <= w1 and b0 <= p[1] <= b1


def hand_descent(fig, eps, steps, v=None):
    """Points 0..t and the gradient norm used by each update; stops at the first point outside
    the picture (update t is the one that produced point t)."""
    p, path, norms = fig.start, [fig.start], []
    for _ in range(steps):
        gw, gb = slope(fig, *p)
        norm = math.hypot(gw, gb)
        norms.append(norm)
        if v is not None and norm > v:  # Eq. 10.48
            gw, gb = gw * v / norm, gb * v / norm
        p = (p[0] - eps * gw, p[1] - eps * gb)
        path.append(p)
        if not inside(fig, p):
            break
    return path, norms


def test_figure_claim_1_step_005_lands_on_the_face_and_is_thrown_far_left_inside_the_picture():
    fig = figure_10_17()
    path, norms = hand_descent(fig, 0.05, 40)
    assert len(path) == 41 and all(inside(fig, p) for p in path)
    width = fig.bounds[0][1] - fig.bounds[0][0]
    jumps = [
        t
        for t in range(1, 40)
        if norms[t] > 10 * norms[t - 1] and path[t + 1][0] - path[t][0] < -0.4 * width
    ]
    assert jumps == [3]  # one throw, at the fourth update, from the point after update 3
    w, b = path[3]
    # On the face: the wall's term is nearly all of the gradient there.
    assert fig.k * math.exp(fig.k * (w - fig.c)) > 0.9 * norms[3]
    assert norms[3] == pytest.approx(78.5, abs=0.1) and norms[3] / norms[2] > 18
    assert path[4][0] - w == pytest.approx(-3.93, abs=0.01)
    assert path[4][0] > fig.bounds[0][0] + 1  # lands on the flat, a good way inside


def test_figure_claim_2_step_01_leaves_the_picture_at_update_2():
    fig = figure_10_17()
    path, norms = hand_descent(fig, 0.1, 40)
    assert len(path) == 3  # start, inside after update 1, outside after update 2
    assert inside(fig, path[1]) and not inside(fig, path[2])
    assert norms[1] > 800  # update 1 lands on the face; its gradient does the throwing
    assert path[2][0] < fig.bounds[0][0] - 50


@pytest.mark.parametrize("eps", [round(0.01 * i, 2) for i in range(1, 31)])
def test_figure_claim_3_clipped_at_1_stays_inside_and_heads_for_the_valley(eps):
    fig = figure_10_17()
    path, norms = hand_descent(fig, eps, 100, v=1.0)
    assert len(path) == 101, f"left the picture at update {len(path) - 1}"
    steps = [math.dist(p, q) for p, q in zip(path[:-1], path[1:], strict=True)]
    assert max(steps) <= eps * (1 + 1e-12)
    assert max(norms) > 1  # the threshold did bite, so this tests clipping
    start, end = path[0], path[-1]
    loss = lambda p: fig.loss(*p).item()  # noqa: E731
    assert loss(end) < loss(start)
    assert abs(end[1] - end[0] / 2) < abs(start[1] - start[0] / 2)  # nearer the valley floor
    assert all(loss(p) < loss(start) for p in path[1:41])  # no jump back up the picture


def test_figure_runs_through_clipkit_descent_agree_with_the_hand_loop_in_float32_and_64():
    fig = figure_10_17()
    for dtype in (torch.float32, F64):
        runs = fig.descend(torch.tensor([0.05, 0.1, 0.2], dtype=dtype), dtype=dtype)
        assert runs.left_at.tolist() == [-1, 2, 2]
        path = torch.tensor(hand_descent(fig, 0.05, 40)[0], dtype=F64)
        # Plain descent keeps bouncing off the wall after the throw, and each bounce magnifies
        # rounding (torch's exp and math.exp differ in the last bit): compare the first 15 steps.
        tol = 1e-10 if dtype == F64 else 1e-3
        torch.testing.assert_close(runs.path[0, :15].double(), path[:15], rtol=0, atol=tol)


def test_figure_is_sensible_for_every_slider_setting():
    fig = figure_10_17()
    eps = torch.arange(1, 51, dtype=F64) / 100
    plain = fig.descend(eps, dtype=F64)
    assert not plain.left[:6].any() and plain.left[9:].all()  # calm up to 0.06, out from 0.1
    thresholds = torch.tensor([0.1, 0.2, 0.5, 1.0, 2.0, 5.0], dtype=F64)
    clipped = fig.descend(eps[:, None], max_norm=thresholds, steps=100, dtype=F64)
    assert not clipped.left.any()


def test_figure_gradient_is_its_loss_slope_by_autograd_and_finite_differences():
    fig = figure_10_17()
    w = torch.linspace(-4, 4, 41, dtype=F64)[None, :]
    b = torch.linspace(-3, 3, 31, dtype=F64)[:, None]
    dw, db = fig.grad(w, b)
    assert dw.shape == db.shape == (31, 41)
    auto = gradient_field(fig.loss, w, b)
    torch.testing.assert_close(dw, auto[0], rtol=1e-12, atol=1e-9)
    torch.testing.assert_close(db, auto[1], rtol=1e-12, atol=1e-12)
    # Differences of a loss near exp(60) cancel catastrophically; keep them below the wall's top.
    w, b = w[:, w[0] <= 1.5], b
    dw, db = fig.grad(w, b)
    h = 1e-6
    fd_w = (fig.loss(w + h, b) - fig.loss(w - h, b)) / (2 * h)
    fd_b = (fig.loss(w, b + h) - fig.loss(w, b - h)) / (2 * h)
    torch.testing.assert_close(dw, fd_w, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(db, fd_b, rtol=1e-6, atol=1e-6)


def test_figure_floor_and_minimum():
    fig = figure_10_17()
    w = torch.linspace(-4, 4, 9, dtype=F64)
    _, db = fig.grad(w, fig.valley_floor(w))
    assert db.abs().max() == 0
    dw, db = fig.grad(*(torch.tensor(x, dtype=F64) for x in fig.minimum))
    assert abs(dw.item()) < 1e-12 and abs(db.item()) < 1e-12
    (w0, w1), (b0, b1) = fig.bounds
    assert w0 < fig.minimum[0] < w1 and b0 < fig.minimum[1] < b1
    assert fig.start[1] > fig.valley_floor(fig.start[0])  # the start is above the floor


def test_gradient_field_is_central_differences_on_a_grid():
    def bumpy(w, b):
        return torch.sin(3 * w) * torch.exp(-(b**2)) + w * b**3

    w = torch.linspace(-2, 2, 17, dtype=F64)[:, None]
    b = torch.linspace(-1.5, 1.5, 13, dtype=F64)[None, :]
    dw, db = gradient_field(bumpy, w, b)
    assert dw.shape == db.shape == (17, 13)
    h = 1e-5
    torch.testing.assert_close(dw, (bumpy(w + h, b) - bumpy(w - h, b)) / (2 * h), atol=1e-8, rtol=0)
    torch.testing.assert_close(db, (bumpy(w, b + h) - bumpy(w, b - h)) / (2 * h), atol=1e-8, rtol=0)
    with torch.no_grad():  # a widget's update may run under no_grad
        assert torch.equal(gradient_field(bumpy, w, b)[0], dw)


def test_log_grad_norm_shades_by_decades_and_never_gives_minus_infinity():
    dw = torch.tensor([0.0, 3.0, 3e5])
    db = torch.tensor([0.0, 4.0, 4e5])
    assert log_grad_norm(dw, db).tolist() == pytest.approx([-12.0, math.log10(5), math.log10(5e5)])


def rnn_by_hand(w: float, b: float, steps=50, x0=0.5, target=0.7) -> float:
    sigmoid = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
    x = x0
    for _ in range(steps):
        x = w * sigmoid(x) + b
    return (sigmoid(x) - target) ** 2


def test_rnn_unit_loss_is_the_recurrence_written_out():
    w = torch.linspace(-2, 10, 25, dtype=F64)[:, None]
    b = torch.linspace(-8, 2, 21, dtype=F64)[None, :]
    want = [[rnn_by_hand(wi, bj) for bj in b[0].tolist()] for wi in w[:, 0].tolist()]
    torch.testing.assert_close(
        rnn_unit_loss(w, b), torch.tensor(want, dtype=F64), rtol=1e-12, atol=0
    )
    other = rnn_unit_loss(w, b, steps=7, x0=-1.0, target=0.2)
    assert other[3, 4].item() == pytest.approx(
        rnn_by_hand(w[3, 0].item(), b[0, 4].item(), 7, -1.0, 0.2)
    )
    assert rnn_unit_loss(5.0, -3.0).dtype == torch.get_default_dtype()  # numbers are welcome


def test_rnn_unit_cliff_appears_for_w_above_about_4():
    b = torch.linspace(-8, 2, 20001, dtype=F64)  # steps of 5e-4: fine enough to hit the cliff
    w = torch.tensor([[2.0], [3.0], [4.5], [5.0]], dtype=F64)
    dw, db = gradient_field(rnn_unit_loss, w, b)
    steepest = torch.hypot(dw, db).amax(-1).tolist()
    assert steepest[0] < 1 and steepest[1] < 1
    assert steepest[2] > 10 and steepest[3] > 20
    loss = rnn_unit_loss(w[3], b)
    assert loss.max() - loss.min() > 0.4  # a fall of some 0.4 ...
    assert (loss.diff().abs() > 0.1).sum() >= 1  # ... much of it within one 5e-4 step of b


def test_rnn_unit_gradient_field_is_central_differences_off_the_cliff():
    w = torch.linspace(-1, 3, 9, dtype=F64)[:, None]
    b = torch.linspace(-4, 1, 11, dtype=F64)[None, :]
    dw, db = gradient_field(rnn_unit_loss, w, b)
    h = 1e-6
    fd_w = (rnn_unit_loss(w + h, b) - rnn_unit_loss(w - h, b)) / (2 * h)
    fd_b = (rnn_unit_loss(w, b + h) - rnn_unit_loss(w, b - h)) / (2 * h)
    torch.testing.assert_close(dw, fd_w, rtol=1e-5, atol=1e-9)
    torch.testing.assert_close(db, fd_b, rtol=1e-5, atol=1e-9)


def test_rnn_figure_display_run_plain_is_thrown_out_clipped_crosses_the_cliff():
    net = rnn_unit_figure()
    for dtype in (torch.float32, F64):
        plain = net.descend(dtype=dtype)
        assert plain.left_at.item() == 4 and not plain.diverged.item()
        assert (plain.grad_norms[:3] < 0.2).all()  # creeping up the plateau ...
        assert plain.grad_norms[3] > 5000  # ... until update 3 lands on the cliff
        clipped = net.descend(max_norm=net.max_norm, dtype=dtype)
        assert not clipped.left.item()
        assert clipped.grad_norms.max() > 100  # it met the cliff too, and clipping capped it
        assert net.loss(*clipped.final.unbind(-1)).item() < 0.05 < net.loss(*net.start).item()


def test_rnn_figure_patch_about_a_third_of_plain_runs_are_thrown_none_clipped():
    net = rnn_unit_figure()
    for dtype in (torch.float32, F64):
        starts = net.patch_starts(10, dtype=dtype)
        assert (net.loss(*starts.unbind(-1)) > 0.3).float().mean() > 0.9  # on the plateau
        plain = net.descend(start=starts)
        share = plain.left.double().mean().item()
        assert 0.25 < share < 0.45, share
        # Thrown, not drifted out: the update that left was longer than a third of the picture.
        last = (plain.left_at[plain.left] - 1)[:, None]
        assert (plain.grad_norms[plain.left].gather(-1, last) * net.step_size > 2).all()
        clipped = net.descend(start=starts, max_norm=net.max_norm)
        assert not clipped.left.any()
        crossed = net.loss(*clipped.final.unbind(-1)) < 0.1
        assert crossed.double().mean() > 0.9
