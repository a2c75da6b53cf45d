"""Demos: plain and clipped descent side by side on a two-parameter cliff.

:class:`LandscapeRunsDemo` draws any :class:`clipkit.cliffs.Landscape`: the size of the
gradient shaded on a log scale (computed once, on a grid, in one batched call), and the two
runs from the same start point. Its subclasses are the two pictures of notebook 03:
:class:`Figure1017Demo`, the closed-form rebuild of Figure 10.17, and :class:`RNNUnitDemo`,
Pascanu et al.'s one-unit recurrent net. A slider move reruns both descents in one call to
:func:`clipkit.descent.descend` (the threshold ``inf`` is plain descent) and moves the paths.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from clipkit import plots
from clipkit.cliffs import Landscape, figure_10_17, log_grad_norm, rnn_unit_figure
from clipkit.descent import Descent, descend
from clipkit.device import one_thread
from clipkit.widgets.demo import Demo, float_slider

RUNS = ("plain", "clipped")


class LandscapeRunsDemo(Demo):
    """Sliders for the step size and the threshold; plain descent (left) and clipped (right).

    ``state`` holds, for each run, ``<run>_left_at`` (the update that left the picture, or -1),
    ``<run>_w`` and ``<run>_b`` (where it ended, or its last point inside the picture), and
    ``<run>_longest`` (the longest single update).
    """

    landscape: Landscape
    grid_size = 200
    shade_decades = 5  # the colour bar spans this many factors of 10 up from the flattest part
    step_range = (0.01, 0.5, 0.01)
    threshold_range = (0.1, 5.0, 0.1)
    readout_fields = (
        ("step_size", "step size ε", ".2f"),
        ("max_norm", "threshold v", ".2f"),
        ("plain_longest", "plain: longest update", ".3g"),
        ("clipped_longest", "clipped: longest update", ".3g"),
    )

    def __init__(self, landscape: Landscape | None = None, **initial):
        if landscape is not None:
            self.landscape = landscape
        w, b = self.landscape.grid(self.grid_size, dtype=torch.float64)
        self._shade = log_grad_norm(*self.landscape.grad(w, b)).numpy()  # once, batched
        self._w_axis = w[0].numpy()
        super().__init__(**initial)

    def build_controls(self):
        ls = self.landscape
        return {
            "step_size": float_slider("step size ε", ls.step_size, *self.step_range),
            "max_norm": float_slider("threshold v", ls.max_norm, *self.threshold_range),
        }

    def decorate(self, ax) -> None:
        """Static extras on each panel (a valley floor, a marked minimum)."""

    def build_figure(self):
        fig, axes = plots.new_figure(ncols=2, width=10.0, height=4.2)
        (w0, w1), (b0, b1) = self.landscape.bounds
        finite = self._shade[np.isfinite(self._shade)]
        lo = math.floor(np.percentile(finite, 1))
        hi = min(math.ceil(finite.max()), lo + self.shade_decades)  # beyond: the darkest shade
        self._paths, self._starts, self._ends = {}, {}, {}
        for ax, run in zip(axes, RUNS, strict=True):
            image = ax.imshow(
                self._shade,
                origin="lower",
                extent=(w0, w1, b0, b1),
                aspect="auto",
                cmap=plots.SEQUENTIAL_CMAP + "_r",  # darker = steeper, as in the book
                vmin=lo,
                vmax=hi,
                interpolation="nearest",
            )
            ax.grid(False)
            self.decorate(ax)
            ax.set_xlim(w0, w1)
            ax.set_ylim(b0, b1)
            self._paths[run] = self.moving(
                plots.trajectory(ax, [], [], color=plots.COLORS[run], label=run)
            )
            self._ends[run] = self.moving(ax.plot([], [], "X", color=plots.COLORS[run], ms=10)[0])
            self._starts[run] = self.moving(
                ax.plot([], [], "o", color=plots.COLORS["point"], ms=8, zorder=5)[0]
            )
            title = "plain descent" if run == "plain" else "clipped descent (threshold v)"
            ax.set_title(title, fontsize=plots.FONT["title"])  # static: text is slow to blit
            plots.label(ax, "w", "b")
        bar = fig.colorbar(image, ax=list(axes), shrink=0.9, pad=0.02, extend="max")
        bar.set_label(r"$\log_{10}\,\|\nabla L(w, b)\|$  (darker = steeper)")
        return fig

    def runs(self, step_size: float, max_norm: float, **_) -> Descent:
        """Plain and clipped descent from the landscape's start, as one batch of two runs."""
        v = torch.tensor([math.inf, max_norm], dtype=torch.float64)  # inf: never clips
        return self.landscape.descend(step_size, max_norm=v, dtype=torch.float64)

    def compute(self, step_size, max_norm, **others):
        runs = self.runs(float(step_size), float(max_norm), **others)
        steps = runs.path.diff(dim=-2).norm(dim=-1)  # (2, steps): length of each update
        self._path = runs.path.numpy()
        state = {"step_size": float(step_size), "max_norm": float(max_norm)}
        state["start_w"], state["start_b"] = runs.path[0, 0].tolist()
        for i, run in enumerate(RUNS):
            left_at = int(runs.left_at[i])
            # the last point inside the picture (a run that left keeps its leaving point next)
            last = runs.path[i, left_at - 1] if left_at > 0 else runs.final[i]
            state[f"{run}_left_at"] = left_at
            state[f"{run}_w"], state[f"{run}_b"] = last.tolist()
            state[f"{run}_longest"] = steps[i].max().item()
        self._left = [state[f"{run}_left_at"] for run in RUNS]
        return state

    def draw(self, state):
        for i, run in enumerate(RUNS):
            left_at = self._left[i]
            path = self._path[i] if left_at < 0 else self._path[i, : left_at + 1]
            self._paths[run].set_data(path[:, 0], path[:, 1])
            self._ends[run].set_data([state[f"{run}_w"]], [state[f"{run}_b"]])
            self._starts[run].set_data([state["start_w"]], [state["start_b"]])

    def readout_html(self, state):
        where = [
            f"{run}: "
            + (
                "stays in the picture"
                if state[f"{run}_left_at"] < 0
                else f"<b>leaves the picture at update {state[f'{run}_left_at']}</b>"
            )
            for run in RUNS
        ]
        return super().readout_html(state) + "<div>" + " &nbsp;·&nbsp; ".join(where) + "</div>"


