"""The demos that ``make bench`` times, with the control settings it walks through.

``DEMOS`` is a list of ``(name, factory, settings)``: ``factory()`` builds a demo, and each
dict in ``settings`` is passed to ``demo.update(**values)``, one timed slider move each. The
bench reports the median; the bar is 100 ms on the CPU. Append a line for every new demo.
"""

from __future__ import annotations

from clipkit.widgets.cliff_step import CliffStepDemo
from clipkit.widgets.drift import DIMS, THRESHOLDS, SignDriftDemo
from clipkit.widgets.exponential import ExponentialDemo
from clipkit.widgets.growth import PowerGrowthDemo
from clipkit.widgets.landscape_runs import Figure1017Demo, RNNUnitDemo
from clipkit.widgets.one_weight import OneWeightCliffDemo
from clipkit.widgets.ravine import RavineDemo
from clipkit.widgets.saddle import SaddleDemo
from clipkit.widgets.training import ThresholdDemo, TrainingDemo
from clipkit.widgets.two_entry import TwoEntryClipDemo
from clipkit.widgets.wander import WanderingGradientDemo


def _sweep(name: str, lo: float, hi: float, n: int = 25) -> list[dict]:
    return [{name: lo + (hi - lo) * i / (n - 1)} for i in range(n)]


DEMOS = [
    ("01 power growth: radius", PowerGrowthDemo, _sweep("radius", 0.6, 1.4)),
    ("01 power growth: steps", PowerGrowthDemo, [{"steps": s} for s in range(4, 101, 4)]),
    ("01 one-weight cliff: w", OneWeightCliffDemo, _sweep("w", 0.0, 1.2)),
    ("01 cliff step: start", CliffStepDemo, _sweep("start", 0.0, 1.15)),
    ("01 cliff step: lr", CliffStepDemo, _sweep("lr", 0.01, 0.5)),
    ("04 two-entry clip: v", TwoEntryClipDemo, _sweep("v", 0.1, 5.0)),
    ("04 two-entry clip: g2", TwoEntryClipDemo, _sweep("g2", -12.0, 12.0)),
    (
        "04 wandering gradient: frame",
        WanderingGradientDemo,
        [{"frame": f} for f in range(0, 240, 10)],
    ),
    ("04 wandering gradient: v", WanderingGradientDemo, _sweep("v", 0.25, 3.0)),
    ("04 sign drift: v", SignDriftDemo, [{"v": v} for v in THRESHOLDS]),
    ("04 sign drift: d", SignDriftDemo, [{"d": d} for d in DIMS]),
    ("03 training: step", TrainingDemo, [{"step": s} for s in range(4, 101, 4)]),
    ("03 threshold: v", ThresholdDemo, [{"threshold": 10 ** (i / 6 - 2)} for i in range(25)]),
    ("03 threshold: reduction", ThresholdDemo, [{"reduction": r} for r in ("sum", "mean") * 5]),
    ("02 exponential: x", ExponentialDemo, _sweep("x", -4.0, 1.0)),
    ("02 exponential: a", ExponentialDemo, _sweep("a", 0.25, 3.0)),
    ("02 saddle: start y", SaddleDemo, _sweep("y0", -1.8, 1.8)),
    ("02 saddle: steps", SaddleDemo, [{"steps": s} for s in range(1, 41, 2)]),
    ("02 ravine: step size", RavineDemo, _sweep("lr", 0.002, 0.045)),
    ("02 ravine: momentum", RavineDemo, _sweep("momentum", 0.0, 0.99)),
    ("02 ravine: steps", RavineDemo, [{"steps": s} for s in range(10, 401, 20)]),
    ("03 figure 10.17: step size", Figure1017Demo, _sweep("step_size", 0.01, 0.5)),
    ("03 figure 10.17: threshold", Figure1017Demo, _sweep("max_norm", 0.1, 5.0)),
    ("03 one-unit net: step size", RNNUnitDemo, _sweep("step_size", 0.25, 2.0, 8)),
    ("03 one-unit net: threshold", RNNUnitDemo, _sweep("max_norm", 0.1, 1.0, 10)),
]
