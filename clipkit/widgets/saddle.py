"""Demo: on the saddle f(x, y) = x^2 - y^2, one Newton step against many gradient steps."""

from __future__ import annotations

import numpy as np
import torch

from clipkit import plots
from clipkit.curvature import newton_step, saddle_grad, saddle_loss
from clipkit.descent import descend
from clipkit.widgets.demo import Demo, float_slider, int_slider

VIEW = 2.0  # the picture is the square [-VIEW, VIEW]^2


class SaddleDemo(Demo):
    """Sliders for the start point, the step size and the number of gradient steps.

    The Newton step goes to the stationary point of the local quadratic model; on this surface
    the model is the surface itself, so the step lands exactly on the saddle (0, 0). Gradient
    descent shrinks x but lets y grow by a factor (1 + 2 lr) per step, away from the saddle,
    until it leaves the picture.
    """

    caption = "Newton jumps onto the saddle; gradient descent slides off it along y."
    readout_fields = (
        ("newton_x", "Newton x", ".3f"),
        ("newton_y", "Newton y", ".3f"),
        ("gd_x", "descent x", ".3f"),
        ("gd_y", "descent y", ".3f"),
        ("gd_distance", "descent: distance from saddle", ".3f"),
        ("gd_loss", "descent: f", ".3f"),
    )

    def build_controls(self):
        return {
            "x0": float_slider("start x", 1.2, -1.8, 1.8, 0.05),
            "y0": float_slider("start y", 0.2, -1.8, 1.8, 0.05),
            "lr": float_slider("step size", 0.1, 0.01, 0.4, 0.01),
            "steps": int_slider("gradient steps", 10, 1, 40),
        }

    def build_figure(self):
        fig, (ax,) = plots.new_figure(width=5.6, height=4.6)
        side = np.linspace(-VIEW, VIEW, 121)
        xx, yy = np.meshgrid(side, side)
        levels = np.linspace(-4, 4, 17)
        ax.contourf(xx, yy, xx**2 - yy**2, levels=levels, cmap=plots.DIVERGING_CMAP, alpha=0.55)
        ax.contour(xx, yy, xx**2 - yy**2, levels=[0.0], colors=plots.COLORS["reference"])
        ax.plot([0], [0], "+", color=plots.COLORS["point"], markersize=14, mew=2)
        c = plots.COLORS
        self._path = self.moving(plots.trajectory(ax, [], [], color=c["plain"], label="gradient"))
        self._start = self.moving(ax.plot([], [], "o", color=c["point"], markersize=9)[0])
        self._newton = self.moving(
            ax.plot([], [], "X", color=c["step"], markersize=11, label="Newton")[0]
        )
        self._arrow = self.moving(plots.arrow(ax, (0, 0), (0, 0)))
        ax.set_xlim(-VIEW, VIEW)
        ax.set_ylim(-VIEW, VIEW)
        ax.set_aspect("equal")
        plots.label(ax, "x", "y", "f(x, y) = x² − y²")
        plots.legend(ax, loc="lower left")
        return fig

    def compute(self, x0, y0, lr, steps):
        start = torch.tensor([float(x0), float(y0)], dtype=torch.float64)
        landed = newton_step(saddle_loss, start)
        box = [(-VIEW, VIEW), (-VIEW, VIEW)]
        run = descend(saddle_grad, start, float(lr), int(steps), bounds=box)
        final = run.final
        self._path_xy = run.path.numpy()  # for draw(); the state keeps numbers only
        return {
            "x0": float(x0),
            "y0": float(y0),
            "lr": float(lr),
            "steps": int(steps),
            "newton_x": landed[0].item(),
            "newton_y": landed[1].item(),
            "newton_loss": saddle_loss(landed).item(),
            "gd_x": final[0].item(),
            "gd_y": final[1].item(),
            "gd_distance": final.norm().item(),
            "gd_loss": saddle_loss(final).item(),
            "start_distance": start.norm().item(),
            "gd_left_at": int(run.left_at.item()),
        }

    def draw(self, state):
        start = (state["x0"], state["y0"])
        plots.set_trajectory(self._path, self._path_xy[:, 0], self._path_xy[:, 1])
        self._start.set_data([start[0]], [start[1]])
        self._newton.set_data([state["newton_x"]], [state["newton_y"]])
        plots.move_arrow(self._arrow, start, (state["newton_x"], state["newton_y"]))