class Figure1017Demo(LandscapeRunsDemo):
    """Figure 10.17 rebuilt (:func:`clipkit.cliffs.figure_10_17`), with its valley floor."""

    landscape = figure_10_17()
    caption = (
        "Raise the step size to 0.1: the plain run is thrown off the cliff; the clipped one climbs."
    )

    def decorate(self, ax):
        w = self._w_axis
        ax.plot(
            w,
            self.landscape.valley_floor(torch.as_tensor(w)).numpy(),
            "--",
            color=plots.COLORS["point"],
            lw=1.2,
        )


UNIT_STEP_SIZES = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0)
UNIT_THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
PATCH = 10  # the patch of starts is PATCH x PATCH


class RNNUnitDemo(LandscapeRunsDemo):
    """Pascanu et al.'s one-unit recurrent net, x_t = w sigmoid(x_{t-1}) + b over 50 steps
    (:func:`clipkit.cliffs.rnn_unit_figure`).

    Each panel shows the run from the figure's start, and the 100 starts of its patch on the
    plateau, crossed where that run was thrown out of the picture. Every gradient goes back
    through the 50 steps of the net, too slow to redo on each slider move, so the constructor
    runs everything at once: 101 starts, every step size in :data:`UNIT_STEP_SIZES`, every
    threshold in :data:`UNIT_THRESHOLDS` and no threshold, in one batched call to
    :func:`clipkit.descent.descend`. A slider move only picks.

    ``state`` adds ``<run>_thrown`` (how many of the patch's runs left the picture) and
    ``<run>_loss`` (the loss where the figure's run ended).
    """

    landscape = rnn_unit_figure()
    step_range = (UNIT_STEP_SIZES[0], UNIT_STEP_SIZES[-1], 0.25)
    threshold_range = (UNIT_THRESHOLDS[0], UNIT_THRESHOLDS[-1], 0.1)
    caption = "Crosses: patch starts whose run is thrown out of the picture."
    readout_fields = (
        *LandscapeRunsDemo.readout_fields[:2],
        ("plain_thrown", "plain runs thrown out of 100", "d"),
        ("clipped_thrown", "clipped runs thrown out of 100", "d"),
    )

    def __init__(self, **initial):
        ls = self.landscape
        with one_thread():  # many small ops: a busy machine's extra threads only slow them
            self._patch = ls.patch_starts(PATCH, dtype=torch.float64).reshape(-1, 2)
            starts = torch.cat([torch.tensor([ls.start], dtype=torch.float64), self._patch])
            eps = torch.tensor(UNIT_STEP_SIZES, dtype=torch.float64)
            v = torch.tensor((*UNIT_THRESHOLDS, math.inf), dtype=torch.float64)
            # (start, step size, threshold); the last threshold, inf, is plain descent
            self._all = descend(
                ls.grad_at,
                starts[:, None, None, :],
                eps[None, :, None],
                ls.steps,
                max_norm=v,
                bounds=ls.bounds,
            )
            super().__init__(**initial)

    def build_figure(self):
        fig = super().build_figure()
        self._marks = {}
        for ax, run in zip(fig.axes, RUNS, strict=False):
            kept = ax.plot([], [], ".", color=plots.COLORS["point"], ms=3)[0]
            thrown = ax.plot([], [], "x", color=plots.COLORS["plain"], ms=5, mew=1.5)[0]
            self._marks[run] = (self.moving(kept), self.moving(thrown))
        return fig

    def _index(self, step_size, max_norm) -> tuple[int, int]:
        return _nearest(UNIT_STEP_SIZES, step_size), _nearest(UNIT_THRESHOLDS, max_norm)

    def runs(self, step_size, max_norm):
        j, k = self._index(step_size, max_norm)
        pick = torch.tensor([len(UNIT_THRESHOLDS), k])  # plain first, then clipped
        d = self._all
        return Descent(
            d.path[0, j, pick],
            d.grad_norms[0, j, pick],
            d.left_at[0, j, pick],
            d.diverged[0, j, pick],
        )

    def compute(self, step_size, max_norm):
        j, k = self._index(step_size, max_norm)
        state = super().compute(UNIT_STEP_SIZES[j], UNIT_THRESHOLDS[k])
        left = self._all.left_at[1:, j]  # (100, thresholds + 1)
        self._thrown = {"plain": left[:, -1] >= 0, "clipped": left[:, k] >= 0}
        for run in RUNS:
            state[f"{run}_thrown"] = int(self._thrown[run].sum())
        ends = torch.tensor(
            [[state[f"{run}_w"], state[f"{run}_b"]] for run in RUNS], dtype=torch.float64
        )
        with one_thread():
            loss = self.landscape.loss(ends[:, 0], ends[:, 1])
        state["plain_loss"], state["clipped_loss"] = loss.tolist()
        return state

    def draw(self, state):
        super().draw(state)
        patch = self._patch.numpy()
        for run in RUNS:
            thrown = self._thrown[run].numpy()
            kept_line, thrown_line = self._marks[run]
            kept_line.set_data(patch[~thrown, 0], patch[~thrown, 1])
            thrown_line.set_data(patch[thrown, 0], patch[thrown, 1])


def _nearest(values, x) -> int:
    return min(range(len(values)), key=lambda i: abs(values[i] - float(x)))
