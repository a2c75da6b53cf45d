"""Properties of the clipping rules, checked with hypothesis, and seed 003's worked example."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import clipkit

F64 = torch.float64
QUICK = settings(max_examples=60, deadline=None)

entries = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
vectors = st.lists(entries, min_size=1, max_size=12).map(lambda xs: torch.tensor(xs, dtype=F64))
vector_lists = st.lists(vectors, min_size=1, max_size=4)
thresholds = st.floats(1e-3, 1e3)


def _flat(g) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in ([g] if isinstance(g, torch.Tensor) else g)])


def _norm64(g) -> float:
    return math.sqrt(math.fsum(float(x) ** 2 for x in _flat(g)))


@QUICK
@given(vector_lists, thresholds)
def test_clip_by_norm_caps_the_norm_and_keeps_the_direction(g, v):
    out = clipkit.clip_by_norm(g, v)
    assert isinstance(out, list) and [t.shape for t in out] == [t.shape for t in g]
    assert _norm64(out) <= v * (1 + 1e-6)
    if _norm64(g) > 0:
        a, b = _flat(g), _flat(out)
        cosine = float(a @ b) / (_norm64(a) * _norm64(b))
        assert cosine >= 1 - 1e-6


@QUICK
@given(vector_lists, thresholds)
def test_clipping_twice_is_clipping_once(g, v):
    once = clipkit.clip_by_norm(g, v)
    twice = clipkit.clip_by_norm(once, v)
    for a, b in zip(once, twice, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=0)


@QUICK
@given(vector_lists, thresholds)
def test_below_the_threshold_the_input_comes_back_unchanged(g, v):
    if _norm64(g) > v * (1 - 1e-9):
        g = [t * (0.5 * v / _norm64(g)) for t in g]  # move it below the threshold
    out = clipkit.clip_by_norm(g, v)
    assert all(torch.equal(a, b) for a, b in zip(out, g, strict=True))
    assert all(a is not b for a, b in zip(out, g, strict=True))  # new tensors, not the inputs


@QUICK
@given(vectors, thresholds)
def test_above_the_threshold_the_norm_is_exactly_the_threshold(g, v):
    if _norm64(g) <= v:
        return
    assert _norm64(clipkit.clip_by_norm(g, v)) == pytest.approx(v, rel=1e-12)


@QUICK
@given(vector_lists, thresholds)
def test_clip_by_value_lies_in_the_box_and_keeps_the_entries_inside(g, v):
    out = clipkit.clip_by_value(g, v)
    for before, after in zip(g, out, strict=True):
        assert bool((after.abs() <= v).all())
        inside = before.abs() <= v
        assert torch.equal(after[inside], before[inside])
        assert torch.equal(after[~inside], v * before[~inside].sign())


@QUICK
@given(vector_lists, thresholds, st.sampled_from([1.0, 2.0, 3.0, math.inf]))
def test_the_in_place_clip_agrees_with_torch_on_random_gradients(g, v, p):
    ours = [torch.nn.Parameter(torch.zeros_like(t)) for t in g]
    theirs = [torch.nn.Parameter(torch.zeros_like(t)) for t in g]
    for a, b, t in zip(ours, theirs, g, strict=True):
        a.grad, b.grad = t.clone(), t.clone()
    got = clipkit.clip_grad_norm_(ours, v, p)
    want = torch.nn.utils.clip_grad_norm_(theirs, v, p)
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-300)
    for a, b in zip(ours, theirs, strict=True):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-6, atol=1e-300)
    assert float(clipkit.global_norm([a.grad for a in ours], p)) <= v * (1 + 1e-6)


@QUICK
@given(st.lists(st.lists(entries, min_size=3, max_size=3), min_size=1, max_size=6), thresholds)
def test_a_batch_clips_each_row_like_one_vector(rows, v):
    batch = torch.tensor(rows, dtype=F64)
    out = clipkit.clip_by_norm(batch, v, dim=-1)
    for row, got in zip(batch, out, strict=True):
        torch.testing.assert_close(got, clipkit.clip_by_norm(row, v), rtol=1e-12, atol=0)


# Seed 003: g = (10, 1) clipped at 1.


def test_seed_003_norm_is_10_05():
    g = torch.tensor([10.0, 1.0], dtype=F64)
    assert round(clipkit.global_norm(g).item(), 2) == 10.05
    assert clipkit.global_norm(g).item() == pytest.approx(math.sqrt(101), rel=1e-15)


def test_seed_003_clipping_by_norm_gives_0_995_and_0_0995():
    g = torch.tensor([10.0, 1.0], dtype=F64)
    by_norm = clipkit.clip_by_norm(g, 1.0)
    assert [round(x, 4) for x in by_norm.tolist()] == [0.995, 0.0995]
    torch.testing.assert_close(by_norm, g / math.sqrt(101), rtol=1e-15, atol=0)
    # torch's rule in place: the same to within its 1e-6 guard
    w = torch.nn.Parameter(torch.zeros(2, dtype=F64))
    w.grad = g.clone()
    clipkit.clip_grad_norm_([w], 1.0)
    assert [round(x, 4) for x in w.grad.tolist()] == [0.995, 0.0995]


def test_seed_003_clipping_by_value_gives_1_and_1():
    g = torch.tensor([10.0, 1.0], dtype=F64)
    assert clipkit.clip_by_value(g, 1.0).tolist() == [1.0, 1.0]
    w = torch.nn.Parameter(torch.zeros(2, dtype=F64))
    w.grad = g.clone()
    clipkit.clip_grad_value_([w], 1.0)
    assert w.grad.tolist() == [1.0, 1.0]


def test_seed_003_headings_are_5_71_5_71_and_45_degrees():
    g = torch.tensor([10.0, 1.0], dtype=F64)
    three = torch.stack([g, clipkit.clip_by_norm(g, 1.0), clipkit.clip_by_value(g, 1.0)])
    assert [round(h, 2) for h in clipkit.heading(three).tolist()] == [5.71, 5.71, 45.0]
    assert clipkit.heading(g).item() == pytest.approx(math.degrees(math.atan(0.1)), rel=1e-14)


def test_seed_003_value_clipping_turns_the_update_by_39_degrees():
    g = torch.tensor([10.0, 1.0], dtype=F64)
    turned = clipkit.angle_between(g, clipkit.clip_by_value(g, 1.0)).item()
    assert turned == pytest.approx(45.0 - math.degrees(math.atan(0.1)), abs=1e-12)
    assert clipkit.angle_between(g, clipkit.clip_by_norm(g, 1.0)).item() == pytest.approx(
        0.0, abs=1e-6
    )


@pytest.mark.parametrize("degrees", [1e-6, 0.5, 90.0, 179.9999])
def test_angle_between_is_accurate_at_every_angle(degrees):
    t = math.radians(degrees)
    a = torch.tensor([1.0, 0.0, 0.0], dtype=F64)
    b = torch.tensor([math.cos(t), math.sin(t), 0.0], dtype=F64) * 7
    assert clipkit.angle_between([a[:1], a[1:]], b).item() == pytest.approx(degrees, rel=1e-9)
