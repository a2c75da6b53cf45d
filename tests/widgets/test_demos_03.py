"""The demos of notebook 03, driven through their controls, against clipkit and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from clipkit import rnn
from clipkit.cliffs import figure_10_17, rnn_unit_figure, rnn_unit_loss
from clipkit.widgets.landscape_runs import PATCH, Figure1017Demo, RNNUnitDemo
from clipkit.widgets.training import ThresholdDemo, TrainingDemo

# Short runs keep these tests quick; the demos accept any pair of runs.
SHORT = {"steps": 30, "length": 20, "hidden": 16}


@pytest.fixture(scope="module")
def runs():
    return rnn.train(None, lr=0.5, **SHORT), rnn.train(0.5, lr=0.5, **SHORT)


@pytest.fixture(scope="module")
def training(runs):
    d = TrainingDemo(*runs)
    yield d
    d.close()


@pytest.fixture(scope="module")
def threshold(runs):
    d = ThresholdDemo(runs[1])
    yield d
    d.close()


# --- training with and without clipping -----------------------------------------------------


@pytest.mark.parametrize("step", [1, 2, 10, 30])
def test_training_state_reads_the_recorded_runs(training, runs, step):
    plain, clipped = runs
    training.controls["step"].value = step
    s = training.state
    assert s["step"] == step
    for name, run in (("plain", plain), ("clipped", clipped)):
        for key, field in (("norm", run.grad_norm), ("loss", run.loss)):
            got, want = s[f"{name}_{key}"], field[step - 1].item()
            assert got == want or (math.isnan(got) and math.isnan(want))
    assert s["clipped_so_far"] == int((clipped.grad_norm[:step] > clipped.max_norm).sum())


def test_training_lines_are_redrawn_in_place(training, runs):
    training.update(step=12)
    line = training._lines["grad_norm", "clipped"]
    fig = training.fig
    training.update(step=20)
    assert training.fig is fig and training._lines["grad_norm", "clipped"] is line
    xs, ys = line.get_data()
    assert len(xs) == 20
    np.testing.assert_array_equal(ys, runs[1].grad_norm[:20].numpy())


def test_training_marks_the_overflow_only_after_it_happened():
    plain = rnn.train(None, steps=40, length=12, hidden=8, lr=50.0)
    clipped = rnn.train(1.0, steps=40, length=12, hidden=8, lr=50.0)
    assert plain.diverged_at is not None
    d = TrainingDemo(plain, clipped, step=plain.diverged_at)
    assert d._overflow.get_text() == ""
    d.update(step=plain.diverged_at + 1)
    assert f"step {plain.diverged_at}" in d._overflow.get_text()
    assert d.state["plain_diverged_at"] == plain.diverged_at
    d.close()


# --- the threshold --------------------------------------------------------------------------


@pytest.mark.parametrize("v", [0.01, 0.3, 1.0, 7.0, 1000.0])
def test_fraction_clipped_counts_the_norms_above_the_threshold(threshold, runs, v):
    threshold.update(threshold=v, reduction="mean")
    norms = runs[1].grad_norm.numpy()
    assert threshold.state["fraction"] == pytest.approx(np.mean(norms > v), abs=1e-12)
    assert threshold.state["mean_norm"] == pytest.approx(norms.mean(), rel=1e-12)
    assert threshold.state["ratio"] == pytest.approx(v / norms.mean(), rel=1e-12)


def test_a_sum_over_the_batch_makes_the_norms_batch_size_times_longer(threshold, runs):
    threshold.update(threshold=1.0, reduction="mean")
    mean = threshold.state["mean_norm"]
    threshold.update(reduction="sum")
    assert threshold.state["factor"] == rnn.BATCH_SIZE
    assert threshold.state["mean_norm"] == pytest.approx(rnn.BATCH_SIZE * mean, rel=1e-12)
    # the same threshold, measured against the sum: as if v were B times smaller for the mean
    want = rnn.fraction_clipped(runs[1].grad_norm, 1.0 / rnn.BATCH_SIZE).item()
    assert threshold.state["fraction"] == pytest.approx(want, abs=1e-12)


def test_histogram_bars_split_at_the_threshold_and_keep_every_step(threshold, runs):
    threshold.update(threshold=0.5, reduction="mean")
    kept = threshold._kept.get_data().values
    cut = threshold._cut.get_data().values
    assert kept.sum() + cut.sum() == torch.isfinite(runs[1].grad_norm).sum().item()
    edges = threshold.edges[:-1]
    assert cut[edges < 0.5].sum() == 0 and kept[edges >= 0.5].sum() == 0


def test_the_notebook_demos_open_on_the_notebook_runs():
    d = ThresholdDemo()
    assert d.run is rnn.notebook_runs()[1]
    assert d.state["threshold"] == rnn.CLIP
    d.close()


# --- Figure 10.17 rebuilt -------------------------------------------------------------------


@pytest.fixture(scope="module")
def fig1017():
    d = Figure1017Demo()
    yield d
    d.close()


@pytest.mark.parametrize("eps, v", [(0.05, 1.0), (0.1, 1.0), (0.3, 0.5), (0.5, 5.0), (0.01, 0.1)])
def test_fig1017_state_matches_clipkit_descent(fig1017, eps, v):
    fig1017.update(step_size=eps, max_norm=v)
    s = fig1017.state
    land = figure_10_17()
    for run, max_norm in (("plain", None), ("clipped", v)):
        ref = land.descend(s["step_size"], max_norm=max_norm, dtype=torch.float64)
        assert s[f"{run}_left_at"] == ref.left_at.item()
        if ref.left_at.item() < 0:
            assert (s[f"{run}_w"], s[f"{run}_b"]) == tuple(ref.final.tolist())
        longest = ref.path.diff(dim=0).norm(dim=-1).max().item()
        assert s[f"{run}_longest"] == pytest.approx(longest, rel=1e-12)
    # a clipped update is never longer than step size times threshold (Eq. 10.49)
    assert s["clipped_longest"] <= s["step_size"] * s["max_norm"] * (1 + 1e-12)


def test_fig1017_seed_001_facts(fig1017):
    fig1017.update(step_size=0.05, max_norm=1.0)
    assert fig1017.state["plain_left_at"] == -1 and fig1017.state["plain_longest"] > 3
    fig1017.update(step_size=0.1)
    assert fig1017.state["plain_left_at"] == 2
    for eps in np.arange(0.01, 0.3001, 0.01):
        fig1017.update(step_size=round(float(eps), 2))
        assert fig1017.state["clipped_left_at"] == -1


def test_fig1017_shading_is_the_log_gradient_norm_of_the_grid(fig1017):
    land = figure_10_17()
    w, b = land.grid(fig1017.grid_size, dtype=torch.float64)
    dw, db = land.grad(w, b)
    np.testing.assert_allclose(fig1017._shade, np.log10(np.hypot(dw.numpy(), db.numpy())))


def test_fig1017_paths_are_redrawn_in_place(fig1017):
    fig1017.update(step_size=0.1, max_norm=1.0)
    line, fig = fig1017._paths["plain"], fig1017.fig
    xs, _ = line.get_data()
    assert len(xs) == 3  # the start, update 1, and update 2 that left the picture
    fig1017.update(step_size=0.05)
    assert fig1017._paths["plain"] is line and fig1017.fig is fig
    assert len(line.get_data()[0]) == figure_10_17().steps + 1


# --- the one-unit recurrent net ---------------------------------------------------------------


@pytest.fixture(scope="module")
def unit():
    d = RNNUnitDemo()
    yield d
    d.close()


def _fresh(eps, v):
    """The figure's start and its patch, run again through clipkit: (plain, clipped)."""
    land = rnn_unit_figure()
    patch = land.patch_starts(PATCH, dtype=torch.float64).reshape(-1, 2)
    starts = torch.cat([torch.tensor([land.start], dtype=torch.float64), patch])
    return (
        land.descend(eps, start=starts, dtype=torch.float64),
        land.descend(eps, max_norm=v, start=starts, dtype=torch.float64),
    )


