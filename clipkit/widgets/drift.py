"""Demo: in many dimensions value clipping drifts toward sign(g), by Monte Carlo."""

from __future__ import annotations

import math

import ipywidgets
import torch

from clipkit import plots
from clipkit.compare import (
    gaussian_value_clip_cosine_limit,
    sign_cosine_limit,
    value_clip_cosine,
)
from clipkit.widgets.demo import _SLIDER_LAYOUT, _SLIDER_STYLE, Demo

DIMS = (1, 2, 3, 5, 8, 13, 20, 32, 50, 80, 128, 200, 320, 512, 800, 1280)
THRESHOLDS = tuple(round(10 ** (k / 8), 4) for k in range(-16, 9))  # 0.01 to 10, 8 a decade
N_SAMPLES = 128


class SignDriftDemo(Demo):
    """Sliders pick the dimension d and the threshold v from a precomputed grid.

    The grid is one call to :func:`clipkit.compare.value_clip_cosine` in the constructor:
    ``N_SAMPLES`` Gaussian gradients with entries of scale 1 (so ``v`` is in units of the
    entries' standard deviation), every dimension in ``DIMS`` and threshold in ``THRESHOLDS``.
    Left: the cosine against d for the chosen v, with its d -> infinity limit (closed form) and
    the cosine of sign(g). Right: the cosine against v for the chosen d, with the closed-form
    limit for large d; toward small v both reach sqrt(2/pi) = 0.798, the sign vector's cosine.
    """

    caption = (
        "As v falls, clip(g, v) becomes v sign(g): in many dimensions, cosine sqrt(2/π) ≈ 0.80."
    )
    readout_fields = (
        ("d", "dimension d", "d"),
        ("v", "threshold v", ".3g"),
        ("cosine", "cos(clip(g), g)", ".3f"),
        ("angle", "angle (°)", ".1f"),
        ("limit", "large-d limit", ".3f"),
        ("sign_cosine", "cos(sign(g), g) at d", ".3f"),
    )

    def __init__(self, *, seed: int = 0, device: torch.device | str | None = None, **initial):
        gen = torch.Generator(device=device or "cpu").manual_seed(seed)
        self.grid = value_clip_cosine(DIMS, THRESHOLDS, N_SAMPLES, generator=gen, device=device)
        self._by_value = self.grid.by_value.double().cpu().numpy()  # (D, T), for the plots
        self._sign = self.grid.sign.double().cpu().numpy()
        self._limit = gaussian_value_clip_cosine_limit(THRESHOLDS).numpy()
        super().__init__(**initial)

    def build_controls(self):
        def slider(description, options, value):
            return ipywidgets.SelectionSlider(
                options=list(options),
                value=value,
                description=description,
                style=_SLIDER_STYLE,
                layout=ipywidgets.Layout(**_SLIDER_LAYOUT),
            )

        return {"d": slider("dimension d", DIMS, 200), "v": slider("threshold v", THRESHOLDS, 1.0)}

    def build_figure(self):
        fig, (by_d, by_v) = plots.new_figure(ncols=2, width=8.5, height=3.8)
        c = plots.COLORS
        sign_limit = sign_cosine_limit()
        for ax in (by_d, by_v):
            ax.set_xscale("log")
            ax.set_ylim(0.7, 1.01)
            ax.axhline(sign_limit, color=c["reference"], ls=":", linewidth=1.2)
        by_d.plot(DIMS, self._sign, "-", color=c["reference"], linewidth=1.5, label="sign(g)")
        (self._curve_d,) = by_d.plot([], [], "-o", color=c["tangent"], ms=3, label="clip(g, v)")
        (self._limit_d,) = by_d.plot([], [], "--", color=c["clipped"], label="limit, d → ∞")
        (self._mark_d,) = by_d.plot([], [], "o", color=c["point"], markersize=8)
        by_d.set_xlim(DIMS[0] * 0.8, DIMS[-1] * 1.25)
        plots.label(by_d, "dimension d", "cosine with g", "against dimension, v fixed")
        plots.legend(by_d, loc="upper right")
        by_v.plot(THRESHOLDS, self._limit, "--", color=c["clipped"], label="limit, d → ∞")
        (self._curve_v,) = by_v.plot([], [], "-o", color=c["tangent"], ms=3, label="clip(g, v)")
        (self._mark_v,) = by_v.plot([], [], "o", color=c["point"], markersize=8)
        by_v.set_xlim(THRESHOLDS[0] * 0.8, THRESHOLDS[-1] * 1.25)
        plots.label(by_v, "threshold v (entry std. devs)", "cosine with g", "against v, d fixed")
        plots.legend(by_v, loc="lower right")
        by_d.text(DIMS[-1], sign_limit - 0.018, "sqrt(2/π)", color=c["reference"], ha="right")
        for artist in (self._curve_d, self._limit_d, self._mark_d, self._curve_v, self._mark_v):
            self.moving(artist)
        return fig

    def compute(self, d, v):
        i, j = DIMS.index(int(d)), THRESHOLDS.index(float(v))
        cosine = float(self._by_value[i, j])
        return {
            "d": int(d),
            "v": float(v),
            "cosine": cosine,
            "angle": math.degrees(math.acos(min(1.0, cosine))),
            "limit": float(self._limit[j]),
            "sign_cosine": float(self._sign[i]),
            "sign_limit": sign_cosine_limit(),
        }

    def draw(self, s):
        i, j = DIMS.index(s["d"]), THRESHOLDS.index(s["v"])
        self._curve_d.set_data(DIMS, self._by_value[:, j])
        self._limit_d.set_data([DIMS[0], DIMS[-1]], [self._limit[j]] * 2)
        self._mark_d.set_data([s["d"]], [s["cosine"]])
        self._curve_v.set_data(THRESHOLDS, self._by_value[i])
        self._mark_v.set_data([s["v"]], [s["cosine"]])
