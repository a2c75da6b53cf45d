"""The demos of notebook 04, driven through their controls, against clipkit and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from clipkit import compare
from clipkit.widgets.demo import Demo
from clipkit.widgets.drift import DIMS, N_SAMPLES, THRESHOLDS, SignDriftDemo
from clipkit.widgets.two_entry import ZOOM, TwoEntryClipDemo
from clipkit.widgets.wander import WanderingGradientDemo


def np_angle(a, b) -> float:
    """The angle between two 2-D vectors from their cross and dot products (exact near 0)."""
    (a1, a2), (b1, b2) = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return math.degrees(math.atan2(abs(a1 * b2 - a2 * b1), a1 * b1 + a2 * b2))


@pytest.fixture(scope="module")
def two():
    d = TwoEntryClipDemo()
    yield d
    d.close()


@pytest.fixture(scope="module")
def wander():
    d = WanderingGradientDemo()
    yield d
    d.close()


@pytest.fixture(scope="module")
def drift():
    d = SignDriftDemo()
    yield d
    d.close()


# --- (a) the two-entry gradient -------------------------------------------------------------


def test_two_entry_opens_on_seed_003_example(two):
    two.update(g1=10.0, g2=1.0, v=1.0)
    s = two.state
    assert round(s["norm"], 2) == 10.05
    assert (round(s["by_norm_1"], 4), round(s["by_norm_2"], 4)) == (0.995, 0.0995)
    assert (s["by_value_1"], s["by_value_2"]) == (1.0, 1.0)
    headings = [round(s[k], 2) for k in ("heading", "heading_by_norm", "heading_by_value")]
    assert headings == [5.71, 5.71, 45.0]
    assert s["angle_by_norm"] == pytest.approx(0.0, abs=1e-9)
    assert s["angle_by_value"] == pytest.approx(45.0 - math.degrees(math.atan(0.1)), abs=1e-9)


@pytest.mark.parametrize(
    "g1, g2, v", [(10, 1, 1), (3, -1.5, 1), (-7, 7, 2), (0.3, 0.4, 1), (12, -0.2, 0.1), (-2, 9, 4)]
)
def test_two_entry_state_matches_closed_forms(two, g1, g2, v):
    two.controls["g1"].value, two.controls["g2"].value, two.controls["v"].value = g1, g2, v
    s, g = two.state, np.array([g1, g2], float)
    norm = math.hypot(g1, g2)
    by_norm = g * min(1.0, v / norm)
    by_value = np.clip(g, -v, v)
    assert s["norm"] == pytest.approx(norm, rel=1e-12)
    np.testing.assert_allclose([s["by_norm_1"], s["by_norm_2"]], by_norm, rtol=1e-12)
    np.testing.assert_allclose([s["by_value_1"], s["by_value_2"]], by_value, rtol=1e-12)
    assert s["heading"] == pytest.approx(math.degrees(math.atan2(g2, g1)))
    assert s["heading_by_norm"] == pytest.approx(s["heading"])
    assert s["angle_by_norm"] == pytest.approx(0.0, abs=1e-6)
    assert s["angle_by_value"] == pytest.approx(np_angle(g, by_value), abs=1e-6)


def test_two_entry_arrows_sit_where_the_state_says(two):
    two.update(g1=4.0, g2=-2.0, v=1.5)
    s = two.state
    tip_norm = two._by_norm._posA_posB[1]
    tip_value = two._by_value._posA_posB[1]
    np.testing.assert_allclose(tip_norm, [s["by_norm_1"] / 1.5, s["by_norm_2"] / 1.5])
    np.testing.assert_allclose(tip_value, [s["by_value_1"] / 1.5, s["by_value_2"] / 1.5])
    assert two._ball.get_radius() == 1.5
    xs, ys = two._ray.get_data()  # the ray lies along g
    assert ys[1] / xs[1] == pytest.approx(-0.5) and math.hypot(xs[1], ys[1]) > ZOOM
    assert two._label_value.get_text() == f"{s['angle_by_value']:.1f}°"


def test_two_entry_zero_gradient_has_no_direction(two):
    two.update(g1=0.0, g2=0.0)
    assert math.isnan(two.state["angle_by_value"]) and two._label_value.get_text() == ""
    two.update(g1=10.0, g2=1.0)


# --- (b) the wandering gradient ---------------------------------------------------------------


def test_play_is_linked_to_the_frame_slider(wander):
    link = wander.link
    assert link.source == (wander.play, "value")
    assert link.target == (wander.controls["frame"], "value")
    assert (wander.play.min, wander.play.max) == (0, wander.n_frames - 1)
    assert wander.controls["frame"].max == wander.n_frames - 1


def test_play_starts_at_the_initial_frame():
    d = WanderingGradientDemo(frame=100)
    assert d.play.value == d.controls["frame"].value == d.state["frame"] == 100
    d.close()


@pytest.mark.parametrize("frame, v", [(0, 1.0), (37, 1.0), (120, 0.5), (239, 2.0)])
def test_wander_frames_match_the_simulation(wander, frame, v):
    wander.update(frame=frame, v=v)
    s = wander.state
    sim = compare.wandering_simulation(wander.n_frames, v, seed=0)
    g = sim.clipped.gradient[frame].double().numpy()
    assert [s["g1"], s["g2"]] == pytest.approx(g.tolist())
    np.testing.assert_allclose([s["by_value_1"], s["by_value_2"]], np.clip(g, -v, v), rtol=1e-12)
    by_norm = g * min(1.0, v / np.linalg.norm(g))
    np.testing.assert_allclose([s["by_norm_1"], s["by_norm_2"]], by_norm, rtol=1e-12)
    assert s["angle_by_value"] == pytest.approx(np_angle(g, np.clip(g, -v, v)), abs=1e-6)
    assert s["angle_by_norm"] == pytest.approx(0.0, abs=1e-6)


def test_wander_summary_over_all_frames(wander):
    wander.update(v=1.0)
    path = compare.wandering_simulation(wander.n_frames, 1.0, seed=0).clipped.gradient
    path = path.double().numpy()
    angles = np.array([np_angle(g, np.clip(g, -1, 1)) for g in path])
    s = wander.state
    assert s["mean_angle_by_value"] == pytest.approx(angles.mean(), abs=1e-6)
    assert s["turned_fraction"] == pytest.approx(np.mean(angles > 1e-6))
    assert 0 < s["turned_fraction"] < 1  # the walk enters the box now and then
    assert s["max_angle_by_norm"] < 1e-6
    assert angles.max() < 45.0  # in two dimensions value clipping turns by less than 45°
    np.testing.assert_allclose(wander._angle_value.get_ydata(), angles, atol=1e-6)


def test_wander_cursor_follows_the_frame(wander):
    wander.update(frame=88)
    assert list(wander._cursor.get_xdata()) == [88, 88]
    xs, ys = wander._trail.get_data()
    assert len(xs) == 26 and (xs[-1], ys[-1]) == (wander.state["g1"], wander.state["g2"])


# --- (c) cosine against dimension and threshold ------------------------------------------------


def test_drift_grid_is_one_monte_carlo_call(drift):
    assert drift.grid.by_value.shape == (len(DIMS), len(THRESHOLDS))
    assert drift.grid.distribution == "gaussian" and N_SAMPLES >= 64


@pytest.mark.parametrize("d, v", [(1, 0.01), (2, 1.0), (200, 1.0), (1280, 0.01), (1280, 10.0)])
def test_drift_state_reads_the_grid_and_the_closed_forms(drift, d, v):
    drift.update(d=d, v=v)
    s = drift.state
    i, j = DIMS.index(d), THRESHOLDS.index(v)
    assert s["cosine"] == pytest.approx(drift.grid.by_value[i, j].item())
    assert s["angle"] == pytest.approx(math.degrees(math.acos(min(1.0, s["cosine"]))))
    rho = compare.gaussian_value_clip_cosine_limit(v).item()
    assert s["limit"] == pytest.approx(rho)
    assert s["sign_limit"] == pytest.approx(math.sqrt(2 / math.pi))
    if d == 1:
        assert s["cosine"] == pytest.approx(1.0)  # one entry: clipping keeps its sign
    if d == 1280:
        assert s["cosine"] == pytest.approx(rho, abs=0.01)  # many entries: the limit


def test_drift_curves_are_the_grid_row_and_column(drift):
    drift.update(d=50, v=THRESHOLDS[5])
    np.testing.assert_allclose(drift._curve_d.get_ydata(), drift.grid.by_value[:, 5].numpy())
    np.testing.assert_allclose(
        drift._curve_v.get_ydata(), drift.grid.by_value[DIMS.index(50)].numpy()
    )


# --- what each of the three must do --------------------------------------------------------------


@pytest.fixture(params=["two", "wander", "drift"])
def demo(request) -> Demo:
    return request.getfixturevalue(request.param)


def _other_value(control):
    options = getattr(control, "options", None)
    if options is not None:
        return options[0] if control.value != options[0] else options[-1]
    return control.max if control.value != control.max else control.min


def test_every_control_changes_state_readout_and_picture(demo):
    for name, control in demo.controls.items():
        before = (dict(demo.state), demo.readout.value, demo.figure.value)
        control.value = _other_value(control)
        assert demo.state != before[0], name
        assert demo.figure.value != before[2], name
        assert demo.readout.value != before[1], name


def test_blitted_picture_equals_a_full_redraw(demo):
    name, control = next(iter(demo.controls.items()))
    control.value = _other_value(control)
    fast = np.asarray(demo.fig.canvas.buffer_rgba()).copy()
    for artist in demo._moving:
        artist.set_animated(False)
    demo.fig.canvas.draw()
    full = np.asarray(demo.fig.canvas.buffer_rgba())
    for artist in demo._moving:
        artist.set_animated(True)
    demo.invalidate_background()
    assert np.mean(np.any(fast != full, axis=-1)) < 0.01


def test_state_holds_plain_numbers_and_dom_classes(demo):
    assert all(type(v) in (int, float) for v in demo.state.values())
    assert "clipkit-demo" in demo.root._dom_classes
    fig, moving = demo.fig, list(demo._moving)
    name, control = next(iter(demo.controls.items()))
    demo.update(**{name: _other_value(control)})
    assert demo.fig is fig and demo._moving == moving
