"""Demo: plain gradient descent against Nesterov momentum in a narrow ravine."""

from __future__ import annotations

import numpy as np
import torch

from clipkit import plots
from clipkit.momentum import (
    RAVINE_KAPPA,
    RAVINE_START,
    SETTLE_TARGET,
    momentum_path_on_quadratic,
    ravine_loss,
    stable_step_limit,
    steps_to_settle,
)
from clipkit.widgets.demo import Demo, float_slider, int_slider

BOX = ((-6.0, 6.0), (-3.0, 3.0))  # a run that leaves this box stops there
MAX_STEPS = 400


def stop_on_leaving(path: torch.Tensor, box) -> tuple[torch.Tensor, torch.Tensor]:
    """Freeze each run (..., T, 2) at its first point outside ``box``, as ``descend`` does.

    Returns the frozen path and left_at (...,): that step, or -1 for a run that stays inside.
    The point that left is kept (a plot shows it leaving); later ones, even inf or nan, are not.
    """
    low = torch.tensor([b[0] for b in box], dtype=path.dtype)
    high = torch.tensor([b[1] for b in box], dtype=path.dtype)
    inside = (torch.isfinite(path) & (path >= low) & (path <= high)).all(-1)  # (..., T)
    out = ~inside
    first = out.to(torch.int64).argmax(-1)
    left_at = torch.where(out.any(-1), first, torch.full_like(first, -1))
    t = torch.arange(path.shape[-2])
    last = torch.where(left_at >= 0, left_at, path.shape[-2] - 1)
    index = torch.minimum(t, last.unsqueeze(-1))  # (..., T): repeat the last kept point
    frozen = torch.gather(path, -2, index.unsqueeze(-1).expand(*index.shape, path.shape[-1]))
    return frozen, left_at


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
            "steps": int_slider("steps", 250, 10, MAX_STEPS, 10),
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
            self.moving(plots.trajectory(left, [], [], color=c, label=n))
            for c, n in zip(colors, names, strict=True)
        ]
        for line in self._paths:
            line.set_markersize(2.5)
        left.set_xlim(*BOX[0])
        left.set_ylim(*BOX[1])
        plots.label(left, "x (along the valley)", "y (across)", "paths from (-4, 1)")
        plots.legend(left, loc="lower right")
        self._curves = [self.moving(right.plot([], [], color=c, linewidth=2)[0]) for c in colors]
        right.set_xlim(0, MAX_STEPS)  # fixed, so a slider move never redraws the background
        right.axhline(SETTLE_TARGET, color=plots.COLORS["reference"], linestyle=":", linewidth=1)
        right.set_yscale("log")
        right.set_ylim(1e-12, 1e4)
        plots.label(right, "step", "loss (log scale)", "loss per step")
        return fig

    def compute(self, lr, momentum, steps):
        start = torch.tensor(RAVINE_START, dtype=torch.float64)
        mus = torch.tensor([0.0, float(momentum)], dtype=torch.float64)
        # The same iterates as momentum.ravine_race (which runs clipkit.descent.descend, one
        # Python step at a time), from the closed form: a slider move costs a millisecond.
        path = momentum_path_on_quadratic((1.0, RAVINE_KAPPA), start, float(lr), mus, int(steps))
        path, left_at = stop_on_leaving(path, BOX)
        losses = ravine_loss(path)  # (2, steps + 1)
        settled = steps_to_settle(losses)
        limits = stable_step_limit(RAVINE_KAPPA, mus, nesterov=True)
        self._drawn = (path.numpy(), losses.numpy())  # for draw(); state keeps numbers only
        return {
            "lr": float(lr),
            "momentum": float(momentum),
            "steps": int(steps),
            "plain_loss": losses[0, -1].item(),
            "nesterov_loss": losses[1, -1].item(),
            "plain_steps": int(settled[0]),
            "nesterov_steps": int(settled[1]),
            "plain_left_at": int(left_at[0]),
            "nesterov_left_at": int(left_at[1]),
            "plain_limit": limits[0].item(),
            "nesterov_limit": limits[1].item(),
        }

    def draw(self, state):
        path, losses = self._drawn
        steps = np.arange(losses.shape[-1])
        for i in range(2):
            plots.set_trajectory(self._paths[i], path[i, :, 0], path[i, :, 1])
            self._curves[i].set_data(steps, np.clip(losses[i], 1e-12, 1e4))
