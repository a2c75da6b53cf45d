"""Each demo, driven through its controls as a learner would, against clipkit and closed forms."""

from __future__ import annotations

import base64
import math

import pytest
import torch

from clipkit.cliffs import one_weight_cliff_grad, one_weight_cliff_loss
from clipkit.widgets.bench_demos import DEMOS
from clipkit.widgets.cliff_step import CliffStepDemo
from clipkit.widgets.demo import Demo
from clipkit.widgets.display import WIDGET_VIEW_MIME
from clipkit.widgets.growth import PowerGrowthDemo
from clipkit.widgets.one_weight import OneWeightCliffDemo
from clipkit.widgets.testing import stale_pixel_share

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def closed_form_grad(w: float) -> float:
    return 20 * w**19 / (1 + w**20)


# Building a demo draws its whole figure once (the slow part); tests share one of each.
@pytest.fixture(scope="module")
def growth():
    return PowerGrowthDemo()


@pytest.fixture(scope="module")
def one_weight():
    return OneWeightCliffDemo()


@pytest.fixture(scope="module")
def step():
    return CliffStepDemo()


# --- the power-growth demo ----------------------------------------------------------------


@pytest.mark.parametrize("radius, steps", [(1.1, 50), (0.9, 50), (1.0, 7), (1.5, 100), (0.5, 1)])
def test_growth_factor_is_radius_to_the_steps(growth, radius, steps):
    demo = growth
    demo.controls["radius"].value = radius
    demo.controls["steps"].value = steps
    assert demo.state["steps"] == steps
    assert demo.state["factor"] == pytest.approx(radius**steps, rel=1e-12)


def test_growth_curve_is_redrawn_in_place(growth):
    demo = growth
    demo.update(radius=1.1)
    fig, curve = demo.fig, demo._curve
    demo.controls["steps"].value = 20
    assert demo.fig is fig and demo._curve is curve
    xs, ys = curve.get_data()
    assert len(xs) == 21 and ys[-1] == pytest.approx(1.1**20)


# --- the one-weight cliff -----------------------------------------------------------------


@pytest.mark.parametrize("w", [0.0, 0.5, 0.90, 1.0, 1.05, 1.2])
def test_one_weight_state_matches_the_closed_form(one_weight, w):
    demo = one_weight
    demo.controls["w"].value = w
    assert demo.state["grad"] == pytest.approx(closed_form_grad(w), rel=1e-12, abs=1e-15)
    assert demo.state["loss"] == pytest.approx(math.log1p(w**20), rel=1e-12, abs=1e-15)
    t = torch.tensor(w, dtype=torch.float64)
    assert demo.state["grad"] == one_weight_cliff_grad(t).item()
    assert demo.state["loss"] == one_weight_cliff_loss(t).item()


def test_demo_takes_initial_control_values():
    demo = OneWeightCliffDemo(w=1.05)
    assert demo.controls["w"].value == 1.05 and demo.state["w"] == 1.05
    demo.close()


def test_one_weight_tangent_has_the_gradient_as_slope(one_weight):
    demo = one_weight
    demo.update(w=1.05)
    (x0, x1), (y0, y1) = demo._tangent.get_data()
    assert (y1 - y0) / (x1 - x0) == pytest.approx(demo.state["grad"])
    assert demo._loss_point.get_data()[1][0] == pytest.approx(demo.state["loss"])


# --- one step on the cliff ----------------------------------------------------------------


@pytest.mark.parametrize("start, lr", [(0.90, 0.2), (1.05, 0.2), (1.05, 0.05), (0.3, 0.5)])
def test_step_lands_where_plain_descent_says(step, start, lr):
    demo = step
    demo.update(start=start, lr=lr)
    landed = start - lr * closed_form_grad(start)
    assert demo.state["landed"] == pytest.approx(landed, rel=1e-9, abs=1e-12)
    assert demo.state["step"] == pytest.approx(abs(landed - start), rel=1e-9, abs=1e-12)
    assert demo.state["loss_after"] == pytest.approx(math.log1p(landed**20), rel=1e-9, abs=1e-12)


