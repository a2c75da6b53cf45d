"""The base of every interactive demo: controls, one figure, a readout, and ``update``.

A subclass says which controls it has (:meth:`Demo.build_controls`), draws its artists once
(:meth:`Demo.build_figure`), computes the numbers through clipkit's math (:meth:`Demo.compute`)
and moves the artists to them (:meth:`Demo.draw`, with ``set_data``, ``set_ydata``,
``set_offsets``; never a new figure). The base wires the rest:

* a slider move calls :meth:`Demo.update`, which recomputes, redraws, re-renders the PNG shown
  in an :class:`ipywidgets.Image` and rewrites the readout;
* the artists that move are registered with :meth:`Demo.moving`; everything else is drawn once
  into a cached background, and an update blits only the moving artists on top of it (a full
  redraw of a two-panel figure costs ~100 ms of Agg time, a blit a few ms);
* :attr:`Demo.state` is the dict of the numbers on screen, so tests drive a demo by setting
  ``demo.controls[name].value`` and reading ``state``, with no browser and no kernel;
* displaying the demo sends the live widget and, for static renders, a PNG of the figure.

DOM contract (the browser test relies on it): the root box has class ``clipkit-demo``, the
figure ``clipkit-figure`` and the readout ``clipkit-readout``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any, ClassVar

import ipywidgets
from matplotlib.figure import Figure

from clipkit import plots
from clipkit.widgets.display import widget_bundle

ROOT_CLASS = "clipkit-demo"
FIGURE_CLASS = "clipkit-figure"
READOUT_CLASS = "clipkit-readout"

_SLIDER_STYLE = {"description_width": "initial"}
_SLIDER_LAYOUT = {"width": "360px"}


def _styled(cls, description: str, **kw):
    """A slider of class ``cls`` with clipkit's look: the label in full, one width for all."""
    return cls(
        description=description,
        style=_SLIDER_STYLE,
        layout=ipywidgets.Layout(**_SLIDER_LAYOUT),
        **kw,
    )


def float_slider(description: str, value: float, lo: float, hi: float, step: float, **kw):
    """A FloatSlider with clipkit's look; ``readout_format`` etc. pass through."""
    return _styled(
        ipywidgets.FloatSlider, description, value=value, min=lo, max=hi, step=step, **kw
    )


def log_slider(description: str, value: float, lo: float, hi: float, **kw):
    """A FloatLogSlider from ``lo`` to ``hi`` (values, not exponents), base 10."""
    return _styled(
        ipywidgets.FloatLogSlider,
        description,
        value=value,
        base=10,
        min=math.log10(lo),
        max=math.log10(hi),
        step=kw.pop("step", 0.01),
        **kw,
    )


def int_slider(description: str, value: int, lo: int, hi: int, step: int = 1, **kw):
    """An IntSlider with clipkit's look."""
    return _styled(ipywidgets.IntSlider, description, value=value, min=lo, max=hi, step=step, **kw)


