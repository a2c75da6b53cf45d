"""Every number that a notebook's prose states, recomputed by clipkit.

One test per claim, named ``test_<notebook>_s<section>_<claim>``. A test computes the number
through clipkit, formats it the way the prose writes it, and checks that the markdown of that
section says exactly that, so the prose and the math cannot drift apart.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import nbformat
import torch

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


@cache
def section_prose(notebook: str, section: int) -> str:
    """The markdown of section ``section``: the cells from ``## <section>.`` to the next ``## ``.

    Typographic minus signs become ASCII, so a claim is written ``-1.72`` either way.
    """
    cells = nbformat.read(NOTEBOOKS / notebook, as_version=4).cells
    text, inside = [], False
    for cell in cells:
        if cell.cell_type != "markdown":
            continue
        if cell.source.startswith("## "):
            inside = cell.source.startswith(f"## {section}.")
        if inside:
            text.append(cell.source)
    assert text, f"{notebook} has no section '## {section}.'"
    return "\n".join(text).replace("\u2212", "-")


def assert_prose_states(notebook: str, section: int, number: str) -> None:
    """``number`` (as formatted text) appears in that section, not as part of a longer number."""
    prose = section_prose(notebook, section)
    pattern = rf"(?<![\d.]){re.escape(number)}(?![\d])"
    assert re.search(pattern, prose), f"{notebook} section {section} should state {number!r}"


# --- 01-cliffs.ipynb --------------------------------------------------------------------------

NB01 = "01-cliffs.ipynb"


def _f64(*values: float) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def _grad(w: float) -> float:
    from clipkit.cliffs import one_weight_cliff_grad

    return one_weight_cliff_grad(_f64(w)).item()


def _loss(w: float) -> float:
    from clipkit.cliffs import one_weight_cliff_loss

    return one_weight_cliff_loss(_f64(w)).item()


def _step(w: float, lr: float) -> float:
    from clipkit.cliffs import one_weight_cliff_step

    return one_weight_cliff_step(_f64(w), lr).item()


def test_01_cliffs_s1_growth_at_1_1_over_50_steps_is_117():
    from clipkit.cliffs import power_growth

    factor = power_growth(1.1, 50)[-1].item()
    assert f"{factor:.0f}" == "117"
    assert_prose_states(NB01, 1, f"{factor:.0f}")


def test_01_cliffs_s1_ten_per_cent_per_step_doubles_about_every_7_steps():
    from clipkit.cliffs import power_growth

    after_7 = power_growth(1.1, 7)[-1].item()
    assert 1.9 < after_7 < 2.0  # 1.1**7 = 1.95: seven steps make one doubling
    assert "every 7 steps" in section_prose(NB01, 1)


def test_01_cliffs_s1_decay_at_0_9_over_50_steps_is_0_005():
    from clipkit.cliffs import power_growth

    factor = power_growth(0.9, 50)[-1].item()
    assert f"{factor:.3f}" == "0.005"
    assert_prose_states(NB01, 1, f"{factor:.3f}")


def test_01_cliffs_s2_gradient_at_0_90_is_about_2_4():
    assert f"{_grad(0.90):.1f}" == "2.4"
    assert "about 2.4" in section_prose(NB01, 2)


def test_01_cliffs_s2_gradient_at_0_90_is_2_41():
    assert_prose_states(NB01, 2, f"{_grad(0.90):.2f}")


def test_01_cliffs_s2_gradient_at_1_05_is_13_8():
    assert f"{_grad(1.05):.1f}" == "13.8"
    assert_prose_states(NB01, 2, f"{_grad(1.05):.1f}")


def test_01_cliffs_s2_gradient_grows_5_7_times_from_0_90_to_1_05():
    assert_prose_states(NB01, 2, f"{_grad(1.05) / _grad(0.90):.1f}")


def test_01_cliffs_s2_weight_1_05_is_17_percent_larger_than_0_90():
    assert_prose_states(NB01, 2, f"{1.05 / 0.90 - 1:.0%}")


def test_01_cliffs_s2_loss_goes_from_0_11_to_1_30():
    assert_prose_states(NB01, 2, f"{_loss(0.90):.2f}")
    assert_prose_states(NB01, 2, f"{_loss(1.05):.2f}")


def test_01_cliffs_s3_step_0_2_from_0_90_is_0_48_long_and_lands_at_0_42():
    landed = _step(0.90, 0.2)
    assert_prose_states(NB01, 3, f"{0.90 - landed:.2f}")
    assert_prose_states(NB01, 3, f"{landed:.2f}")


def test_01_cliffs_s3_landing_from_0_90_has_practically_zero_loss():
    assert _loss(_step(0.90, 0.2)) < 1e-6
    assert "practically zero" in section_prose(NB01, 3)


def test_01_cliffs_s3_step_0_2_from_1_05_is_2_77_long_and_lands_at_minus_1_72():
    landed = _step(1.05, 0.2)
    assert_prose_states(NB01, 3, f"{1.05 - landed:.2f}")
    assert_prose_states(NB01, 3, f"{landed:.2f}")


def test_01_cliffs_s3_loss_jumps_from_1_30_to_10_8():
    assert_prose_states(NB01, 3, f"{_loss(1.05):.2f}")
    assert_prose_states(NB01, 3, f"{_loss(_step(1.05, 0.2)):.1f}")


def test_01_cliffs_s3_gradient_at_1_05_is_13_8():
    assert_prose_states(NB01, 3, f"{_grad(1.05):.1f}")


def test_01_cliffs_question_banks_agree_with_clipkit():
    # The right choices and the reasons in data/questions/01-cliffs.json state numbers too.
    from clipkit.widgets.bank import load_bank

    bank = load_bank("01-cliffs")
    right = {qid: q.choices[q.answer] for qid, q in bank.items()}
    assert right["growth-50-steps"] == f"about {1.1**50:.0f} times"
    assert right["gradient-at-1-05"] == f"about {_grad(1.05):.0f}"
    assert f"{_step(1.05, 0.2):.1f}".replace("-", "\u2212") in right["step-from-1-05"]
    reasons = " ".join(" ".join(q.reasons) for q in bank.values())
    for number in (f"{_grad(1.05):.1f}", f"{_loss(1.05):.2f}", f"{_loss(_step(1.05, 0.2)):.1f}"):
        assert number in reasons, number


# --- 04-elementwise-vs-norm.ipynb ---------------------------------------------------------

NB04 = "04-elementwise-vs-norm.ipynb"


def _ten_one():
    from clipkit.compare import compare_clipping

    return compare_clipping(_f64(10.0, 1.0), 1.0)


def _walk():
    from clipkit.compare import wandering_simulation

    return wandering_simulation(240, threshold=1.0, seed=0)


def _minibatches():
    from clipkit.caveats import clip_then_average

    grads = _f64(0.6, 0.2, 0.8, -0.1, 0.7, 0.3, 0.0, 10.0).reshape(4, 2)
    return clip_then_average(grads, 1.0)


def _groups():
    from clipkit.caveats import global_vs_per_group

    groups = {
        "embedding": torch.full((100,), 5.0),
        "encoder": torch.full((64,), 0.1),
        "head": torch.full((16,), 0.125),
    }
    return global_vs_per_group(groups, 1.0)


def _heading(v: torch.Tensor) -> float:
    from clipkit.clipping import heading

    return heading(v).item()


def test_04_elementwise_vs_norm_s2_norm_of_ten_one_is_10_05():
    assert f"{_ten_one().norm.item():.2f}" == "10.05"
    assert_prose_states(NB04, 2, "10.05")


def test_04_elementwise_vs_norm_s2_by_norm_is_0_995_0_0995_by_value_is_1_1():
    c = _ten_one()
    assert [f"{x:.4g}" for x in c.by_norm.tolist()] == ["0.995", "0.0995"]
    assert c.by_value.tolist() == [1.0, 1.0]
    assert "$(0.995, 0.0995)$" in section_prose(NB04, 2)
    assert "$(1, 1)$" in section_prose(NB04, 2)


def test_04_elementwise_vs_norm_s2_headings_5_71_5_71_45_0():
    c = _ten_one()
    assert f"{_heading(c.gradient):.2f}" == f"{_heading(c.by_norm):.2f}" == "5.71"
    assert f"{_heading(c.by_value):.1f}" == "45.0"
    assert_prose_states(NB04, 2, "5.71")
    assert_prose_states(NB04, 2, "45.0")


def test_04_elementwise_vs_norm_s2_value_clipping_turns_by_39_29_norm_by_0():
    c = _ten_one()
    assert abs(c.angle_by_norm.item()) < 1e-9
    assert_prose_states(NB04, 2, f"{c.angle_by_value.item():.2f}")


def test_04_elementwise_vs_norm_s2_value_clipping_is_still_a_descent_direction():
    g = torch.randn(1000, 50, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    from clipkit.clipping import clip_by_value

    assert ((g * clip_by_value(g, 0.3)).sum(-1) > 0).all()
    assert "descent direction" in section_prose(NB04, 2)


def test_04_elementwise_vs_norm_s3_walk_has_240_frames_and_steps_of_0_25():
    import inspect

    from clipkit.compare import wandering_gradient

    assert _walk().clipped.gradient.shape == (240, 2)
    assert inspect.signature(wandering_gradient).parameters["step"].default == 0.25
    assert_prose_states(NB04, 3, "240")
    assert_prose_states(NB04, 3, "0.25")


def test_04_elementwise_vs_norm_s3_norm_clipping_acts_in_94_percent_never_turns():
    clipped = _walk().clipped
    assert_prose_states(NB04, 3, f"{(clipped.norm > 1).double().mean().item():.0%}")
    assert clipped.angle_by_norm.max().item() < 1e-4


def test_04_elementwise_vs_norm_s3_value_clipping_turns_88_percent_by_6_6_up_to_21_5():
    angles = _walk().clipped.angle_by_value
    assert_prose_states(NB04, 3, f"{(angles > 0).double().mean().item():.0%}")
    assert_prose_states(NB04, 3, f"{angles.mean().item():.1f}°")
    assert_prose_states(NB04, 3, f"{angles.max().item():.1f}°")


def test_04_elementwise_vs_norm_s3_two_dimensions_never_turn_45_degrees():
    from clipkit.compare import compare_clipping

    g = torch.randn(20_000, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert compare_clipping(10 * g, 1.0).angle_by_value.max().item() < 45.0
    worst = compare_clipping(_f64(1e6, 1.0), 1.0).angle_by_value.item()
    assert 44.99 < worst < 45.0  # the bound is approached by one huge entry and one at v
    assert "45°" in section_prose(NB04, 3)


def test_04_elementwise_vs_norm_s4_demo_averages_128_gradients():
    from clipkit.widgets.drift import N_SAMPLES

    assert_prose_states(NB04, 4, f"{N_SAMPLES}")


def test_04_elementwise_vs_norm_s4_limit_at_v_1_is_0_950_a_turn_of_18_1():
    import math

    from clipkit.compare import gaussian_value_clip_cosine_limit

    rho = gaussian_value_clip_cosine_limit(1.0).item()
    assert_prose_states(NB04, 4, f"{rho:.3f}")
    assert_prose_states(NB04, 4, f"{math.degrees(math.acos(rho)):.1f}°")


def test_04_elementwise_vs_norm_s4_sign_limit_is_0_798_a_turn_of_37_1():
    import math

    from clipkit.compare import gaussian_value_clip_cosine_limit, sign_cosine_limit

    limit = sign_cosine_limit()
    assert abs(limit - math.sqrt(2 / math.pi)) < 1e-15
    assert abs(gaussian_value_clip_cosine_limit(1e-6).item() - limit) < 1e-5
    assert_prose_states(NB04, 4, f"{limit:.3f}")
    assert_prose_states(NB04, 4, f"{math.degrees(math.acos(limit)):.1f}°")
    assert "0.80" in section_prose(NB04, 4) or "0.80" in section_prose(NB04, 7)


def test_04_elementwise_vs_norm_s4_monte_carlo_at_10000_dims_meets_the_limits():
    from clipkit.compare import gaussian_value_clip_cosine_limit, value_clip_cosine

    gen = torch.Generator().manual_seed(0)
    grid = value_clip_cosine([10_000], [0.01, 1.0], 256, generator=gen)
    limit = gaussian_value_clip_cosine_limit([0.01, 1.0]).float()
    assert (grid.by_value[0] - limit).abs().max().item() < 0.005


def test_04_elementwise_vs_norm_s4_two_dimensions_give_0_900():
    import math

    from clipkit.compare import value_clip_cosine

    closed = 2 * math.sqrt(2) / math.pi
    grid = value_clip_cosine([2], [1e-3], 50_000, generator=torch.Generator().manual_seed(0))
    assert abs(grid.sign.item() - closed) < 0.005
    assert_prose_states(NB04, 4, f"{closed:.3f}")


def test_04_elementwise_vs_norm_s4_student_t_3_gives_0_637():
    import math

    from clipkit.compare import sign_cosine_limit

    assert abs(sign_cosine_limit("student_t", 3) - 2 / math.pi) < 1e-12
    assert_prose_states(NB04, 4, f"{2 / math.pi:.3f}")


def test_04_elementwise_vs_norm_s5_large_gradient_share_falls_from_25_percent_to_0_032():
    r = _minibatches()
    assert r.scales.tolist() == [1.0, 1.0, 1.0, 0.1]
    assert_prose_states(NB04, 5, "25%")
    assert_prose_states(NB04, 5, f"{r.weights[3].item():.3f}")
    assert_prose_states(NB04, 5, f"{r.weights[0].item():.3f}")
    assert "0.1 / 3.1" in section_prose(NB04, 5)


def test_04_elementwise_vs_norm_s5_mean_and_mean_of_clipped_and_headings():
    r = _minibatches()
    assert [round(x, 3) for x in r.mean.tolist()] == [0.525, 2.6]
    assert [round(x, 3) for x in r.mean_of_clipped.tolist()] == [0.525, 0.35]
    prose = section_prose(NB04, 5)
    assert "$(0.525, 2.6)$" in prose and "$(0.525, 0.35)$" in prose
    assert abs(_heading(r.clipped_mean) - _heading(r.mean)) < 1e-9
    assert_prose_states(NB04, 5, f"{_heading(r.mean):.2f}°")
    assert_prose_states(NB04, 5, f"{_heading(r.mean_of_clipped):.2f}°")
    assert_prose_states(NB04, 5, f"{r.angle.item():.2f}°")


def test_04_elementwise_vs_norm_s5_torch_turns_inf_into_nan_and_zeros_random_step_has_length_v():
    from clipkit.caveats import nonfinite_step

    gen = torch.Generator().manual_seed(0)
    inf = nonfinite_step(torch.tensor([float("inf"), 1.0, 2.0]), 1.0, generator=gen)
    assert torch.isnan(inf.torch_result[0]) and inf.torch_result[1:].tolist() == [0.0, 0.0]
    nan = nonfinite_step(torch.tensor([float("nan"), 0.5]), 1.0, generator=gen)
    assert torch.isnan(nan.torch_result).all()
    assert abs(inf.random_norm.item() - 1.0) < 1e-6 and abs(nan.random_norm.item() - 1.0) < 1e-6
    prose = section_prose(NB04, 5)
    assert "the infinite entry becomes NaN and the others 0" in prose
    assert "random step of size $v$" in prose


def test_04_elementwise_vs_norm_s6_global_norm_50_01_shrinks_encoder_to_0_016_head_to_0_010():
    r = _groups()
    assert [f"{x:.1f}" for x in r.norms.tolist()] == ["50.0", "0.8", "0.5"]
    assert_prose_states(NB04, 6, f"{r.total_norm.item():.2f}")
    assert_prose_states(NB04, 6, f"{r.after_global[1].item():.3f}")
    assert_prose_states(NB04, 6, f"{r.after_global[2].item():.3f}")


def test_04_elementwise_vs_norm_s6_per_group_keeps_0_8_and_0_5_and_turns_by_42_25():
    r = _groups()
    assert [round(x, 4) for x in r.after_per_group.tolist()] == [1.0, 0.8, 0.5]
    assert r.angle_global.item() < 1e-3
    assert_prose_states(NB04, 6, f"{r.angle_per_group.item():.2f}°")


def test_04_elementwise_vs_norm_s6_float16_norm_94868_overflows_torch_not_clipkit():
    import math

    from clipkit.caveats import low_precision_norm

    r = low_precision_norm(100_000, 300.0, 1.0)
    assert torch.finfo(torch.float16).max == 65504.0 < r.true_norm
    assert math.isinf(r.torch_norm.item()) and r.torch_result.abs().max().item() == 0.0
    assert f"{r.true_norm:,.0f}" == f"{r.clipkit_norm.item():,.0f}" == "94,868"
    assert f"{r.clipkit_result[0].item():.5f}" == "0.00316"
    prose = section_prose(NB04, 6)
    for number in ("65504", "100,000", "94{,}868", "94,868", "0.00316"):
        assert number in prose, number


def test_04_elementwise_vs_norm_s6_tiny_gradient_norm_0_00022_passes_unchanged():
    from clipkit.compare import compare_clipping

    tiny = _f64(1e-4, -2e-4)
    c = compare_clipping(tiny, 1.0)
    assert torch.equal(c.by_norm, tiny) and torch.equal(c.by_value, tiny)
    assert_prose_states(NB04, 6, f"{c.norm.item():.5f}")


def test_04_elementwise_vs_norm_s7_summary_numbers():
    import math

    c = _ten_one()
    prose = section_prose(NB04, 7)
    assert f"{_heading(c.gradient):.2f}°" in prose and f"{_heading(c.by_value):.1f}°" in prose
    assert f"about {math.degrees(math.acos(math.sqrt(2 / math.pi))):.0f}°" in prose
    assert "05-information-flow.ipynb" in prose


def test_04_elementwise_vs_norm_question_bank_agrees_with_clipkit():
    import math

    from clipkit.widgets.bank import load_bank

    bank = load_bank("04-elementwise-vs-norm")
    right = {qid: q.choices[q.answer] for qid, q in bank.items()}
    assert right["keeps-direction"] == "clipping the norm"
    assert right["ten-one-by-value"] == f"{_heading(_ten_one().by_value):.0f}°"
    assert right["many-dims-tiny-threshold"] == f"about {math.sqrt(2 / math.pi):.2f}"
    assert right["clip-each-share"] == f"about {_minibatches().weights[3].item():.0%}"
    assert right["global-norm-spike"] == f"it is cut to about {_groups().after_global[1]:.3f}"
    assert (
        f"{_heading(_ten_one().gradient):.2f}°, the same as g" in bank["ten-one-by-value"].choices
    )
    reasons = " ".join(" ".join(q.reasons) for q in bank.values())
    numbers = (
        f"{_ten_one().angle_by_value.item():.2f}°",
        f"{_minibatches().weights[3].item():.3f}",
        f"{_groups().total_norm.item():.2f}",
        f"about {math.degrees(math.acos(math.sqrt(2 / math.pi))):.0f}°",
    )
    for number in numbers:
        assert number in reasons, number
