"""clipkit.caveats against independent references: torch.nn.utils one vector at a time,
numpy in float64, and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from references import np_angle, torch_clip_norm

from clipkit import caveats

F64 = torch.float64


# --- the book's caveat: clip each, then average ----------------------------------------------


def test_clip_then_average_matches_torch_one_example_at_a_time():
    gen = torch.Generator().manual_seed(12)
    grads = torch.randn(6, 4, generator=gen, dtype=F64) * torch.tensor(
        [[0.2], [3], [0.5], [8], [1], [0.1]], dtype=F64
    )
    r = caveats.clip_then_average(grads, 1.0)
    clipped = torch.stack([torch_clip_norm(g, 1.0) for g in grads])
    # torch divides by norm + 1e-6, the book by the norm: 1e-6 of each row's size at most
    torch.testing.assert_close(r.mean_of_clipped, clipped.mean(0), rtol=0, atol=1e-6)
    torch.testing.assert_close(
        r.clipped_mean, torch_clip_norm(grads.mean(0), 1.0), rtol=1e-6, atol=0
    )
    norms = grads.norm(dim=1)
    scales = torch.clamp(1.0 / norms, max=1.0)
    torch.testing.assert_close(r.scales, scales)
    torch.testing.assert_close(r.weights, scales / scales.sum())
    # the weights rebuild the mean of clipped rows: sum_i w_i g_i, times the mean scale
    torch.testing.assert_close(
        (r.weights[:, None] * grads).sum(0) * scales.mean(), r.mean_of_clipped
    )
    assert r.angle.item() == pytest.approx(np_angle(r.mean_of_clipped, r.mean), abs=1e-6)


# --- non-finite gradients ------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [float("inf"), float("-inf")])
def test_infinite_gradient_torch_gives_nan_and_zeros_random_gives_length_v(bad):
    g = torch.tensor([bad, 1.0, -2.0])
    r = caveats.nonfinite_step(g, 0.5, generator=torch.Generator().manual_seed(4))
    assert math.isinf(r.torch_norm.item())
    assert math.isnan(r.torch_result[0].item()) and r.torch_result[1:].tolist() == [0.0, 0.0]
    assert torch.isfinite(r.random_step).all()
    assert r.random_norm.item() == pytest.approx(0.5, rel=1e-6)
    # the direction is the seeded Gaussian draw, scaled to length v
    z = torch.randn(3, generator=torch.Generator().manual_seed(4))
    torch.testing.assert_close(r.random_step, 0.5 * z / z.norm())


def test_nan_gradient_torch_spreads_nan_random_steps_differ_by_seed():
    g = torch.tensor([float("nan"), 1.0])
    a = caveats.nonfinite_step(g, 2.0, generator=torch.Generator().manual_seed(0))
    b = caveats.nonfinite_step(g, 2.0, generator=torch.Generator().manual_seed(1))
    assert torch.isnan(a.torch_result).all() and math.isnan(a.torch_norm.item())
    assert a.random_norm.item() == pytest.approx(2.0) == b.random_norm.item()
    assert not torch.allclose(a.random_step, b.random_step)


# --- low precision --------------------------------------------------------------------------------


def test_float16_norm_overflows_in_torch_and_not_in_clipkit():
    r = caveats.low_precision_norm(100_000, 300.0, 1.0)
    true = 300.0 * math.sqrt(100_000)
    assert r.true_norm == pytest.approx(true) and true > 65504.0  # float16's largest number
    assert float(np.linalg.norm(np.full(100_000, 300.0))) == pytest.approx(true)
    assert math.isinf(r.torch_norm.item()) and r.torch_result.abs().max().item() == 0.0
    assert r.clipkit_norm.dtype == torch.float32
    assert r.clipkit_norm.item() == pytest.approx(true, rel=1e-4)
    assert r.clipkit_result.dtype == torch.float16
    np.testing.assert_allclose(r.clipkit_result.float().numpy(), 300.0 / true, rtol=1e-3)


def test_below_float16_range_torch_and_clipkit_agree():
    r = caveats.low_precision_norm(1000, 3.0, 1.0)  # norm 94.9: no overflow anywhere
    assert r.torch_norm.item() == pytest.approx(r.true_norm, rel=1e-3)
    torch.testing.assert_close(r.torch_result, r.clipkit_result, rtol=1e-3, atol=0)


# --- global norm or one per group ----------------------------------------------------------------


def test_global_vs_per_group_against_numpy():
    gen = torch.Generator().manual_seed(8)
    groups = {
        "embedding": 20.0 * torch.randn(50, generator=gen, dtype=F64),
        "encoder": 0.1 * torch.randn(30, generator=gen, dtype=F64),
        "head": 0.05 * torch.randn(10, generator=gen, dtype=F64),
    }
    r = caveats.global_vs_per_group(groups, 1.0)
    arrays = [g.numpy() for g in groups.values()]
    norms = np.array([np.linalg.norm(a) for a in arrays])
    total = math.sqrt((norms**2).sum())
    assert r.names == ("embedding", "encoder", "head")
    np.testing.assert_allclose(r.norms.numpy(), norms, rtol=1e-12)
    assert r.total_norm.item() == pytest.approx(total, rel=1e-12)
    np.testing.assert_allclose(r.after_global.numpy(), norms / (total + 1e-6), rtol=1e-9)
    np.testing.assert_allclose(
        r.after_per_group.numpy(), norms * np.minimum(1.0 / (norms + 1e-6), 1.0), rtol=1e-9
    )
    assert r.angle_global.item() == pytest.approx(0.0, abs=1e-6)
    scaled = np.concatenate(
        [a * min(1.0, 1.0 / (n + 1e-6)) for a, n in zip(arrays, norms, strict=True)]
    )
    assert r.angle_per_group.item() == pytest.approx(
        np_angle(np.concatenate(arrays), scaled), abs=1e-6
    )
