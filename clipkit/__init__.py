"""clipkit: the shared math, widgets and plots behind the notebooks on Section 10.11 of
*Deep Learning* (Goodfellow, Bengio and Courville, 2016)."""

from clipkit.device import default_device

__version__ = "0.1.0"

__all__ = ["default_device"]
