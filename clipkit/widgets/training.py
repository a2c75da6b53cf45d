"""Demos: the small RNN of :mod:`clipkit.rnn` trained with and without clipping.

Both demos only choose what to show: the training runs once (:func:`clipkit.rnn.notebook_runs`,
or runs handed in), and a slider move redraws from the recorded numbers.
"""

from __future__ import annotations

import ipywidgets
import numpy as np
import torch
from matplotlib.patches import Rectangle

from clipkit import plots, rnn
from clipkit.widgets.demo import Demo, int_slider, log_slider

OVERFLOW_TEXT = "overflow"


def _runs(plain: rnn.TrainingRun | None, clipped: rnn.TrainingRun | None):
    if plain is None or clipped is None:
        default_plain, default_clipped = rnn.notebook_runs()
        plain, clipped = plain or default_plain, clipped or default_clipped
    return plain, clipped


class TrainingDemo(Demo):
    """A step slider (with Play) walks through both runs: the gradient norm before clipping
    (left, log scale, the threshold dashed, clipped steps ringed) and the loss (right)."""

    caption = "Press Play: one early jump in the gradient and the plain run never comes back."
    readout_fields = (
        ("step", "step", "d"),
        ("plain_norm", "plain ‖g‖", ".3g"),
        ("plain_loss", "plain loss", ".3g"),
        ("clipped_norm", "clipped run ‖g‖", ".3g"),
        ("clipped_loss", "clipped run loss", ".3g"),
        ("clipped_so_far", "steps clipped so far", "d"),
    )

    def __init__(self, plain=None, clipped=None, **initial):
        self.plain, self.clipped = _runs(plain, clipped)
        self.n = self.plain.steps
        super().__init__(**initial)

    def build_controls(self):
        step = int_slider("training step", self.n, 1, self.n)
        self.play = ipywidgets.Play(value=self.n, min=1, max=self.n, step=1, interval=100)
        ipywidgets.jslink((self.play, "value"), (step, "value"))
        return {"step": step}

    def control_box(self):
        return ipywidgets.HBox([self.play, self.controls["step"]])

    def build_figure(self):
        fig, (left, right) = plots.new_figure(ncols=2, width=9.5)
        self._lines = {}
        for ax, key in ((left, "grad_norm"), (right, "loss")):
            ax.set_yscale("log")
            ax.set_xlim(0, self.n)
            values = torch.cat([self.plain.__dict__[key], self.clipped.__dict__[key]])
            finite = values[torch.isfinite(values) & (values > 0)]
            ax.set_ylim(finite.min().item() / 3, finite.max().item() * 30)
            for name, color in (("plain", "plain"), ("clipped", "clipped")):
                (line,) = ax.plot([], [], color=plots.COLORS[color], linewidth=1.8, label=name)
                self._lines[key, name] = self.moving(line)
        left.axhline(self.clipped.max_norm, color=plots.COLORS["reference"], linestyle="--")
        left.text(self.n * 0.6, self.clipped.max_norm * 3, f"threshold {self.clipped.max_norm:g}")
        (self._rings,) = left.plot([], [], "o", mfc="none", color=plots.COLORS["clipped"], ms=7)
        self.moving(self._rings)
        self._overflow = self.moving(
            right.text(0, 1, "", color=plots.COLORS["plain"], fontsize=plots.FONT["label"])
        )
        plots.label(left, "training step", "‖g‖ before clipping", "gradient norm")
        plots.label(right, "training step", "squared error (batch mean)", "loss")
        plots.legend(right, loc="center right")
        return fig

    def compute(self, step):
        t = int(step)
        p, c = self.plain, self.clipped
        return {
            "step": t,
            "plain_norm": p.grad_norm[t - 1].item(),
            "plain_loss": p.loss[t - 1].item(),
            "clipped_norm": c.grad_norm[t - 1].item(),
            "clipped_loss": c.loss[t - 1].item(),
            "clipped_so_far": int(c.clipped[:t].sum()),
            "plain_diverged_at": -1 if p.diverged_at is None else p.diverged_at,
        }

    def draw(self, state):
        t = state["step"]
        xs = np.arange(t)
        for (key, name), line in self._lines.items():
            run = self.plain if name == "plain" else self.clipped
            line.set_data(xs, run.__dict__[key][:t].numpy())
        hit = np.flatnonzero(self.clipped.clipped[:t].numpy())
        self._rings.set_data(hit, self.clipped.grad_norm[hit].numpy())
        gone = state["plain_diverged_at"]
        if 0 <= gone < t:
            top = self._overflow.axes.get_ylim()[1]
            self._overflow.set_position((max(gone - 30, 1), top / 1e4))
            self._overflow.set_text(f"plain: {OVERFLOW_TEXT} at step {gone}")
        else:
            self._overflow.set_text("")


