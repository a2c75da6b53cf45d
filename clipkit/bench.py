"""``make bench``: speed and accuracy against the bars in DESIGN.md, as ratios from one run.

Two parts, each a function that prints its table and returns how many of its bars it missed:

* :func:`clipping_report`: ``clipkit.clip_grad_norm_`` against ``torch.nn.utils`` on about
  200 MB of float32 gradients in 190 tensors of mixed sizes (seeded), when no clipping is
  needed and when it is, and against one plain read of the same bytes (``flat.sum()``); plus
  each norm's relative error against a float64 reference.
* :func:`demo_latency_report`: the median time of one slider move for every demo listed in
  ``clipkit.widgets.bench_demos.DEMOS``, against the 100 ms bar.

Ratios, not absolute times, are the bars, because both sides of a ratio run on the same
machine in the same minute; the runs are interleaved and each time is a median of several
repeats after a warm-up, so a noisy neighbour moves both sides alike. Run it on a quiet
machine all the same. Never used by a test: timing has no place in a pass/fail unit test.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import time
from collections.abc import Callable

import torch

import clipkit

MB = 1 << 20
GRADIENT_BYTES = 200 * MB
TENSORS = 190
REPEATS = 15
MIN_REPEATS = 7
WARMUP = 2
BUDGET_S = 12.0  # seconds per case, warm-up included, before the repeats are cut short
DEMO_BAR_MS = 100.0

# Bars from DESIGN.md, "Speed and accuracy": (label, measured key, limit)
BARS = [
    ("no clip: clipkit / torch", "noclip_vs_torch", 0.5),
    ("no clip: clipkit / plain read", "noclip_vs_read", 1.5),
    ("clip:    clipkit / torch", "clip_vs_torch", 0.85),
    ("norm error, clipkit (rel. to float64)", "clipkit_error", 5e-6),
]


def make_gradients(total_bytes: int = GRADIENT_BYTES, count: int = TENSORS, seed: int = 0):
    """``count`` float32 tensors of mixed shapes and scales, ``total_bytes`` in all, seeded.

    Sizes are log-uniform from a bias (a few hundred entries) to a large matrix (millions), and
    each tensor has its own scale, as a real network's gradients do.
    """
    gen = torch.Generator().manual_seed(seed)
    logs = torch.empty(count).uniform_(math.log(256), math.log(4e6), generator=gen)
    raw = logs.exp()
    sizes = (raw * (total_bytes / 4) / raw.sum()).long().clamp(min=1).tolist()
    scales = torch.empty(count).uniform_(-3, 1, generator=gen).exp().tolist()
    grads = []
    for n, s in zip(sizes, scales, strict=True):
        g = torch.randn(n, generator=gen).mul_(s)
        cols = next((c for c in (1024, 512, 256, 64) if n % c == 0), 1)
        grads.append(g.view(n // cols, cols) if cols > 1 else g)  # matrices where they fit
    return grads


def _median_ms(runs: dict[str, Callable[[], object]], reset: Callable[[], None] | None = None):
    """Median wall time of each run, in ms; the runs take turns, ``reset`` untimed before each.

    ``REPEATS`` rounds after ``WARMUP``, or fewer (never under ``MIN_REPEATS``) once a case has
    used ``BUDGET_S``: a crowded machine slows torch's clip to a second or more a call.
    """
    times: dict[str, list[float]] = {name: [] for name in runs}
    began = time.perf_counter()
    for i in range(WARMUP + REPEATS):
        for name, run in runs.items():
            if reset is not None:
                reset()
            start = time.perf_counter()
            run()
            elapsed = time.perf_counter() - start
            if i >= WARMUP:
                times[name].append(elapsed * 1e3)
        if i + 1 >= WARMUP + MIN_REPEATS and time.perf_counter() - began > BUDGET_S:
            break
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    medians["repeats"] = len(next(iter(times.values())))
    return medians


def _mark(value: float, limit: float) -> str:
    return "PASS" if value <= limit else "FAIL"


def clipping_report() -> int:
    """Print the clipping bars and return how many were missed."""
    grads = make_gradients()
    nbytes = sum(g.numel() * g.element_size() for g in grads)
    params = []
    for g in grads:
        p = torch.nn.Parameter(torch.empty(g.shape))  # never written: costs no memory
        p.grad = g
        params.append(p)
    master = [g.clone() for g in grads]
    flat = torch.cat([g.reshape(-1) for g in grads])
    exact = math.sqrt(
        math.fsum(torch.dot(g.double().view(-1), g.double().view(-1)).item() for g in grads)
    )

    def reset() -> None:  # untimed
        torch._foreach_copy_(grads, master)

    ours = clipkit.clip_grad_norm_(params, math.inf)
    theirs = torch.nn.utils.clip_grad_norm_(params, math.inf)
    measured = {
        "clipkit_error": abs(ours.item() - exact) / exact,
        "torch_error": abs(theirs.item() - exact) / exact,
    }
    big, small = 10 * exact, exact / 10
    noclip = _median_ms(
        {
            "clipkit": lambda: clipkit.clip_grad_norm_(params, big),
            "torch": lambda: torch.nn.utils.clip_grad_norm_(params, big),
            "read": lambda: flat.sum(),
        }
    )
    clip = _median_ms(
        {
            "clipkit": lambda: clipkit.clip_grad_norm_(params, small),
            "torch": lambda: torch.nn.utils.clip_grad_norm_(params, small),
        },
        reset=reset,
    )
    reset()
    clipkit.clip_grad_norm_(params, small)
    clipped = clipkit.get_total_norm(grads).item()
    if abs(clipped - small) > 1e-5 * small:  # a bench that times a no-op would be worthless
        raise AssertionError(f"clipkit clipped to {clipped}, not {small}")
    measured["noclip_vs_torch"] = noclip["clipkit"] / noclip["torch"]
    measured["noclip_vs_read"] = noclip["clipkit"] / noclip["read"]
    measured["clip_vs_torch"] = clip["clipkit"] / clip["torch"]

    print(f"clip_grad_norm_ on {nbytes / MB:.0f} MB of float32 gradients in {len(grads)} tensors,")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, runs interleaved, "
        f"load average {load:.1f} on {os.cpu_count()} cores"
    )
    print(
        f"  no clip: clipkit {noclip['clipkit']:.1f} ms, torch {noclip['torch']:.1f} ms, "
        f"plain read {noclip['read']:.1f} ms (medians of {noclip['repeats']})"
    )
    print(
        f"  clip:    clipkit {clip['clipkit']:.1f} ms, torch {clip['torch']:.1f} ms "
        f"(medians of {clip['repeats']}; gradients restored, untimed, before each)"
    )
    missed = 0
    for label, key, limit in BARS:
        value = measured[key]
        shown = f"{value:.2e}" if "error" in key else f"{value:.3f}"
        print(f"  {label:<40} {shown:>9}  (bar <= {limit:g})  {_mark(value, limit)}")
        missed += value > limit
    label = "norm error, torch (rel. to float64)"
    print(f"  {label:<40} {measured['torch_error']:>9.2e}  (for reference)")
    return missed


def demo_latency_report() -> int:
    """Print each registered demo's median update time against 100 ms; return the misses."""
    os.environ.setdefault("MPLBACKEND", "Agg")  # no window: the demos render to PNG bytes
    try:
        from clipkit.widgets.bench_demos import DEMOS
    except ModuleNotFoundError as err:
        if err.name not in ("clipkit.widgets", "clipkit.widgets.bench_demos"):
            raise
        print("demo latency: no demos registered yet (clipkit.widgets.bench_demos)")
        return 0
    print(f"demo latency: median of one update per slider move (bar <= {DEMO_BAR_MS:g} ms)")
    missed = 0
    built = {}
    # In notebook order: the names start with the notebook's number.
    for name, factory, settings in sorted(DEMOS, key=lambda row: row[0][:2]):
        if factory not in built:  # several rows may drive one demo through different sliders
            built[factory] = factory()
        demo = built[factory]
        for values in settings[:WARMUP]:
            demo.update(**values)
        times = []
        for values in settings:
            start = time.perf_counter()
            demo.update(**values)
            times.append((time.perf_counter() - start) * 1e3)
        median = statistics.median(times)
        print(f"  {name:<40} {median:7.1f} ms  {_mark(median, DEMO_BAR_MS)}")
        missed += median > DEMO_BAR_MS
    for demo in built.values():
        close = getattr(demo, "close", None)
        if close is not None:
            close()
    return missed


def main() -> int:
    start = time.perf_counter()
    missed = clipping_report()
    print()
    missed += demo_latency_report()
    print(f"\n{missed} bar(s) missed; {time.perf_counter() - start:.0f} s in all")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
