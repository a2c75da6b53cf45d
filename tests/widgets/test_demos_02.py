"""The demos of notebook 02, driven by their controls, against clipkit and closed forms.

Runs under ipywidgets 8 and 7.7 (``make widgets7``): only values, ``state`` and artists are read.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from clipkit import curvature as cv
from clipkit import momentum as mo
from clipkit.resources import data_path
from clipkit.widgets import load_bank
from clipkit.widgets.exponential import ExponentialDemo
from clipkit.widgets.ravine import BOX, RavineDemo
from clipkit.widgets.saddle import SaddleDemo

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
F64 = torch.float64


# --- the exponential ----------------------------------------------------------------------


@pytest.mark.parametrize("a", [0.25, 1.0, 2.0, 3.0])
@pytest.mark.parametrize("x", [-4.0, -1.5, 0.0, 1.0])
def test_exponential_state_matches_the_closed_form(a, x):
    demo = ExponentialDemo()
    demo.update(a=a, x=x)  # one redraw for both (the controls themselves: the test below)
    s = demo.state
    assert (s["a"], s["x"]) == (a, x)
    assert s["slope"] == pytest.approx(a * math.exp(a * x), rel=1e-12)
    assert s["curvature"] == pytest.approx(a * a * math.exp(a * x), rel=1e-12)
    assert s["ratio"] == pytest.approx(1 / a, rel=1e-12)
    assert s["one_over_a"] == 1 / a
    assert s["newton_x"] == pytest.approx(x - 1 / a, rel=1e-12, abs=1e-12)
    assert s["step_length"] == pytest.approx(1 / a, rel=1e-12)
    f, slope, curv = cv.exponential_derivatives(torch.tensor(x, dtype=F64), a)
    assert s["slope"] == pytest.approx(slope.item(), rel=1e-14)
    assert s["curvature"] == pytest.approx(curv.item(), rel=1e-14)


def test_exponential_ratio_does_not_move_with_x():
    demo = ExponentialDemo(a=2.0)
    ratios, slopes = [], []
    for x in np.linspace(-4, 1, 11):
        demo.controls["x"].value = float(x)  # as a learner drags the slider
        ratios.append(demo.state["ratio"])
        slopes.append(demo.state["slope"])
    assert max(slopes) / min(slopes) > 1e4  # the slope spans four powers of ten ...
    assert ratios == pytest.approx([0.5] * 11, rel=1e-12)  # ... the ratio does not move


def test_exponential_redraws_in_place_and_the_arrow_ends_at_the_model_minimum():
    demo = ExponentialDemo()
    fig, model, landing = demo.fig, demo._model, demo._landing
    demo.update(a=1.5, x=-2.0)
    assert demo.fig is fig and demo._model is model and demo._landing is landing
    # the left panel is f(t)/f(x) against u = t - x: the step ends at (-1/a, 1/2) for every x
    lx, ly = (v[0] for v in landing.get_data())
    assert lx == pytest.approx(-1 / 1.5) and ly == pytest.approx(0.5)
    us, ys = model.get_data()
    assert float(np.min(ys)) >= 0.5 - 1e-12
    assert np.allclose(ys, 1 + 1.5 * us + 0.5 * (1.5 * us) ** 2)
    curve_u, curve_y = demo._curve.get_data()
    assert np.allclose(curve_y, np.exp(1.5 * np.asarray(curve_u)))
    assert demo.figure.value[:8] == PNG_MAGIC


def test_exponential_moving_x_changes_the_picture_but_not_the_local_view():
    demo = ExponentialDemo(a=2.0)
    before = demo.figure.value
    local = [np.copy(line.get_ydata()) for line in (demo._curve, demo._model)]
    demo.controls["x"].value = -3.0
    assert demo.figure.value != before  # the cursor and the marks moved
    for line, old in zip((demo._curve, demo._model), local, strict=True):
        assert np.array_equal(line.get_ydata(), old)
    marks = demo._marks.get_ydata()
    assert marks[2] == pytest.approx(0.5)  # the ratio mark stays on its line


# --- the saddle ---------------------------------------------------------------------------


@pytest.mark.parametrize("x0, y0", [(1.2, 0.2), (-1.5, 1.0), (0.3, -1.7), (1.0, 0.0)])
def test_saddle_newton_lands_on_the_saddle(x0, y0):
    demo = SaddleDemo()
    demo.update(x0=x0, y0=y0)
    assert demo.state["newton_x"] == pytest.approx(0.0, abs=1e-12)
    assert demo.state["newton_y"] == pytest.approx(0.0, abs=1e-12)
    assert demo.state["newton_loss"] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("lr, steps", [(0.1, 10), (0.05, 20), (0.2, 3)])
def test_saddle_gradient_descent_follows_the_closed_form_and_moves_away(lr, steps):
    demo = SaddleDemo(x0=1.2, y0=0.2)
    demo.update(lr=lr, steps=steps)
    s = demo.state
    assert s["gd_left_at"] == -1  # these settings stay in the picture
    assert s["gd_x"] == pytest.approx(1.2 * (1 - 2 * lr) ** steps, rel=1e-9)
    assert s["gd_y"] == pytest.approx(0.2 * (1 + 2 * lr) ** steps, rel=1e-9)
    assert s["gd_y"] > 0.2  # away from the saddle along y
    assert s["gd_loss"] < cv.saddle_loss(torch.tensor([1.2, 0.2], dtype=F64)).item()


def test_saddle_descent_leaves_the_picture_and_the_path_is_redrawn_in_place():
    demo = SaddleDemo(x0=1.0, y0=0.5, lr=0.2, steps=40)
    assert demo.state["gd_left_at"] > 0
    assert abs(demo.state["gd_y"]) > 2.0  # the last point, just outside the square
    path = demo._path
    demo.update(steps=5)
    assert demo._path is path and len(path.get_data()[0]) == 6


def test_saddle_numbers_in_notebook_02():
    s = SaddleDemo().update(x0=1.2, y0=0.2, lr=0.1, steps=10)
    assert (round(s["gd_x"], 3), round(s["gd_y"], 3)) == (0.129, 1.238)
    assert round(s["gd_loss"], 3) == -1.517


# --- the ravine ---------------------------------------------------------------------------


def test_ravine_state_matches_ravine_race():
    demo = RavineDemo()
    demo.update(lr=0.015, momentum=0.8, steps=120)
    start = torch.tensor(mo.RAVINE_START, dtype=F64)
    _, losses = mo.ravine_race(0.015, 0.8, 120, start=start)
    settled = mo.steps_to_settle(losses).tolist()
    s = demo.state
    assert s["plain_loss"] == pytest.approx(losses[0, -1].item(), rel=1e-12)
    assert s["nesterov_loss"] == pytest.approx(losses[1, -1].item(), rel=1e-12)
    assert [s["plain_steps"], s["nesterov_steps"]] == settled


def test_ravine_defaults_show_nesterov_settling_first():
    s = RavineDemo().state
    assert (s["lr"], s["momentum"], s["steps"]) == (0.02, 0.9, 250)
    assert (s["plain_steps"], s["nesterov_steps"]) == (223, 72)
    _, losses = mo.ravine_race(0.02, 0.9, 250, start=torch.tensor(mo.RAVINE_START, dtype=F64))
    falls = (losses[:, 1:] <= losses[:, :-1]).all(-1).tolist()
    assert falls == [True, False]  # plain descent's loss only falls; momentum's rings
    assert s["plain_limit"] == pytest.approx(0.04)
    assert s["nesterov_limit"] == pytest.approx(2 * 1.9 / (2.8 * 50))


def test_ravine_bigger_step_nesterov_leaves_plain_settles():
    s = RavineDemo().update(lr=0.035)
    assert s["plain_steps"] == 127 and s["plain_left_at"] == -1
    assert s["nesterov_left_at"] == 4 and s["nesterov_steps"] == -1


def test_ravine_closed_form_matches_descend_even_when_a_run_leaves():
    from clipkit.descent import descend

    start = torch.tensor(mo.RAVINE_START, dtype=F64)
    for lr, mu in [(0.035, 0.9), (0.044, 0.5), (0.01, 0.99)]:
        s = RavineDemo().update(lr=lr, momentum=mu, steps=120)
        run = descend(mo.ravine_grad, start, lr, 120, momentum=mu, nesterov=True, bounds=BOX)
        assert s["nesterov_left_at"] == run.left_at.item()
        loss = mo.ravine_loss(run.path[-1]).item()
        assert s["nesterov_loss"] == pytest.approx(loss, rel=1e-9)


def test_ravine_zero_momentum_runs_are_identical():
    s = RavineDemo().update(momentum=0.0)
    assert s["plain_loss"] == s["nesterov_loss"]
    assert s["plain_limit"] == s["nesterov_limit"]


def test_ravine_curves_are_redrawn_in_place():
    demo = RavineDemo()
    curves = list(demo._curves)
    demo.update(steps=50)
    assert demo._curves == curves
    assert len(curves[0].get_data()[0]) == 51
    assert demo.figure.value[:8] == PNG_MAGIC


# --- the question bank of notebook 02 -----------------------------------------------------


def test_bank_02_loads_and_its_numbers_are_clipkit_s():
    bank = load_bank("02-second-derivatives")
    assert set(bank) == {
        "ratio-along-curve",
        "ratio-steeper-a",
        "saddle-newton",
        "ravine-bigger-step",
    }
    raw = json.loads(data_path("questions", "02-second-derivatives.json").read_text("utf-8"))
    assert raw["bank"] == "02-second-derivatives"

    q = bank["ratio-along-curve"]
    assert "0.5" in q.choices[q.answer] and "22 000" in q.reasons[q.answer]
    _, s, c = cv.exponential_derivatives(torch.tensor([0.0, -5.0], dtype=F64), 2.0)
    assert round((s[0] / s[1]).item(), -3) == 22000.0
    assert (s / c).tolist() == [0.5, 0.5]

    q = bank["ratio-steeper-a"]
    assert "0.25" in q.choices[q.answer]
    assert cv.exponential_ratio(torch.zeros(1, dtype=F64), 4.0).item() == 0.25

    q = bank["saddle-newton"]
    assert "(0, 0)" in q.choices[q.answer]
    landed = cv.newton_step(cv.saddle_loss, torch.tensor([1.2, 0.2], dtype=F64))
    assert landed.tolist() == [0.0, 0.0]

    q = bank["ravine-bigger-step"]
    reason = q.reasons[q.answer]
    for number in ("0.04", "127", "0.0271", "step 4"):
        assert number in reason
    s = RavineDemo().update(lr=0.035, momentum=0.9)
    assert round(s["nesterov_limit"], 4) == 0.0271 and s["plain_steps"] == 127
    assert s["nesterov_left_at"] == 4
    assert "223" in q.reasons[3] and RavineDemo().state["plain_steps"] == 223
