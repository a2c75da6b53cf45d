"""The shared look of every clipkit figure, and small drawing helpers.

Figures are plain :class:`matplotlib.figure.Figure` objects on the Agg canvas, never pyplot's:
nothing is registered with the inline backend, so a figure shows only where a widget puts it.

Colours are the Okabe-Ito palette, which stays distinct under the common colour-vision
deficiencies; maps are the perceptually uniform ``cividis`` (sequential) and ``viridis``.
Every axis gets a label with its unit, and every figure one caption line that says what to
look at.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch
from PIL import Image

# Okabe & Ito (2008), "Color Universal Design".
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
}

# One colour per role, the same in every notebook.
COLORS = {
    "loss": OKABE_ITO["blue"],
    "gradient": OKABE_ITO["vermillion"],
    "tangent": OKABE_ITO["orange"],
    "point": OKABE_ITO["black"],
    "step": OKABE_ITO["purple"],
    "plain": OKABE_ITO["vermillion"],
    "clipped": OKABE_ITO["blue"],
    "grow": OKABE_ITO["vermillion"],
    "fade": OKABE_ITO["sky_blue"],
    "reference": "#777777",
}
SEQUENTIAL_CMAP = "cividis"
DIVERGING_CMAP = "PuOr"  # colour-blind safe, for signed quantities
PERCEPTUAL_CMAP = "viridis"

FONT = {"title": 13, "label": 12, "tick": 10.5, "caption": 10.5, "legend": 10}
DPI = 90  # small PNGs: they cross the wire on every slider move


def new_figure(ncols: int = 1, width: float = 7.5, height: float = 3.6) -> tuple[Figure, list]:
    """A figure with ``ncols`` side-by-side axes, room for one caption line below."""
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    for ax in axes:
        ax.tick_params(labelsize=FONT["tick"])
        ax.grid(True, color="#dddddd", linewidth=0.8)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    return fig, list(axes)


def label(ax, xlabel: str, ylabel: str, title: str | None = None) -> None:
    """Axis labels (with units, e.g. ``"weight w (dimensionless)"``) and an optional title."""
    ax.set_xlabel(xlabel, fontsize=FONT["label"])
    ax.set_ylabel(ylabel, fontsize=FONT["label"])
    if title:
        ax.set_title(title, fontsize=FONT["title"])


def caption(fig: Figure, text: str):
    """The one line under the figure that tells the reader what to look at."""
    return fig.supxlabel(text, fontsize=FONT["caption"], style="italic", color="#333333")


def legend(ax, **kwargs):
    return ax.legend(fontsize=FONT["legend"], frameon=False, **kwargs)


def tangent_xy(x0: float, y0: float, slope: float, half_width: float) -> tuple[list, list]:
    """End points of the tangent of slope ``slope`` through (x0, y0), ``half_width`` each side."""
    return (
        [x0 - half_width, x0 + half_width],
        [y0 - slope * half_width, y0 + slope * half_width],
    )


def arrow(ax, start: Sequence[float], end: Sequence[float], color: str | None = None, **kwargs):
    """An arrow from ``start`` to ``end`` in data coordinates; move it with :func:`move_arrow`."""
    patch = FancyArrowPatch(
        tuple(start),
        tuple(end),
        arrowstyle="-|>",
        mutation_scale=16,
        linewidth=2,
        color=color or COLORS["step"],
        zorder=4,
        **kwargs,
    )
    ax.add_patch(patch)
    return patch


def move_arrow(patch: FancyArrowPatch, start: Sequence[float], end: Sequence[float]) -> None:
    patch.set_positions(tuple(start), tuple(end))


def trajectory(ax, xs, ys, color: str | None = None, label: str | None = None):
    """A path of iterates: a line through markers, the start marked larger."""
    (line,) = ax.plot(xs, ys, "-o", color=color, markersize=4, linewidth=1.5, label=label)
    return line


def set_trajectory(line, xs, ys) -> None:
    line.set_data(np.asarray(xs), np.asarray(ys))


def rgba_to_png(rgba) -> bytes:
    """Encode an (h, w, 4) uint8 RGBA buffer as an RGB PNG, fast (zlib level 1)."""
    buf = io.BytesIO()
    # matplotlib depends on Pillow, so this adds no dependency.
    Image.fromarray(np.asarray(rgba)[..., :3]).save(buf, format="png", compress_level=1)
    return buf.getvalue()


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes at its own dpi, drawn by Agg (no pyplot, no display)."""
    buf = io.BytesIO()
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.print_png(buf)
    return buf.getvalue()
