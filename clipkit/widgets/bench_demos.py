"""The demos that ``make bench`` times, with the control settings it walks through.

``DEMOS`` is a list of ``(name, factory, settings)``: ``factory()`` builds a demo, and each
dict in ``settings`` is passed to ``demo.update(**values)``, one timed slider move each. The
bench reports the median; the bar is 100 ms on the CPU. Append a line for every new demo.
"""

from __future__ import annotations

from clipkit.widgets.cliff_step import CliffStepDemo
from clipkit.widgets.growth import PowerGrowthDemo
from clipkit.widgets.one_weight import OneWeightCliffDemo


def _sweep(name: str, lo: float, hi: float, n: int = 25) -> list[dict]:
    return [{name: lo + (hi - lo) * i / (n - 1)} for i in range(n)]


DEMOS = [
    ("01 power growth: radius", PowerGrowthDemo, _sweep("radius", 0.6, 1.4)),
    ("01 power growth: steps", PowerGrowthDemo, [{"steps": s} for s in range(4, 101, 4)]),
    ("01 one-weight cliff: w", OneWeightCliffDemo, _sweep("w", 0.0, 1.2)),
    ("01 cliff step: start", CliffStepDemo, _sweep("start", 0.0, 1.15)),
    ("01 cliff step: lr", CliffStepDemo, _sweep("lr", 0.01, 0.5)),
]
