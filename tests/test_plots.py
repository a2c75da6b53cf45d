"""clipkit.plots: the shared style and helpers, drawn off-screen with no pyplot state."""

from __future__ import annotations

import io

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_rgb
from PIL import Image

from clipkit import plots

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_palette_is_okabe_ito_and_roles_use_it():
    assert len(set(plots.OKABE_ITO.values())) == 8
    palette = set(plots.OKABE_ITO.values()) | {plots.COLORS["reference"]}
    assert set(plots.COLORS.values()) <= palette
    for colour in plots.COLORS.values():
        to_rgb(colour)  # a valid colour


def test_new_figure_is_invisible_to_pyplot_and_renders_png():
    fig, axes = plots.new_figure(ncols=2)
    assert len(axes) == 2 and plt.get_fignums() == []
    plots.label(axes[0], "weight w", "loss L(w)", "title")
    plots.caption(fig, "look here")
    data = plots.png_bytes(fig)
    assert data.startswith(PNG_MAGIC)
    width, height = Image.open(io.BytesIO(data)).size
    assert (width, height) == (round(7.5 * plots.DPI), round(3.6 * plots.DPI))


def test_rgba_to_png_keeps_the_pixels():
    rgba = np.zeros((4, 6, 4), dtype=np.uint8)
    rgba[..., 0] = 200
    rgba[..., 3] = 255
    back = np.asarray(Image.open(io.BytesIO(plots.rgba_to_png(rgba))))
    assert back.shape == (4, 6, 3) and (back[..., 0] == 200).all()


@pytest.mark.parametrize("slope", [0.0, 2.41, -13.8])
def test_tangent_passes_through_the_point_with_the_slope(slope):
    (x0, x1), (y0, y1) = plots.tangent_xy(0.9, 0.11, slope, half_width=0.2)
    assert (y1 - y0) / (x1 - x0) == pytest.approx(slope)
    assert ((x0 + x1) / 2, (y0 + y1) / 2) == pytest.approx((0.9, 0.11))


def test_arrow_and_trajectory_move_in_place():
    fig, (ax,) = plots.new_figure()
    arrow = plots.arrow(ax, (0, 0), (1, 1))
    plots.move_arrow(arrow, (0.5, 0.5), (2, 3))
    assert arrow in ax.patches
    line = plots.trajectory(ax, [0, 1], [0, 1], label="plain")
    plots.set_trajectory(line, [0, 1, 2], [3, 4, 5])
    assert list(line.get_xdata()) == [0, 1, 2] and list(line.get_ydata()) == [3, 4, 5]
    plots.png_bytes(fig)  # draws without error
