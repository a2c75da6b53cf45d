"""clipkit: the shared math, widgets and plots behind the notebooks on Section 10.11 of
*Deep Learning* (Goodfellow, Bengio and Courville, 2016)."""

from clipkit.clipping import (
    angle_between,
    clip_by_norm,
    clip_by_value,
    clip_grad_norm_,
    clip_grad_norm_per_group_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
    global_norm,
    heading,
)
from clipkit.device import default_device

__version__ = "0.1.0"

__all__ = [
    "angle_between",
    "clip_by_norm",
    "clip_by_value",
    "clip_grad_norm_",
    "clip_grad_norm_per_group_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "default_device",
    "get_total_norm",
    "global_norm",
    "heading",
]