@pytest.mark.parametrize("eps, v", [(1.0, 0.5), (0.5, 0.1), (2.0, 1.0)])
def test_unit_state_matches_a_fresh_clipkit_descent(unit, eps, v):
    unit.update(step_size=eps, max_norm=v)
    s = unit.state
    for run, ref in zip(("plain", "clipped"), _fresh(eps, v), strict=True):
        assert s[f"{run}_left_at"] == ref.left_at[0].item()
        assert s[f"{run}_thrown"] == int((ref.left_at[1:] >= 0).sum())
        longest = ref.path[0].diff(dim=0).norm(dim=-1).max().item()
        assert s[f"{run}_longest"] == pytest.approx(longest, rel=1e-9)
        if ref.left_at[0].item() < 0:
            end = ref.final[0]
            assert (s[f"{run}_w"], s[f"{run}_b"]) == pytest.approx(tuple(end.tolist()), rel=1e-9)
            want = rnn_unit_loss(end[0], end[1]).item()
            assert s[f"{run}_loss"] == pytest.approx(want, rel=1e-9, abs=1e-15)
    assert (s["start_w"], s["start_b"]) == rnn_unit_figure().start


def test_unit_plain_is_thrown_out_and_clipped_never_is(unit):
    unit.update(step_size=1.0, max_norm=0.5)
    s = unit.state
    assert s["plain_left_at"] > 0 and s["plain_longest"] > 100 and s["plain_thrown"] > 10
    assert s["clipped_left_at"] == -1 and s["clipped_longest"] <= 0.5 + 1e-12
    assert s["clipped_thrown"] == 0


def test_unit_crosses_mark_exactly_the_thrown_patch_starts(unit):
    unit.update(step_size=1.5, max_norm=0.3)
    kept, thrown = unit._marks["plain"]
    assert len(thrown.get_xdata()) == unit.state["plain_thrown"]
    assert len(kept.get_xdata()) + len(thrown.get_xdata()) == PATCH * PATCH
    assert len(unit._marks["clipped"][1].get_xdata()) == unit.state["clipped_thrown"]


def test_unit_sliders_snap_to_the_precomputed_grid(unit):
    unit.update(step_size=0.9, max_norm=0.44)
    assert unit.state["step_size"] == 1.0 and unit.state["max_norm"] == 0.4


# --- the bench list -------------------------------------------------------------------------


def test_every_03_bench_setting_names_real_controls_and_runs():
    from clipkit.widgets.bench_demos import DEMOS

    mine = [(n, f, s) for n, f, s in DEMOS if n.startswith("03 ")]
    assert {f for _, f, _ in mine} == {TrainingDemo, ThresholdDemo, Figure1017Demo, RNNUnitDemo}
    built = {}
    for name, factory, settings in mine:
        d = built.setdefault(factory, factory())
        for values in settings:
            assert set(values) <= set(d.controls), name
        for values in (settings[0], settings[-1]):
            d.update(**values)
            assert all(type(v) in (int, float) for v in d.state.values()), name
    for d in built.values():
        d.close()
