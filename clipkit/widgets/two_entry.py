"""Demo: a two-entry gradient, clipped by norm and by value, with the angle each turns by."""

from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib.patches import Circle, Rectangle

from clipkit import clipping, plots
from clipkit.compare import compare_clipping
from clipkit.widgets.demo import Demo, float_slider

G_RANGE = (-12.0, 12.0)
V_RANGE = (0.1, 5.0)
ZOOM = 1.6  # the right panel spans [-1.6 v, 1.6 v]: the threshold's box with some room


class TwoEntryClipDemo(Demo):
    """Sliders for the entries g1, g2 and the threshold v.

    Left: the gradient at its own scale, with the ball ``||g|| <= v`` and the box
    ``|g_i| <= v`` that the two clippings map into. Right: a close-up in units of ``v``:
    both clipped vectors, and the gradient's own direction as a dashed ray.
    """

    caption = "Blue (by norm) stays on g's dotted line; orange (by value) leaves it past v."
    readout_fields = (
        ("v", "v", ".2f"),
        ("norm", "||g||", ".2f"),
        ("heading", "heading of g (°)", ".2f"),
        ("heading_by_norm", "heading by norm (°)", ".2f"),
        ("heading_by_value", "heading by value (°)", ".2f"),
        ("angle_by_norm", "turn by norm (°)", ".2f"),
        ("angle_by_value", "turn by value (°)", ".2f"),
    )

    def build_controls(self):
        return {
            "g1": float_slider("entry g1", 10.0, *G_RANGE, 0.1),
            "g2": float_slider("entry g2", 1.0, *G_RANGE, 0.1),
            "v": float_slider("threshold v", 1.0, *V_RANGE, 0.05),
        }

    def build_figure(self):
        fig, (whole, close) = plots.new_figure(ncols=2, width=8.5, height=4.2)
        c = plots.COLORS
        for ax in (whole, close):
            ax.set_aspect("equal")
            ax.axhline(0, color=c["reference"], linewidth=0.8)
            ax.axvline(0, color=c["reference"], linewidth=0.8)
        lim = G_RANGE[1] * 1.05
        whole.set_xlim(-lim, lim)
        whole.set_ylim(-lim, lim)
        close.set_xlim(-ZOOM, ZOOM)
        close.set_ylim(-ZOOM, ZOOM)
        plots.label(whole, "entry g1", "entry g2", "the gradient g")
        plots.label(close, "g1 / v", "g2 / v", "clipped, in units of v")

        self._ball = self.moving(Circle((0, 0), 1.0, fill=False, color=c["clipped"], ls="--"))
        self._box = self.moving(
            Rectangle((-1, -1), 2, 2, fill=False, color=c["tangent"], ls="--", linewidth=1.2)
        )
        whole.add_patch(self._ball)
        whole.add_patch(self._box)
        self._g = self.moving(plots.arrow(whole, (0, 0), (1, 0), color=c["point"]))
        # the close-up's ball and box have radius 1 for every v: they are static
        close.add_patch(Circle((0, 0), 1.0, fill=False, color=c["clipped"], ls="--"))
        close.add_patch(Rectangle((-1, -1), 2, 2, fill=False, color=c["tangent"], ls="--"))
        (self._ray,) = close.plot([], [], ":", color=c["point"], linewidth=1.5, label="g's line")
        self.moving(self._ray)
        self._by_norm = self.moving(plots.arrow(close, (0, 0), (1, 0), color=c["clipped"]))
        self._by_value = self.moving(plots.arrow(close, (0, 0), (1, 0), color=c["tangent"]))
        self._label_norm = self.moving(close.text(0, 0, "", color=c["clipped"], fontsize=11))
        self._label_value = self.moving(close.text(0, 0, "", color=c["tangent"], fontsize=11))
        close.plot([], [], color=c["clipped"], linewidth=2, label="by norm")
        close.plot([], [], color=c["tangent"], linewidth=2, label="by value")
        plots.legend(close, loc="lower left")
        return fig

    def compute(self, g1, g2, v):
        g = torch.tensor([float(g1), float(g2)], dtype=torch.float64)
        r = compare_clipping(g, float(v))
        headings = clipping.heading(torch.stack([g, r.by_norm, r.by_value])).tolist()
        return {
            "g1": float(g1),
            "g2": float(g2),
            "v": float(v),
            "norm": r.norm.item(),
            "by_norm_1": r.by_norm[0].item(),
            "by_norm_2": r.by_norm[1].item(),
            "by_value_1": r.by_value[0].item(),
            "by_value_2": r.by_value[1].item(),
            "heading": headings[0],
            "heading_by_norm": headings[1],
            "heading_by_value": headings[2],
            "angle_by_norm": r.angle_by_norm.item(),
            "angle_by_value": r.angle_by_value.item(),
        }

    def draw(self, s):
        v = s["v"]
        self._ball.set_radius(v)
        self._box.set_bounds(-v, -v, 2 * v, 2 * v)
        plots.move_arrow(self._g, (0, 0), (s["g1"], s["g2"]))
        norm = s["norm"]
        if norm > 0:  # the dashed ray: g's direction, across the whole close-up
            u = np.array([s["g1"], s["g2"]]) / norm * 2 * ZOOM
            self._ray.set_data([-u[0], u[0]], [-u[1], u[1]])
        else:
            self._ray.set_data([], [])
        n = (s["by_norm_1"] / v, s["by_norm_2"] / v)
        b = (s["by_value_1"] / v, s["by_value_2"] / v)
        plots.move_arrow(self._by_norm, (0, 0), n)
        plots.move_arrow(self._by_value, (0, 0), b)
        for text, tip, angle in (
            (self._label_norm, n, s["angle_by_norm"]),
            (self._label_value, b, s["angle_by_value"]),
        ):
            shown = "" if math.isnan(angle) else f"{angle:.1f}°"
            text.set_text(shown)
            text.set_position((1.05 * tip[0] + 0.04, 1.05 * tip[1] + 0.06))
