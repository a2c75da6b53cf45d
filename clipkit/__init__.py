"""clipkit: the shared math, widgets and plots behind the notebooks on Section 10.11 of
*Deep Learning* (Goodfellow, Bengio and Courville, 2016).

The clipping functions are importable from here (``clipkit.clip_grad_norm_``); their list is
``clipkit.clipping.__all__``, kept in one place.
"""

from clipkit import clipping
from clipkit.clipping import *  # noqa: F403
from clipkit.device import default_device

__version__ = "0.1.0"

__all__ = [*clipping.__all__, "default_device"]