def test_step_from_the_face_lands_on_the_far_cliff(step):
    demo = step
    demo.update(start=1.05, lr=0.2)
    assert demo.state["landed"] < -1.5 and demo.state["loss_after"] > 5 * demo.state["loss_before"]


def test_a_landing_off_the_picture_is_drawn_at_its_edge(step):
    demo = step
    demo.update(start=1.15, lr=0.5)
    assert demo.state["landed"] < -5
    x = demo._landed.get_data()[0][0]
    assert x == pytest.approx(demo._landed.axes.get_xlim()[0])


# --- what every demo must do --------------------------------------------------------------

FACTORIES = [PowerGrowthDemo, OneWeightCliffDemo, CliffStepDemo]
CONTROLS_01 = {
    PowerGrowthDemo: ("radius", "steps"),
    OneWeightCliffDemo: ("w",),
    CliffStepDemo: ("start", "lr"),
}


@pytest.fixture(scope="module", params=FACTORIES, ids=lambda f: f.__name__)
def demo(request) -> Demo:
    d = request.param()
    yield d
    d.close()


def test_dom_classes_for_the_browser_test(demo):
    assert "clipkit-demo" in demo.root._dom_classes
    assert "clipkit-figure" in demo.figure._dom_classes
    assert "clipkit-readout" in demo.readout._dom_classes


def test_every_slider_changes_readout_state_and_picture(demo):
    for name, control in demo.controls.items():
        before = (demo.readout.value, dict(demo.state), demo.figure.value)
        control.value = control.max if control.value != control.max else control.min
        assert demo.readout.value != before[0], name
        assert demo.state != before[1], name
        assert demo.figure.value != before[2], name


def test_update_redraws_the_same_figure_and_artists(demo):
    fig, moving = demo.fig, list(demo._moving)
    name, control = next(iter(demo.controls.items()))
    demo.update(**{name: (control.min + control.max) / 2})
    assert demo.fig is fig and demo._moving == moving
    assert all(a.figure is fig for a in moving)


def test_the_blitted_picture_equals_a_full_redraw(demo):
    name, control = next(iter(demo.controls.items()))
    control.value = (control.min + 2 * control.max) / 3
    assert stale_pixel_share(demo) < 0.01


def test_a_demo_without_moving_artists_redraws_everything():
    class Plain(OneWeightCliffDemo):
        def moving(self, artist):
            return artist  # registers nothing

    demo = Plain()
    first = demo.figure.value
    demo.update(w=1.1)
    assert demo.figure.value != first and stale_pixel_share(demo) == 0
    demo.close()


def test_update_rejects_unknown_controls(demo):
    with pytest.raises(TypeError, match="has no control"):
        demo.update(nonsense=1)


def test_static_bundle_carries_the_widget_and_a_png(demo):
    bundle = demo._repr_mimebundle_()
    assert bundle[WIDGET_VIEW_MIME]["model_id"] == demo.root.model_id
    assert base64.b64decode(bundle["image/png"]).startswith(PNG_MAGIC)
    assert type(demo).__name__ in bundle["text/plain"]


def test_figures_are_not_left_with_pyplot(demo):
    import matplotlib.pyplot as plt

    assert plt.get_fignums() == []


def test_state_holds_plain_numbers(demo):
    assert demo.state and all(type(v) in (int, float) for v in demo.state.values())


def test_bench_list_is_well_formed():
    # Each demo's own tests drive it; here only the shape of the list that make bench reads.
    names = [name for name, _, _ in DEMOS]
    assert len(names) == len(set(names))
    for name, factory, settings in DEMOS:
        assert isinstance(factory, type) and issubclass(factory, Demo), name
        assert settings and all(isinstance(v, dict) and v for v in settings), name


def test_bench_settings_name_real_controls_of_the_01_demos():
    for name, factory, settings in DEMOS:
        if factory in CONTROLS_01:
            assert all(set(values) <= set(CONTROLS_01[factory]) for values in settings), name


def test_controls_are_the_ones_the_bench_and_notebook_use(demo):
    assert tuple(demo.controls) == CONTROLS_01[type(demo)]