class Demo:
    """Base class; see the module's docstring. ``Demo(**initial)`` sets controls first."""

    #: the line under the figure that says what to look at
    caption: ClassVar[str] = ""
    #: ``(state key, label, format)`` for each number in the readout, in order
    readout_fields: ClassVar[tuple[tuple[str, str, str], ...]] = ()

    def __init__(self, **initial: Any):
        self.controls: dict[str, ipywidgets.ValueWidget] = self.build_controls()
        self._check_names(initial)
        for name, value in initial.items():
            self.controls[name].value = value
        self._moving: list = []
        self._background = None
        self.fig: Figure = self.build_figure()
        if self.caption:
            plots.caption(self.fig, self.caption)
        self.figure = ipywidgets.Image(format="png", layout=ipywidgets.Layout(max_width="100%"))
        self.figure.add_class(FIGURE_CLASS)
        self.readout = ipywidgets.HTML()
        self.readout.add_class(READOUT_CLASS)
        self.root = ipywidgets.VBox(
            [self.control_box(), self.figure, self.readout],
        )
        self.root.add_class(ROOT_CLASS)
        self.state: dict[str, float] = {}
        self._holding = False
        for control in self.controls.values():
            control.observe(self._on_control, names="value")
        self.update()

    # --- for subclasses -------------------------------------------------------------------
    def build_controls(self) -> dict[str, ipywidgets.ValueWidget]:
        raise NotImplementedError

    def build_figure(self) -> Figure:
        """Make the figure and its artists (stored on ``self``) once.

        Pass every artist that :meth:`draw` changes through :meth:`moving`.
        """
        raise NotImplementedError

    def moving(self, artist):
        """Register ``artist`` as one that :meth:`draw` moves; returns it."""
        artist.set_animated(True)  # left out of the cached background
        self._moving.append(artist)
        return artist

    def invalidate_background(self) -> None:
        """Call after changing a static artist (limits, a fixed curve): the next render redraws."""
        self._background = None

    def compute(self, **values: Any) -> dict[str, float]:
        """The numbers to show, from the control values, through clipkit's math."""
        raise NotImplementedError

    def draw(self, state: dict[str, float]) -> None:
        """Move the artists to ``state``; never create a new figure."""
        raise NotImplementedError

    def control_box(self) -> ipywidgets.Widget:
        """How the controls are laid out (a wrapping row by default)."""
        return ipywidgets.HBox(
            list(self.controls.values()), layout=ipywidgets.Layout(flex_flow="row wrap")
        )

    # --- the machinery --------------------------------------------------------------------
    def _check_names(self, values: dict) -> None:
        unknown = set(values) - set(self.controls)
        if unknown:
            raise TypeError(
                f"{type(self).__name__} has no control {sorted(unknown)}; "
                f"its controls are {sorted(self.controls)}"
            )

    def values(self) -> dict[str, Any]:
        """The current value of every control."""
        return {name: control.value for name, control in self.controls.items()}

    def update(self, **values: Any) -> dict[str, float]:
        """Set any given controls, recompute, redraw; return the new :attr:`state`."""
        self._check_names(values)
        self._holding = True  # one redraw for several controls, not one each
        try:
            for name, value in values.items():
                self.controls[name].value = value
        finally:
            self._holding = False
        self.state = self.compute(**self.values())
        self.draw(self.state)
        self.figure.value = self.png()
        self.readout.value = self.readout_html(self.state)
        return self.state

    def png(self) -> bytes:
        """The figure as on screen: the cached background with the moving artists on top."""
        canvas = self.fig.canvas
        if not self._moving:  # nothing registered: no blitting, draw everything each time
            canvas.draw()
        elif self._background is None:
            canvas.draw()  # runs the layout once and draws everything that is not moving
            self.fig.set_layout_engine("none")  # keep that layout from now on
            self._background = canvas.copy_from_bbox(self.fig.bbox)
        else:
            canvas.restore_region(self._background)
        for artist in self._moving:
            self.fig.draw_artist(artist)
        return plots.rgba_to_png(canvas.buffer_rgba())

    def _on_control(self, change: dict) -> None:
        if not self._holding:
            self.update()

    def readout_html(self, state: dict[str, float]) -> str:
        cells = " &nbsp;·&nbsp; ".join(
            f"{html.escape(label)} = <b>{format(state[key], fmt)}</b>"
            for key, label, fmt in self.readout_fields
        )
        return f'<div style="font-size: 1.05em">{cells}</div>'

    def readout_text(self) -> str:
        return "; ".join(
            f"{label} = {format(self.state[key], fmt)}" for key, label, fmt in self.readout_fields
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        text = f"{type(self).__name__}: {self.readout_text()}"
        return widget_bundle(self.root, text, png=self.figure.value)

    def close(self) -> None:
        """Close every widget of the demo (the figure needs nothing: pyplot never saw it)."""
        stack = [self.root]
        while stack:
            widget = stack.pop()
            stack.extend(getattr(widget, "children", ()))
            widget.close()


DemoFactory = Callable[..., Demo]
