"""clipkit.compare against independent references: closed forms, numpy in float64, and
torch.nn.utils applied one vector at a time."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from references import np_angle, torch_clip_norm, torch_clip_value

from clipkit import compare

F64 = torch.float64


# --- seed 003's example and the batched comparison -----------------------------------------


def test_seed_003_example_ten_one_threshold_one():
    c = compare.compare_clipping(torch.tensor([10.0, 1.0], dtype=F64), 1.0)
    assert c.norm.item() == pytest.approx(math.sqrt(101))
    assert round(c.norm.item(), 2) == 10.05
    np.testing.assert_allclose(c.by_norm.numpy(), np.array([10.0, 1.0]) / math.sqrt(101))
    assert [round(x, 4) for x in c.by_norm.tolist()] == [0.995, 0.0995]
    assert c.by_value.tolist() == [1.0, 1.0]
    three = np.stack([c.gradient.numpy(), c.by_norm.numpy(), c.by_value.numpy()])
    headings = np.degrees(np.arctan2(three[:, 1], three[:, 0]))
    assert [round(h, 2) for h in headings.tolist()] == [5.71, 5.71, 45.0]
    assert c.angle_by_norm.item() == pytest.approx(0.0, abs=1e-6)
    assert c.angle_by_value.item() == pytest.approx(45.0 - math.degrees(math.atan(0.1)))


def test_compare_clipping_rows_match_torch_nn_utils_one_at_a_time():
    gen = torch.Generator().manual_seed(3)
    scale = torch.rand(40, 1, generator=gen, dtype=F64) * 4  # some rows below 1.3, most above
    g = scale * torch.randn(40, 5, generator=gen, dtype=F64)
    c = compare.compare_clipping(g, 1.3)
    assert 0 < (c.norm < 1.3).sum() < 40
    for i in range(len(g)):
        # torch divides by norm + 1e-6; the book divides by the norm: 1e-6 relative at most
        torch.testing.assert_close(c.by_norm[i], torch_clip_norm(g[i], 1.3), rtol=1e-6, atol=0)
        torch.testing.assert_close(c.by_value[i], torch_clip_value(g[i], 1.3))
        assert c.angle_by_value[i].item() == pytest.approx(np_angle(g[i], c.by_value[i]), abs=1e-6)
    assert c.angle_by_norm.abs().max().item() < 1e-6


def test_small_gradient_passes_both_clippings_unchanged():
    g = torch.tensor([[1e-3, -2e-4, 5e-5]], dtype=F64)
    c = compare.compare_clipping(g, 1.0)
    assert torch.equal(c.by_norm, g) and torch.equal(c.by_value, g)


# --- seed 000: the wandering gradient ------------------------------------------------------


def test_wandering_gradient_is_seeded_and_stays_in_the_box():
    a = compare.wandering_gradient(500, generator=torch.Generator().manual_seed(5))
    b = compare.wandering_gradient(500, generator=torch.Generator().manual_seed(5))
    c = compare.wandering_gradient(500, generator=torch.Generator().manual_seed(6))
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert a.abs().max().item() <= 3.0 and a[0].tolist() == [0.5, -0.5]


def test_wandering_gradient_is_a_reflected_gaussian_walk():
    # Independent reference: the same normal steps, walked one at a time in numpy; each bounce
    # off a wall mirrors that coordinate's later steps (a reflected walk, not a clamped one).
    gen = torch.Generator().manual_seed(7)
    steps = 0.25 * torch.randn(300, 2, generator=gen).double().numpy()
    x, mirror = np.array([0.5, -0.5]), np.ones(2)
    want = [x.copy()]
    for s in steps[1:]:
        x = x + mirror * s
        for k in range(2):
            while abs(x[k]) > 3.0:
                x[k] = np.sign(x[k]) * 6.0 - x[k]
                mirror[k] = -mirror[k]
        want.append(x.copy())
    got = compare.wandering_gradient(300, generator=torch.Generator().manual_seed(7))
    assert (np.abs(np.diff(np.array(want), axis=0)) < 3.0).all()
    np.testing.assert_allclose(got.numpy(), np.array(want), rtol=0, atol=1e-4)


def test_wandering_simulation_angles_match_numpy_frame_by_frame():
    w = compare.wandering_simulation(150, threshold=1.0, seed=2)
    path = w.clipped.gradient.double().numpy()
    for g, a_value in zip(path, w.clipped.angle_by_value.tolist(), strict=True):
        assert a_value == pytest.approx(np_angle(g, np.clip(g, -1, 1)), abs=2e-3)
    assert w.clipped.angle_by_norm.abs().max().item() < 2e-3  # float32: 0 up to rounding
    # the turn is zero exactly when no entry, or both entries by the same amount, is cut
    inside = (w.clipped.gradient.abs() <= 1).all(-1)
    assert (w.clipped.angle_by_value[inside] == 0).all()
    assert (w.clipped.angle_by_value[~inside] > 0).any()


# --- many dimensions ------------------------------------------------------------------------


def numpy_grid(g: np.ndarray, dims, thresholds) -> np.ndarray:
    """The same Monte Carlo average as value_clip_cosine, one (d, v) at a time, in float64."""
    out = np.empty((len(dims), len(thresholds)))
    for i, d in enumerate(dims):
        x = g[:, :d]
        for j, v in enumerate(thresholds):
            c = np.clip(x, -v, v)
            cos = (c * x).sum(1) / (np.linalg.norm(c, axis=1) * np.linalg.norm(x, axis=1))
            out[i, j] = cos.mean()
    return out


@pytest.mark.parametrize("distribution", ["gaussian", "student_t"])
def test_value_clip_cosine_grid_matches_a_loop_on_the_same_draws(distribution):
    dims, thresholds = [1, 2, 5, 33, 200], [0.05, 0.4, 1.0, 2.5]
    grid = compare.value_clip_cosine(
        dims,
        thresholds,
        64,
        distribution=distribution,
        generator=torch.Generator().manual_seed(11),
        dtype=F64,
    )
    g = compare.sample_gradients(
        64, 200, distribution=distribution, generator=torch.Generator().manual_seed(11), dtype=F64
    ).numpy()
    np.testing.assert_allclose(grid.by_value.numpy(), numpy_grid(g, dims, thresholds), rtol=1e-10)
    sign = [(np.abs(g[:, :d]).sum(1) / np.linalg.norm(np.sign(g[:, :d]), axis=1)
             / np.linalg.norm(g[:, :d], axis=1)).mean() for d in dims]  # fmt: skip
    np.testing.assert_allclose(grid.sign.numpy(), sign, rtol=1e-10)


def test_value_clip_cosine_in_two_dimensions_has_a_closed_form_sign_limit():
    # Isotropic Gaussian in 2-D: the angle is uniform, E|cos| = E|sin| = 2/pi, so
    # E cos(sign g, g) = (4/pi)/sqrt(2) = 2 sqrt(2)/pi.
    grid = compare.value_clip_cosine(
        [2], [1e-3], 100_000, generator=torch.Generator().manual_seed(0), dtype=F64
    )
    assert grid.sign.item() == pytest.approx(2 * math.sqrt(2) / math.pi, abs=2e-3)
    assert grid.by_value.item() == pytest.approx(grid.sign.item(), abs=1e-3)


def gaussian_limit_numpy(v: float) -> float:
    x = np.linspace(-12, 12, 400_001)
    pdf = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    c = np.clip(x, -v, v)
    return np.trapezoid(x * c * pdf, x) / math.sqrt(np.trapezoid(c * c * pdf, x))


@pytest.mark.parametrize("v", [0.01, 0.3, 1.0, 2.0, 4.0])
def test_gaussian_limit_matches_numerical_integration(v):
    got = compare.gaussian_value_clip_cosine_limit(v).item()
    assert got == pytest.approx(gaussian_limit_numpy(v), abs=1e-7)


def test_large_dimension_monte_carlo_settles_at_the_limits():
    v = [0.1, 0.5, 1.0, 2.0]
    grid = compare.value_clip_cosine([4096], v, 64, generator=torch.Generator().manual_seed(4))
    limit = compare.gaussian_value_clip_cosine_limit(v).float()
    torch.testing.assert_close(grid.by_value[0], limit, atol=3e-3, rtol=0)
    assert grid.sign.item() == pytest.approx(math.sqrt(2 / math.pi), abs=3e-3)


def test_sign_limits_closed_forms():
    assert compare.sign_cosine_limit() == pytest.approx(0.7978845608)
    assert compare.sign_cosine_limit("student_t", 3) == pytest.approx(2 / math.pi)
    # df -> infinity: Student's t becomes Gaussian
    assert compare.sign_cosine_limit("student_t", 10_000) == pytest.approx(
        math.sqrt(2 / math.pi), abs=1e-4
    )
    with pytest.raises(ValueError):
        compare.sign_cosine_limit("student_t", 2)


def test_student_t_sampler_has_the_right_tail():
    # t with 3 degrees of freedom: P(|t| > 3.182446) = 0.05 (the two-sided 5% point)
    t = compare.sample_gradients(
        400_000, 1, distribution="student_t", generator=torch.Generator().manual_seed(9)
    )
    assert (t.abs() > 3.182446).double().mean().item() == pytest.approx(0.05, abs=2e-3)


def test_bad_grid_arguments_raise():
    with pytest.raises(ValueError):
        compare.value_clip_cosine([0, 3], [1.0])
    with pytest.raises(ValueError):
        compare.value_clip_cosine([3], [-1.0])
    with pytest.raises(ValueError):
        compare.sample_gradients(2, 2, distribution="cauchy")
