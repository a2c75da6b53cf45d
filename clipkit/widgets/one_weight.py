"""Demo: the one-weight cliff L(w) = log(1 + w^20), its gradient and the tangent at w."""

from __future__ import annotations

import torch

from clipkit import plots
from clipkit.cliffs import one_weight_cliff_grad, one_weight_cliff_loss
from clipkit.widgets.demo import Demo, float_slider

W_RANGE = (0.0, 1.2)


class OneWeightCliffDemo(Demo):
    """A slider for w; the loss with its tangent (left) and the gradient (right)."""

    caption = "Past w = 1 the tangent stands up: the slope grows much faster than the loss."
    readout_fields = (
        ("w", "w", ".2f"),
        ("loss", "L(w)", ".3f"),
        ("grad", "dL/dw", ".2f"),
    )

    def build_controls(self):
        return {"w": float_slider("weight w", 0.90, *W_RANGE, 0.01)}

    def build_figure(self):
        fig, (left, right) = plots.new_figure(ncols=2)
        grid = torch.linspace(*W_RANGE, 241, dtype=torch.float64)
        left.plot(grid, one_weight_cliff_loss(grid), color=plots.COLORS["loss"], linewidth=2.5)
        right.plot(grid, one_weight_cliff_grad(grid), color=plots.COLORS["gradient"], linewidth=2.5)
        left.set_xlim(*W_RANGE)
        right.set_xlim(*W_RANGE)
        left.set_ylim(-0.1, 3.8)
        right.set_ylim(0, 18)
        self._tangent = self.moving(
            left.plot([], [], color=plots.COLORS["tangent"], linewidth=2)[0]
        )
        self._loss_point = self.moving(
            left.plot([], [], "o", color=plots.COLORS["point"], markersize=8)[0]
        )
        self._grad_point = self.moving(
            right.plot([], [], "o", color=plots.COLORS["point"], markersize=8)[0]
        )
        self._grad_level = self.moving(
            right.plot([], [], ":", color=plots.COLORS["point"], linewidth=1)[0]
        )
        plots.label(left, "weight w", r"loss $L(w) = \log(1 + w^{20})$", "the loss and its tangent")
        plots.label(right, "weight w", r"gradient $dL/dw$", "its slope")
        return fig

    def compute(self, w):
        t = torch.tensor(float(w), dtype=torch.float64)
        return {
            "w": float(w),
            "loss": one_weight_cliff_loss(t).item(),
            "grad": one_weight_cliff_grad(t).item(),
        }

    def draw(self, state):
        w, loss, grad = state["w"], state["loss"], state["grad"]
        self._tangent.set_data(*plots.tangent_xy(w, loss, grad, half_width=0.15))
        self._loss_point.set_data([w], [loss])
        self._grad_point.set_data([w], [grad])
        self._grad_level.set_data([W_RANGE[0], w], [grad, grad])
