"""Demo: the exponential f(x) = exp(a x), its slope, its curvature, and the Newton step."""

from __future__ import annotations

import numpy as np
import torch

from clipkit import plots
from clipkit.curvature import exponential, exponential_derivatives, slope_and_curvature
from clipkit.widgets.demo import Demo, float_slider

X_RANGE = (-4.0, 1.0)
A_RANGE = (0.25, 3.0)
LOCAL_VIEW = (-4.3, 1.2)  # t - x on the left panel: room for the longest step, 1/0.25 = 4


class ExponentialDemo(Demo):
    """Sliders for the steepness a and the point x.

    Left: the curve seen from the point x and scaled by f(x), that is f(t)/f(x) against t - x,
    with the tangent, the local quadratic model m(t) = f + f'(t - x) + f''(t - x)^2 / 2 and
    the Newton step x -> x - f'/f'' drawn as an arrow to the model's lowest point. Seen this
    way the picture does not change with x at all, which is the point of the demo; it changes
    with a. Right: slope, curvature and their ratio at their true sizes, on a log scale.
    Every line is blitted over a fixed background, so no slider move costs a full render.
    """

    caption = (
        "Seen from the point (left), the curve is the same at every x: the Newton step stays 1/a."
    )
    readout_fields = (
        ("a", "a", ".2f"),
        ("x", "x", ".2f"),
        ("slope", "f'(x)", ".3g"),
        ("curvature", "f''(x)", ".3g"),
        ("ratio", "f'/f''", ".4f"),
        ("one_over_a", "1/a", ".4f"),
        ("newton_x", "Newton lands at", ".3f"),
    )

    def build_controls(self):
        return {
            "a": float_slider("steepness a", 1.0, *A_RANGE, 0.05),
            "x": float_slider("point x", 0.0, *X_RANGE, 0.05),
        }

    def build_figure(self):
        fig, (left, right) = plots.new_figure(ncols=2, width=8.5, height=3.6)
        self._grid = torch.linspace(X_RANGE[0], X_RANGE[1], 201, dtype=torch.float64)
        self._grid_np = self._grid.numpy()  # artists hold numpy arrays, not tensors
        self._local = np.linspace(*LOCAL_VIEW, 221)  # t - x
        c = plots.COLORS
        # Every line moves with a, so all of them are blitted: the background (axes, ticks,
        # legends) never needs a redraw, and no slider move costs a full render.
        self._curve = self.moving(
            left.plot([], [], color=c["loss"], linewidth=2.5, label="f(t) / f(x)")[0]
        )
        self._model = self.moving(
            left.plot([], [], "--", color=c["reference"], linewidth=1.5, label="quadratic model")[0]
        )
        self._tangent = self.moving(
            left.plot([], [], color=c["tangent"], linewidth=2, label="tangent")[0]
        )
        left.plot([0], [1], "o", color=c["point"], markersize=8, zorder=5)
        self._landing = self.moving(left.plot([], [], "X", color=c["step"], markersize=10)[0])
        self._arrow = self.moving(plots.arrow(left, (0, 1), (0, 1)))
        left.set_xlim(*LOCAL_VIEW)
        left.set_ylim(-0.15, 2.6)
        plots.label(left, "t − x (distance from the point)", "f(t) / f(x)", "seen from the point")
        plots.legend(left, loc="upper left")

        self._slope_line = self.moving(
            right.plot([], [], color=c["gradient"], linewidth=2, label="f'")[0]
        )
        self._curv_line = self.moving(
            right.plot([], [], color=c["loss"], linewidth=2, label="f''")[0]
        )
        self._ratio_line = self.moving(
            right.plot([], [], color=c["step"], linewidth=2.5, label="f'/f'' = 1/a")[0]
        )
        self._marks = self.moving(right.plot([], [], "o", color=c["point"], markersize=6)[0])
        self._cursor = self.moving(right.axvline(0.0, color=c["reference"], linewidth=1, ls=":"))
        right.set_yscale("log")
        right.set_xlim(*X_RANGE)
        right.set_ylim(1e-6, 1e3)
        plots.label(right, "x", "value (log scale)", "slope, curvature, ratio")
        plots.legend(right, loc="lower right")
        self._last_a = None
        return fig

    def compute(self, a, x):
        a, x = float(a), float(x)
        point = torch.tensor([x], dtype=torch.float64)
        # the numbers on screen come from autograd; the readout puts 1/a beside them
        slope, curv = slope_and_curvature(lambda t: exponential(t, a), point)
        ratio = (slope / curv).item()
        return {
            "a": a,
            "x": x,
            "f": exponential(point, a).item(),
            "slope": slope.item(),
            "curvature": curv.item(),
            "ratio": ratio,
            "one_over_a": 1.0 / a,
            "newton_x": x - ratio,
            "step_length": abs(ratio),
        }

    def draw(self, state):
        a, x = state["a"], state["x"]
        slope, curv, ratio = state["slope"], state["curvature"], state["ratio"]
        if a != self._last_a:  # everything but the cursor depends on a only
            _, s_grid, c_grid = exponential_derivatives(self._grid, a)
            self._slope_line.set_data(self._grid_np, s_grid.numpy())
            self._curv_line.set_data(self._grid_np, c_grid.numpy())
            self._ratio_line.set_data(X_RANGE, [1.0 / a, 1.0 / a])
            # divided by f(x): f(t)/f(x) = exp(a u), tangent 1 + a u, model 1 + a u + (a u)^2 / 2
            # with u = t - x; the model's lowest point is (-1/a, 1/2)
            u = self._local
            self._curve.set_data(u, np.exp(a * u))
            self._model.set_data(u, 1 + a * u + 0.5 * (a * u) ** 2)
            near = np.array([-0.6, 0.6]) / a
            self._tangent.set_data(near, 1 + a * near)
            self._landing.set_data([-1.0 / a], [0.5])
            plots.move_arrow(self._arrow, (0, 1), (-1.0 / a, 0.5))
            self._last_a = a
        self._marks.set_data([x, x, x], [slope, curv, ratio])
        self._cursor.set_xdata([x, x])
