"""Demo: the exponential f(x) = exp(a x), its slope, its curvature, and the Newton step."""

from __future__ import annotations

import torch

from clipkit import plots
from clipkit.curvature import exponential, exponential_derivatives, slope_and_curvature
from clipkit.widgets.demo import Demo, float_slider

X_RANGE = (-4.0, 1.0)
A_RANGE = (0.25, 3.0)


class ExponentialDemo(Demo):
    """Sliders for the steepness a and the point x.

    Left: the curve near x, with the tangent, the local quadratic model and the Newton step
    x -> x - f'/f'' drawn as an arrow to the model's minimum. The vertical scale follows the
    point (the curve's height spans many powers of ten), so the picture looks the same at
    every x: that is the point. Right: slope, curvature and their ratio on a log scale.
    """

    caption = "Move x: slope and curvature fall together, so the Newton step keeps its length 1/a."
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
        self._grid = torch.linspace(X_RANGE[0] - 3.5, X_RANGE[1] + 0.5, 301, dtype=torch.float64)
        color = plots.COLORS
        (self._curve,) = left.plot([], [], color=color["loss"], linewidth=2.5, label="f(x)")
        (self._model,) = left.plot(
            [], [], "--", color=color["reference"], linewidth=1.5, label="quadratic model"
        )
        (self._tangent,) = left.plot([], [], color=color["tangent"], linewidth=2, label="tangent")
        (self._point,) = left.plot([], [], "o", color=color["point"], markersize=8)
        (self._landing,) = left.plot([], [], "X", color=color["step"], markersize=10)
        self._arrow = plots.arrow(left, (0, 0), (0, 0))
        plots.label(left, "x", "f(x) = exp(a x)", "the Newton step")
        plots.legend(left, loc="upper left")

        (self._slope_line,) = right.plot([], [], color=color["gradient"], linewidth=2, label="f'")
        (self._curv_line,) = right.plot([], [], color=color["loss"], linewidth=2, label="f''")
        (self._ratio_line,) = right.plot(
            [], [], color=color["step"], linewidth=2.5, label="f'/f'' = 1/a"
        )
        (self._marks,) = right.plot([], [], "o", color=color["point"], markersize=6)
        self._cursor = right.axvline(0.0, color=color["reference"], linewidth=1, linestyle=":")
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
        # the numbers on screen come from autograd; the closed form is shown beside them
        slope, curv = slope_and_curvature(lambda t: exponential(t, a), point)
        f = exponential(point, a)
        ratio = (slope / curv).item()
        return {
            "a": a,
            "x": x,
            "f": f.item(),
            "slope": slope.item(),
            "curvature": curv.item(),
            "ratio": ratio,
            "one_over_a": 1.0 / a,
            "newton_x": x - ratio,
            "step_length": abs(ratio),
        }

    def draw(self, state):
        a, x, f = state["a"], state["x"], state["f"]
        slope, curv, land = state["slope"], state["curvature"], state["newton_x"]
        if a != self._last_a:  # the curves depend on a only: skip them when x alone moved
            f_grid, s_grid, c_grid = exponential_derivatives(self._grid, a)
            self._curve.set_data(self._grid, f_grid)
            self._slope_line.set_data(self._grid, s_grid)
            self._curv_line.set_data(self._grid, c_grid)
            self._ratio_line.set_data(X_RANGE, [1.0 / a, 1.0 / a])
            self._last_a = a
        # the quadratic model m(t) = f + f'(t - x) + f''(t - x)^2 / 2, minimised at t = land
        ax = self._curve.axes
        half = 2.5 / a
        t = torch.linspace(x - half, x + 0.8 * half, 60, dtype=torch.float64)
        self._model.set_data(t, f + slope * (t - x) + 0.5 * curv * (t - x) ** 2)
        self._tangent.set_data(*plots.tangent_xy(x, f, slope, half_width=0.6 / a))
        model_min = f - slope * slope / (2 * curv)
        self._point.set_data([x], [f])
        self._landing.set_data([land], [model_min])
        plots.move_arrow(self._arrow, (x, f), (land, model_min))
        ax.set_xlim(x - half, x + 0.8 * half)
        ax.set_ylim(-0.15 * f, 2.6 * f)
        self._marks.set_data([x, x, x], [slope, curv, slope / curv])
        self._cursor.set_xdata([x, x])
