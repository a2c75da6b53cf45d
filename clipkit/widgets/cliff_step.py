"""Demo: one plain gradient step on the one-weight cliff, from a start point with a step size."""

from __future__ import annotations

import torch

from clipkit import plots
from clipkit.cliffs import one_weight_cliff_grad, one_weight_cliff_loss, one_weight_cliff_step
from clipkit.widgets.demo import Demo, float_slider, log_slider

VIEW = (-2.2, 2.2)  # the loss is even in w: the far side has its own cliff
Y_TOP = 16.0


class CliffStepDemo(Demo):
    """Sliders for the start w0 and the step size; the step is drawn as an arrow."""

    caption = "The same step size moves w much farther once the start is on the cliff face."
    readout_fields = (
        ("start", "start w0", ".2f"),
        ("lr", "step size", ".3g"),
        ("grad", "dL/dw", ".2f"),
        ("step", "step length", ".2f"),
        ("landed", "lands at w1", ".2f"),
        ("loss_before", "L(w0)", ".3g"),
        ("loss_after", "L(w1)", ".3g"),
    )

    def build_controls(self):
        return {
            "start": float_slider("start w0", 0.90, 0.0, 1.15, 0.01),
            "lr": log_slider("step size", 0.2, 0.01, 0.5),
        }

    def build_figure(self):
        fig, (ax,) = plots.new_figure()
        grid = torch.linspace(*VIEW, 441, dtype=torch.float64)
        ax.plot(grid, one_weight_cliff_loss(grid), color=plots.COLORS["loss"], linewidth=2.5)
        ax.set_xlim(*VIEW)
        ax.set_ylim(-0.5, Y_TOP)
        self._start = self.moving(
            ax.plot([], [], "o", color=plots.COLORS["point"], markersize=9)[0]
        )
        self._landed = self.moving(
            ax.plot([], [], "X", color=plots.COLORS["step"], markersize=11)[0]
        )
        self._arrow = self.moving(plots.arrow(ax, (0, 0), (0, 0), connectionstyle="arc3,rad=-0.3"))
        plots.label(ax, "weight w", r"loss $L(w) = \log(1 + w^{20})$", "one gradient step")
        return fig

    def compute(self, start, lr):
        w0 = torch.tensor(float(start), dtype=torch.float64)
        w1 = one_weight_cliff_step(w0, float(lr))
        return {
            "start": float(start),
            "lr": float(lr),
            "grad": one_weight_cliff_grad(w0).item(),
            "step": abs((w1 - w0).item()),
            "landed": w1.item(),
            "loss_before": one_weight_cliff_loss(w0).item(),
            "loss_after": one_weight_cliff_loss(w1).item(),
        }

    def draw(self, state):
        start = (state["start"], state["loss_before"])
        # A landing point off the picture is drawn at the picture's edge; the readout says where.
        shown_w = min(max(state["landed"], VIEW[0]), VIEW[1])
        landed = (shown_w, min(state["loss_after"], Y_TOP))
        self._start.set_data([start[0]], [start[1]])
        self._landed.set_data([landed[0]], [landed[1]])
        plots.move_arrow(self._arrow, start, landed)
