"""Checks that every demo's tests can share.

>>> from clipkit.widgets.one_weight import OneWeightCliffDemo
>>> stale_pixel_share(OneWeightCliffDemo(w=1.05)) < 0.01
True
"""

from __future__ import annotations

import numpy as np

from clipkit.widgets.demo import Demo


def stale_pixel_share(demo: Demo) -> float:
    """The share of pixels in which the blitted picture differs from a full redraw.

    A demo whose ``draw`` changes an artist it did not register with :meth:`Demo.moving` shows
    a stale picture, and this share grows. Drawing order differs (moving artists are drawn
    last), so a few anti-aliased pixels may differ: test for a share below 0.01. The demo is
    left as it was.
    """
    blitted = np.asarray(demo.fig.canvas.buffer_rgba()).copy()
    for artist in demo._moving:
        artist.set_animated(False)
    try:
        demo.fig.canvas.draw()
        full = np.asarray(demo.fig.canvas.buffer_rgba()).copy()
    finally:
        for artist in demo._moving:
            artist.set_animated(True)
        demo.invalidate_background()
        demo.update()
    return float(np.mean(np.any(blitted != full, axis=-1)))