class ThresholdDemo(Demo):
    """The distribution of the clipped run's gradient norms (before clipping) against a
    threshold slider, with the loss taken as a mean or a sum over the batch.

    With the sum, the same gradients are exactly ``batch_size`` times longer
    (:func:`clipkit.rnn.squared_error`), so the histogram shifts right by that factor while
    the threshold stays put. The fraction is a what-if count on the recorded norms
    (:func:`clipkit.rnn.fraction_clipped`).
    """

    caption = "Dotted: the mean norm; shaded: half to ten times it. Red bars would be clipped."
    readout_fields = (
        ("threshold", "threshold v", ".3g"),
        ("mean_norm", "mean ‖g‖", ".3g"),
        ("ratio", "v / mean", ".3g"),
        ("fraction", "steps clipped", ".0%"),
    )
    edges = np.logspace(-3, 4, 50)

    def __init__(self, run=None, **initial):
        self.run = run if run is not None else rnn.notebook_runs()[1]
        self.batch_size = rnn.BATCH_SIZE
        norms = self.run.grad_norm[torch.isfinite(self.run.grad_norm)]
        self._norms = {"mean": norms, "sum": norms * self.batch_size}
        self._counts = {k: np.histogram(v.numpy(), self.edges)[0] for k, v in self._norms.items()}
        super().__init__(**initial)

    def build_controls(self):
        return {
            "threshold": log_slider("threshold v", rnn.CLIP, 1e-2, 1e3, step=0.05),
            "reduction": ipywidgets.ToggleButtons(
                options=["mean", "sum"], value="mean", description="loss over the batch"
            ),
        }

    def build_figure(self):
        fig, (ax,) = plots.new_figure(width=8.0)
        ax.set_xscale("log")
        ax.set_xlim(self.edges[0], self.edges[-1])
        top = max(c.max() for c in self._counts.values()) * 1.15
        ax.set_ylim(0, top)
        self._band = self.moving(
            ax.add_patch(
                Rectangle(
                    (1, 0), 1, 1, transform=ax.get_xaxis_transform(), color="#cccccc", alpha=0.5
                )
            )
        )
        self._kept = self.moving(
            ax.stairs(np.zeros(len(self.edges) - 1), self.edges, fill=True, color="#8a9bb0")
        )
        self._cut = self.moving(
            ax.stairs(
                np.zeros(len(self.edges) - 1), self.edges, fill=True, color=plots.COLORS["plain"]
            )
        )
        self._mean_line = self.moving(ax.axvline(1, color=plots.COLORS["point"], linestyle=":"))
        self._v_line = self.moving(ax.axvline(1, color=plots.COLORS["point"], linewidth=2))
        plots.label(ax, "‖g‖ before clipping (log scale)", "training steps")
        return fig

    def compute(self, threshold, reduction):
        norms = self._norms[reduction]
        mean = rnn.rule_of_thumb(norms).item()
        return {
            "threshold": float(threshold),
            "factor": 1 if reduction == "mean" else self.batch_size,
            "mean_norm": mean,
            "ratio": float(threshold) / mean,
            "fraction": rnn.fraction_clipped(norms, float(threshold)).item(),
        }

    def draw(self, state):
        counts = self._counts["mean" if state["factor"] == 1 else "sum"]
        above = self.edges[:-1] >= state["threshold"]  # a bin counts as cut if it starts above v
        self._kept.set_data(np.where(above, 0, counts))
        self._cut.set_data(np.where(above, counts, 0))
        mean = state["mean_norm"]
        self._band.set_x(0.5 * mean)
        self._band.set_width(9.5 * mean)
        self._mean_line.set_xdata([mean, mean])
        self._v_line.set_xdata([state["threshold"]] * 2)
