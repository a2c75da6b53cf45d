"""One display bundle for a widget tree, identical under ipywidgets 7.7 and 8.

A front end with a widget manager (JupyterLab, Notebook, Colab) shows the live widget; a static
render (nbviewer, GitHub, a notebook reopened without widget state) falls back to the PNG and
the plain text that travel in the same bundle.
"""

from __future__ import annotations

import base64

import ipywidgets

WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"


def widget_bundle(widget: ipywidgets.Widget, text: str, png: bytes | None = None) -> dict:
    """The mimebundle that shows ``widget``, with ``text`` (and ``png``) as fallbacks."""
    bundle = {
        "text/plain": text,
        # Protocol 2.0 is what both ipywidgets 7.7 and 8 write for a view of a model.
        WIDGET_VIEW_MIME: {"version_major": 2, "version_minor": 0, "model_id": widget.model_id},
    }
    if png is not None:
        bundle["image/png"] = base64.b64encode(png).decode("ascii")
    return bundle
