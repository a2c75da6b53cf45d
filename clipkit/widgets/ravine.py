"""Demo: plain gradient descent against Nesterov momentum in a narrow ravine."""

from __future__ import annotations

import numpy as np
import torch

from clipkit import plots
from clipkit.curvature import (
    RAVINE_KAPPA,
    RAVINE_START,
    SETTLE_TARGET,
    ravine_race,
    stable_step_limit,
    steps_to_settle,
)
from clipkit.widgets.demo import Demo, float_slider, int_slider

BOX = ((-6.0, 6.0), (-3.0, 3.0))  # a run that leaves this box stops there


class RavineDemo(Demo):
    """Sliders for the step size, the momentum and the number of steps.

    Both runs start at (-4, 1) on f = (x^2 + 50 y^2) / 2 with the same step size; the plain run
    has momentum 0, the other Nesterov momentum mu. Left: the paths. Right: the loss per step.
    A step count of -1 in the readout means the run has not settled (or left the picture).
    """

    caption = "One step size for both: momentum speeds along the floor but needs smaller steps."
    readout_fields = (
        ("plain_loss", "plain: final loss", ".3g"),
        ("nesterov_loss", "Nesterov: final loss", ".3g"),
        ("plain_steps", f"plain: steps to stay below {SETTLE_TARGET:g}", "d"),
        ("nesterov_steps", f"Nesterov: steps to stay below {SETTLE_TARGET:g}", "d"),
        ("plain_limit", "plain: largest stable step", ".4f"),
        ("nesterov_limit", "Nesterov: largest stable step", ".4f"),
    )

    def build_controls(self):
        return {
            "lr": float_slider("step size", 0.02, 0.002, 0.045, 0.001, readout_format=".3f"),
            "momentum": float_slider("momentum", 0.9, 0.0, 0.99, 0.01),
            "steps": int_slider("steps", 250, 10, 400, 10),
        }

    def build_figure(self):
        fig, (left, right) = plots.new_figure(ncols=2, width=9.0, height=3.6)
        xs, ys = np.linspace(*BOX[0], 161), np.linspace(*BOX[1], 81)
        xx, yy = np.meshgrid(xs, ys)
        levels = np.geomspace(1e-2, 250, 12)
        left.contour(
            xx,
            yy,
            0.5 * (xx**2 + RAVINE_KAPPA * yy**2),
            levels=levels,
            cmap=plots.SEQUENTIAL_CMAP,
            linewidths=1,
        )
        left.plot([0], [0], "+", color=plots.COLORS["point"], markersize=12, mew=2)
        colors = (plots.COLORS["plain"], plots.COLORS["clipped"])
        names = ("plain", "Nesterov")
        self._paths = [
            plots.trajectory(left, [], [], color=c, label=n)
            for c, n in zip(colors, names, strict=True)
        ]
        for line in self._paths:
            line.set_markersize(2.5)
        left.set_xlim(*BOX[0])
        left.set_ylim(*BOX[1])
        plots.label(left, "x (along the valley)", "y (across)", "paths from (-4, 1)")
        plots.legend(left, loc="lower right")
        self._curves = [right.plot([], [], color=c, linewidth=2)[0] for c in colors]
        right.axhline(SETTLE_TARGET, color=plots.COLORS["reference"], linestyle=":", linewidth=1)
        right.set_yscale("log")
        right.set_ylim(1e-12, 1e4)
        plots.label(right, "step", "loss (log scale)", "loss per step")
        return fig

    def compute(self, lr, momentum, steps):
        start = torch.tensor(RAVINE_START, dtype=torch.float64)
        run, losses = ravine_race(float(lr), float(momentum), int(steps), start=start, bounds=BOX)
        settled = steps_to_settle(losses)
        mus = torch.tensor([0.0, float(momentum)], dtype=torch.float64)
        limits = stable_step_limit(RAVINE_KAPPA, mus, nesterov=True)
        self._drawn = (run.path.numpy(), losses.numpy())  # for draw(); state keeps numbers only
        falls = losses[:, 1:] <= losses[:, :-1]
        return {
            "lr": float(lr),
            "momentum": float(momentum),
            "steps": int(steps),
            "plain_loss": losses[0, -1].item(),
            "nesterov_loss": losses[1, -1].item(),
            "plain_steps": int(settled[0]),
            "nesterov_steps": int(settled[1]),
            "plain_left_at": int(run.left_at[0]),
            "nesterov_left_at": int(run.left_at[1]),
            "plain_limit": limits[0].item(),
            "nesterov_limit": limits[1].item(),
            "plain_monotone": bool(falls[0].all()),
            "nesterov_monotone": bool(falls[1].all()),
        }

    def draw(self, state):
        path, losses = self._drawn
        steps = np.arange(losses.shape[-1])
        for i in range(2):
            plots.set_trajectory(self._paths[i], path[i, :, 0], path[i, :, 1])
            self._curves[i].set_data(steps, np.clip(losses[i], 1e-12, 1e4))
        self._curves[0].axes.set_xlim(0, state["steps"])
