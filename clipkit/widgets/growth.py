"""Demo: a direction with eigenvalue lambda, multiplied once per time step, scales as lambda^t."""

from __future__ import annotations

import ipywidgets
import numpy as np

from clipkit import plots
from clipkit.cliffs import power_growth
from clipkit.widgets.demo import Demo, float_slider, int_slider

MAX_STEPS = 100
Y_RANGE = (1e-10, 1e10)  # fixed, so that the curve visibly tilts as lambda moves


class PowerGrowthDemo(Demo):
    """Sliders for the eigenvalue (spectral radius) lambda and the number of steps T."""

    caption = "Above 1 the curve climbs a straight line on this log scale; below 1 it sinks."
    readout_fields = (
        ("radius", "λ", ".2f"),
        ("steps", "steps T", "d"),
        ("factor", "λ^T", ".4g"),
    )

    def build_controls(self):
        return {
            "radius": float_slider("eigenvalue λ", 1.1, 0.5, 1.5, 0.01),
            "steps": int_slider("time steps T", 50, 1, MAX_STEPS),
        }

    def control_box(self):
        # Play walks T from 1 up; jslink runs in the browser, so it costs the kernel nothing extra.
        self.play = ipywidgets.Play(
            value=self.controls["steps"].value, min=1, max=MAX_STEPS, step=1, interval=150
        )
        ipywidgets.jslink((self.play, "value"), (self.controls["steps"], "value"))
        return ipywidgets.HBox(
            [self.play, *self.controls.values()], layout=ipywidgets.Layout(flex_flow="row wrap")
        )

    def build_figure(self):
        fig, (ax,) = plots.new_figure()
        ax.set_yscale("log")
        ax.set_xlim(0, MAX_STEPS)
        ax.set_ylim(*Y_RANGE)
        ax.axhspan(1, Y_RANGE[1], color=plots.COLORS["grow"], alpha=0.07, linewidth=0)
        ax.axhspan(Y_RANGE[0], 1, color=plots.COLORS["fade"], alpha=0.10, linewidth=0)
        ax.axhline(1, color=plots.COLORS["reference"], linewidth=1, linestyle="--")
        ax.text(2, 1e8, "explodes", color=plots.COLORS["grow"], fontsize=plots.FONT["label"])
        ax.text(2, 3e-9, "vanishes", color=plots.COLORS["fade"], fontsize=plots.FONT["label"])
        self._curve = self.moving(ax.plot([], [], linewidth=2.5)[0])
        self._end = self.moving(ax.plot([], [], "o", markersize=8, color=plots.COLORS["point"])[0])
        self._end_text = self.moving(ax.text(0, 1, "", fontsize=plots.FONT["label"], va="bottom"))
        plots.label(ax, "time step t (steps)", r"$\lambda^t$ (× size at t = 0)")
        return fig

    def compute(self, radius, steps):
        curve = power_growth(float(radius), int(steps)).numpy()
        self._ys = curve  # drawn, not part of the readout
        return {"radius": float(radius), "steps": int(steps), "factor": float(curve[-1])}

    def draw(self, state):
        ts = np.arange(state["steps"] + 1)
        self._curve.set_data(ts, self._ys)
        r = state["radius"]
        role = "grow" if r > 1 else "fade" if r < 1 else "reference"
        self._curve.set_color(plots.COLORS[role])
        end = float(np.clip(state["factor"], *Y_RANGE))
        self._end.set_data([state["steps"]], [end])
        self._end_text.set_position((min(state["steps"], MAX_STEPS - 25) + 1, end))
        self._end_text.set_text(f"  {state['factor']:.3g}")
