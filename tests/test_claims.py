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


# --- 03-norm-clipping.ipynb ---------------------------------------------------------------

NB03 = "03-norm-clipping.ipynb"


def _fig1017_runs():
    from clipkit.cliffs import figure_10_17

    return figure_10_17().descend(_f64(0.05, 0.1), dtype=torch.float64)


def _rnn_runs():
    from clipkit import rnn

    return rnn.notebook_runs()


def test_03_norm_clipping_s1_three_four_clips_to_0_6_0_8_and_not_at_10():
    from clipkit.clipping import clip_by_norm

    g = _f64(3.0, 4.0)
    assert [round(x, 6) for x in clip_by_norm(g, 1.0).tolist()] == [0.6, 0.8]
    assert torch.equal(clip_by_norm(g, 10.0), g)
    prose = section_prose(NB03, 1)
    assert "$g = (3, 4)$, whose norm is 5" in prose and "$(0.6, 0.8)$" in prose
    assert "With $v = 10$ nothing happens" in prose


def test_03_norm_clipping_s1_short_gradient_passes_unchanged():
    from clipkit.clipping import clip_by_norm

    g = _f64(0.3, 0.4)
    assert g.norm().item() == 0.5 and torch.equal(clip_by_norm(g, 1.0), g)
    assert_prose_states(NB03, 1, "0.5")


def test_03_norm_clipping_s1_torch_rule_differs_by_1e_minus_6_over_norm():
    from clipkit.clipping import clip_by_norm, clip_grad_norm_

    w = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    w.grad = _f64(30.0, 40.0)
    clip_grad_norm_([w], 1.0)
    book = clip_by_norm(_f64(30.0, 40.0), 1.0)
    rel = ((w.grad - book).norm() / book.norm()).item()
    assert abs(rel - 1e-6 / 50) < 1e-12
    assert r"v / (\|g\| + 10^{-6})" in section_prose(NB03, 1)


def test_03_norm_clipping_s2_step_0_05_hits_the_wall_at_step_3_gradient_78_5_thrown_3_93():
    runs = _fig1017_runs()
    assert runs.left_at[0].item() == -1  # stays in the picture
    assert f"{runs.grad_norms[0, 3].item():.1f}" == "78.5"
    jump = (runs.path[0, 3, 0] - runs.path[0, 4, 0]).item()
    assert f"{jump:.2f}" == "3.93"
    assert runs.grad_norms[0, 3] > 10 * runs.grad_norms[0, 2]  # the wall, met at step 3
    for number in ("78.5", "3.93", "step 3"):
        assert_prose_states(NB03, 2, number)


def test_03_norm_clipping_s2_step_0_1_lands_at_1_19_gradient_849_jump_84_9_to_minus_83_7():
    runs = _fig1017_runs()
    assert runs.left_at[1].item() == 2
    assert f"{runs.path[1, 1, 0].item():.2f}" == "1.19"
    assert f"{runs.grad_norms[1, 1].item():.0f}" == "849"
    assert f"{(runs.path[1, 2] - runs.path[1, 1]).norm().item():.1f}" == "84.9"
    assert f"{runs.path[1, 2, 0].item():.1f}" == "-83.7"
    for number in ("1.19", "849", "84.9", "-83.7"):
        assert_prose_states(NB03, 2, number)


def test_03_norm_clipping_s2_clipped_at_1_stays_inside_up_to_step_0_5():
    from clipkit.cliffs import figure_10_17

    eps = torch.linspace(0.01, 0.5, 50, dtype=torch.float64)
    runs = figure_10_17().descend(eps, max_norm=1.0, dtype=torch.float64)
    assert not runs.left.any()
    steps = runs.path.diff(dim=-2).norm(dim=-1)
    assert (steps <= eps[:, None] * (1 + 1e-12)).all()  # never longer than the step size
    assert "every step size up to 0.5" in section_prose(NB03, 2)


def test_03_norm_clipping_s2_landscape_start_and_steps():
    from clipkit.cliffs import figure_10_17

    fig = figure_10_17()
    assert fig.start == (-0.25, 1.75) and fig.steps == 40
    assert (fig.a, fig.s, fig.k, fig.c) == (5.0, 5.0, 20.0, 1.0)
    prose = section_prose(NB03, 2)
    assert "$(w, b) = (-0.25, 1.75)$" in prose and "take 40 steps" in prose
    assert r"5\,(b - w/2)^2 - 5\,w + e^{20\,(w - 1)}" in prose


def _unit_runs():
    from clipkit.cliffs import rnn_unit_figure

    unit = rnn_unit_figure()
    patch = unit.patch_starts(10, dtype=torch.float64).reshape(-1, 2)
    starts = torch.cat([torch.tensor([unit.start], dtype=torch.float64), patch])
    plain = unit.descend(start=starts, dtype=torch.float64)
    clipped = unit.descend(max_norm=0.5, start=starts, dtype=torch.float64)
    return unit, plain, clipped


def test_03_norm_clipping_s3_loss_jumps_0_333_at_w_5_but_0_0005_at_w_3():
    from clipkit.cliffs import rnn_unit_loss

    b = torch.arange(-6, 0, 0.001, dtype=torch.float64)
    w = _f64(3.0, 4.0, 4.5, 5.0, 6.0)[:, None]
    jump = rnn_unit_loss(w, b).diff(dim=-1).abs().max(dim=-1)
    assert f"{jump.values[0].item():.4f}" == "0.0005"
    assert f"{jump.values[3].item():.3f}" == "0.333"
    assert f"{b[jump.indices[3]].item():.3f}" == "-2.613"
    assert jump.values[1] < 0.01 < jump.values[2]  # the cliff appears above about w = 4
    for number in ("0.0005", "0.333", "-2.613", "0.001"):
        assert_prose_states(NB03, 3, number)
    assert "For $w$ above about 4" in section_prose(NB03, 3)


def test_03_norm_clipping_s3_start_5_2_minus_3_1_loss_0_41_gradient_0_10_step_1_50_steps():
    unit, _, _ = _unit_runs()
    start = torch.tensor(unit.start, dtype=torch.float64)
    assert unit.start == (5.2, -3.1) and unit.step_size == 1.0 and unit.steps == 50
    assert f"{unit.loss(*start).item():.2f}" == "0.41"
    assert f"{unit.grad_at(start).norm().item():.2f}" == "0.10"
    prose = section_prose(NB03, 3)
    assert "$(w, b) = (5.2, -3.1)$" in prose and "the loss is 0.41" in prose
    assert "small: 0.10" in prose and "step size 1" in prose and "in 50 steps" in prose
    assert "200 by 200" in prose


def test_03_norm_clipping_s3_plain_creeps_0_10_0_11_0_14_meets_6171_leaves_at_update_4():
    _, plain, _ = _unit_runs()
    first = [f"{x:.2f}" for x in plain.grad_norms[0, :3].tolist()]
    assert first == ["0.10", "0.11", "0.14"]
    face = plain.grad_norms[0, 3].item()
    assert f"{face:.0f}" == "6171" and plain.left_at[0].item() == 4
    step = (plain.path[0, 4] - plain.path[0, 3]).norm().item()
    assert abs(step - face) < 1e-9  # step size 1: the step is as long as the gradient
    prose = section_prose(NB03, 3)
    assert "gradients of 0.10, 0.11 and 0.14" in prose
    assert f"the gradient is {face:.0f}, so update 4 is {step:.0f} long" in prose


def test_03_norm_clipping_s3_clipped_cut_5_times_ends_at_0_021():
    unit, _, clipped = _unit_runs()
    assert clipped.left_at[0].item() == -1
    assert (clipped.grad_norms[0] > 0.5).sum().item() == 5
    assert clipped.path[0].diff(dim=0).norm(dim=-1).max().item() <= 0.5 + 1e-12
    final = unit.loss(clipped.final[0, 0], clipped.final[0, 1]).item()
    assert f"{final:.3f}" == "0.021"
    prose = section_prose(NB03, 3)
    assert "cut on 5 of its 50 updates" in prose and "loss of 0.021" in prose


def test_03_norm_clipping_s3_patch_of_100_31_plain_thrown_no_clipped():
    _, plain, clipped = _unit_runs()
    assert (plain.left_at[1:] >= 0).sum().item() == 31
    assert (clipped.left_at[1:] >= 0).sum().item() == 0
    prose = section_prose(NB03, 3)
    assert "a 10 by 10 patch" in prose
    assert "31 plain runs are thrown out and no clipped run" in prose


def test_03_norm_clipping_s3_no_clipped_run_leaves_on_any_slider_setting():
    from clipkit.widgets.landscape_runs import UNIT_THRESHOLDS, RNNUnitDemo

    demo = RNNUnitDemo()
    assert (demo._all.left_at[:, :, : len(UNIT_THRESHOLDS)] < 0).all()
    demo.close()
    assert "on every setting of the two sliders, no clipped run leaves" in section_prose(NB03, 3)


def test_03_norm_clipping_s4_net_is_32_units_50_steps_radius_1_5_batch_32():
    from clipkit import rnn

    assert (rnn.HIDDEN, rnn.LENGTH, rnn.RADIUS, rnn.BATCH_SIZE) == (32, 50, 1.5, 32)
    assert (rnn.STEPS, rnn.LR, rnn.CLIP) == (100, 0.05, 1.0)
    prose = section_prose(NB03, 4)
    for phrase in ("32 tanh units", "50 numbers", "spectral radius 1.5", "batch of 32"):
        assert phrase in prose, phrase
    assert "100 steps" in prose and "step size 0.05" in prose and "$v = 1$" in prose


def test_03_norm_clipping_s4_first_gradient_norm_is_11_5():
    plain, clipped = _rnn_runs()
    assert plain.grad_norm[0].item() == clipped.grad_norm[0].item()
    assert_prose_states(NB03, 4, f"{clipped.grad_norm[0].item():.1f}")


def test_03_norm_clipping_s4_plain_run_overflows_before_100_steps():
    plain, _ = _rnn_runs()
    assert plain.diverged_at is not None and plain.diverged_at < 100
    assert "overflows to infinity before the 100 steps are over" in section_prose(NB03, 4)


def test_03_norm_clipping_s4_plain_norms_stay_above_3_9_loss_passes_100_within_20_steps():
    plain, _ = _rnn_runs()
    assert f"{plain.grad_norm[:10].min().item():.1f}" == "3.9"
    assert plain.loss[:20].max().item() > 100
    prose = section_prose(NB03, 4)
    assert "over its first 10 steps the norm never falls below 3.9" in prose
    assert "Its loss passes 100 within 20 steps" in prose


def test_03_norm_clipping_s4_clipped_on_8_steps_the_first_six_among_them():
    _, clipped = _rnn_runs()
    hits = clipped.clipped.nonzero().flatten().tolist()
    assert len(hits) == 8 and hits[:6] == list(range(6))
    assert "clipped on 8 of the 100 steps, six of them the first six" in section_prose(NB03, 4)


def test_03_norm_clipping_s4_clipped_loss_over_last_20_steps_is_0_0011():
    _, clipped = _rnn_runs()
    assert clipped.diverged_at is None
    assert_prose_states(NB03, 4, f"{clipped.loss[-20:].mean().item():.4f}")


def test_03_norm_clipping_s4_answering_zero_costs_1():
    from clipkit import rnn

    x, y = rnn.first_bit_batch(64)
    assert ((0 - y) ** 2).mean().item() == 1.0
    assert "answering 0 costs 1" in section_prose(NB03, 4)


def test_03_norm_clipping_s5_mean_norm_0_95_median_0_23():
    from clipkit import rnn

    norms = _rnn_runs()[1].grad_norm
    assert_prose_states(NB03, 5, f"{rnn.rule_of_thumb(norms).item():.2f}")
    assert_prose_states(NB03, 5, f"{norms.median().item():.2f}")


def test_03_norm_clipping_s5_fractions_clipped_16_8_6_5_3_percent():
    from clipkit import rnn

    norms = _rnn_runs()[1].grad_norm
    mean = rnn.rule_of_thumb(norms)
    fractions = rnn.fraction_clipped(norms, _f64(0.5, 1, 2, 5, 10) * mean)
    text = ", ".join(f"{f:.0%}" for f in fractions.tolist()[:-1])
    text += f" and {fractions[-1].item():.0%}"
    assert text == "16%, 8%, 6%, 5% and 3%"
    assert text in section_prose(NB03, 5)


def test_03_norm_clipping_s5_sum_makes_mean_30_3_and_clips_97_percent():
    from clipkit import rnn

    norms = _rnn_runs()[1].grad_norm
    total = norms * rnn.BATCH_SIZE
    assert_prose_states(NB03, 5, f"{rnn.rule_of_thumb(total).item():.1f}")
    assert_prose_states(NB03, 5, f"{rnn.fraction_clipped(total, 1.0).item():.0%}")
    assert "exactly 32 times the mean" in section_prose(NB03, 5)


def test_03_norm_clipping_s5_typical_norms_by_batch_size():
    from clipkit import rnn

    table = rnn.typical_norms(_rnn_runs()[1].net, batch_sizes=(8, 32, 128))
    torch.testing.assert_close(table[1], table[0] * _f64(8, 32, 128))
    assert [f"{x:.3g}" for x in table[1].tolist()] == ["1.44", "8.39", "33.8"]
    assert [f"{x:.2f}" for x in table[0].tolist()[::2]] == ["0.18", "0.26"]
    assert "from 1.44 to 8.39 to 33.8" in section_prose(NB03, 5)
    assert "from 0.18 to 0.26" in section_prose(NB03, 5)


def test_03_norm_clipping_question_bank_agrees_with_clipkit():
    from clipkit import rnn
    from clipkit.widgets.bank import load_bank

    bank = load_bank("03-norm-clipping")
    reasons = " ".join(" ".join(q.reasons) for q in bank.values())
    runs = _fig1017_runs()
    first = (runs.path[1, 1] - runs.path[1, 0]).norm().item()
    norms = _rnn_runs()[1].grad_norm
    numbers = (
        f"{first:.1f} long",
        f"{runs.grad_norms[1, 1].item():.0f}",
        f"about {(runs.path[1, 2] - runs.path[1, 1]).norm().item():.0f} long",
        f"w = {runs.path[1, 2, 0].item():.1f}",
        f"about {runs.grad_norms[1, 0].item():.0f}",
        f"{norms.median().item():.2f} becomes {rnn.BATCH_SIZE * norms.median().item():.1f}",
        f"{rnn.fraction_clipped(norms * rnn.BATCH_SIZE, 1.0).item():.0%}",
    )
    for number in numbers:
        assert number in reasons, number
    _, plain, _ = _unit_runs()
    face = plain.grad_norms[0, 3].item()
    assert f"the gradient is {face:.0f}" in reasons
    assert f"update 4 is {face:.0f} long" in reasons
    right = bank["sum-instead-of-mean"].choices[bank["sum-instead-of-mean"].answer]
    assert right == "nearly every step"
    assert bank["two-steps-at-0-1"].choices[bank["two-steps-at-0-1"].answer].startswith("far")


# --- 02-second-derivatives.ipynb --------------------------------------------------------------

NB02 = "02-second-derivatives.ipynb"


def _nb02_exp(a: float, *xs: float):
    """(slope, curvature) of exp(a x) by autograd, the way the notebook computes them."""
    from clipkit.curvature import exponential, slope_and_curvature

    return slope_and_curvature(lambda t: exponential(t, a), _f64(*xs))


def _nb02_sci(value: float) -> str:
    """``9.08 \\times 10^{-5}``: a number as the prose of notebook 02 writes it in LaTeX."""
    mantissa, exponent = f"{value:.2e}".split("e")
    return f"{mantissa} \\times 10^{{{int(exponent)}}}"


def _nb02_race(step_size, momentum, steps):
    from clipkit.momentum import RAVINE_START, ravine_race, steps_to_settle

    run, losses = ravine_race(step_size, momentum, steps, start=_f64(*RAVINE_START))
    return run, losses, steps_to_settle(losses)


@cache
def _nb02_sweep():
    """The table of section 4: step sizes x momenta, 1000 steps, [plain, Nesterov]."""
    lrs = _f64(0.005, 0.01, 0.02, 0.025, 0.03, 0.039)
    mus = _f64(0.5, 0.75, 0.9, 0.99)
    _, _, settle = _nb02_race(lrs[:, None], mus, 1000)
    return lrs.tolist(), mus.tolist(), settle


def test_02_second_derivatives_s2_slope_falls_by_e10_about_22000():
    slope, _ = _nb02_exp(2.0, 0.0, -5.0)
    factor = (slope[0] / slope[1]).item()
    assert abs(factor / torch.exp(_f64(10.0)).item() - 1) < 1e-12  # e^10, exactly the factor
    assert f"{round(factor, -3):,.0f}" == "22,000"
    assert_prose_states(NB02, 2, "22,000")
    assert "e^{10}" in section_prose(NB02, 2)


def test_02_second_derivatives_s2_slope_falls_from_2_to_9_08e_minus_5():
    slope, _ = _nb02_exp(2.0, 0.0, -5.0)
    assert f"{slope[0].item():g}" == "2"
    assert _nb02_sci(slope[1].item()) in section_prose(NB02, 2)
    assert "slope falls from 2 to" in section_prose(NB02, 2)


def test_02_second_derivatives_s2_curvature_falls_from_4_to_1_82e_minus_4():
    _, curv = _nb02_exp(2.0, 0.0, -5.0)
    assert f"{curv[0].item():g}" == "4"
    prose = section_prose(NB02, 2)
    assert f"from 4 to ${_nb02_sci(curv[1].item())}$" in prose


def test_02_second_derivatives_s2_ratio_stays_0_5_and_so_does_the_newton_step():
    from clipkit.curvature import exponential, newton_step_1d

    xs = _f64(0.0, -2.5, -5.0)
    slope, curv = _nb02_exp(2.0, *xs.tolist())
    assert (slope / curv).tolist() == [0.5, 0.5, 0.5]
    step = xs - newton_step_1d(lambda t: exponential(t, 2.0), xs)
    assert step.tolist() == [0.5, 0.5, 0.5]
    assert "$1/a = 0.5$" in section_prose(NB02, 2)
    assert "Newton step has length 0.5" in section_prose(NB02, 2)


def test_02_second_derivatives_s2_gradient_step_0_1_shrinks_from_0_2_to_9_08e_minus_6():
    slope, _ = _nb02_exp(2.0, 0.0, -5.0)
    steps = (0.1 * slope).tolist()
    assert f"{steps[0]:g}" == "0.2"
    assert f"from 0.2 to ${_nb02_sci(steps[1])}$" in section_prose(NB02, 2)


def test_02_second_derivatives_s2_steepness_4_gives_0_25():
    from clipkit.curvature import exponential_ratio

    assert exponential_ratio(_f64(-3.0, 0.0, 1.0), 4.0).tolist() == [0.25] * 3
    assert "$a = 4$ gives 0.25" in section_prose(NB02, 2)


def test_02_second_derivatives_s3_hessian_of_a_million_parameters_is_4_terabytes():
    from clipkit.curvature import hessian_bytes

    terabytes = hessian_bytes(10**6) / 1e12
    assert f"{terabytes:.0f}" == "4"
    assert "4 terabytes" in section_prose(NB02, 3)


def test_02_second_derivatives_s3_one_newton_step_lands_on_the_saddle():
    from clipkit.curvature import newton_step, saddle_loss

    assert newton_step(saddle_loss, _f64(1.2, 0.2)).tolist() == [0.0, 0.0]
    assert "$(1.2, 0.2)$" in section_prose(NB02, 3)
    assert "Newton lands exactly on the saddle" in section_prose(NB02, 3)


def test_02_second_derivatives_s3_gradient_step_0_1_scales_x_by_0_8_and_y_by_1_2():
    from clipkit.curvature import gradient_step, saddle_loss

    p = gradient_step(saddle_loss, _f64(1.0, 1.0), 0.1)
    assert [round(v, 12) for v in p.tolist()] == [0.8, 1.2]
    assert "multiplies $x$ by 0.8 and $y$ by 1.2" in section_prose(NB02, 3)


def test_02_second_derivatives_s3_ten_gradient_steps_end_at_0_129_1_238():
    from clipkit.curvature import gradient_step, saddle_loss

    p = _f64(1.2, 0.2)
    for _ in range(10):
        p = gradient_step(saddle_loss, p, 0.1)
    x, y = (f"{v:.3f}" for v in p.tolist())
    assert (x, y) == ("0.129", "1.238")
    assert f"$({x}, {y})$" in section_prose(NB02, 3)


def test_02_second_derivatives_s3_loss_falls_from_1_40_to_minus_1_52():
    from clipkit.curvature import gradient_step, saddle_loss

    start = p = _f64(1.2, 0.2)
    for _ in range(10):
        p = gradient_step(saddle_loss, p, 0.1)
    before, after = f"{saddle_loss(start).item():.2f}", f"{saddle_loss(p).item():.2f}"
    assert (before, after) == ("1.40", "-1.52")
    assert f"from {before} to ${after}$" in section_prose(NB02, 3)


def test_02_second_derivatives_s4_plain_descent_is_stable_below_0_04():
    from clipkit.momentum import RAVINE_KAPPA, stable_step_limit

    limit = stable_step_limit(RAVINE_KAPPA).item()
    assert f"{limit:.2f}" == "0.04"
    assert "$\\epsilon < 2/50 = 0.04$" in section_prose(NB02, 4)


def test_02_second_derivatives_s4_step_0_02_momentum_0_9_plain_223_nesterov_72():
    _, _, settle = _nb02_race(0.02, 0.9, 300)
    assert settle.tolist() == [223, 72]
    assert "plain descent needs 223 steps" in section_prose(NB02, 4)
    assert "Nesterov needs 72" in section_prose(NB02, 4)


def test_02_second_derivatives_s4_step_0_035_plain_settles_nesterov_blows_up():
    run, _, settle = _nb02_race(0.035, 0.9, 300)
    assert settle[0].item() > 0 and settle[1].item() == -1
    assert bool(run.diverged[1]) or run.final[1].abs().max().item() > 1e6
    assert "to 0.035 and keep momentum 0.9" in section_prose(NB02, 4)


def test_02_second_derivatives_s4_best_plain_run_is_step_0_039_with_116_steps():
    lrs, _, settle = _nb02_sweep()
    plain = settle[:, 0, 0].tolist()  # the plain column does not depend on the momentum
    best = min((s, lr) for s, lr in zip(plain, lrs, strict=True) if s >= 0)
    assert best == (116, 0.039)
    assert "The best plain run (step size 0.039" in section_prose(NB02, 4)
    assert "needs 116 steps" in section_prose(NB02, 4)


def test_02_second_derivatives_s4_nesterov_0_025_with_momentum_0_75_needs_31():
    lrs, mus, settle = _nb02_sweep()
    nesterov = settle[:, :, 1]
    assert nesterov[lrs.index(0.025), mus.index(0.75)].item() == 31
    assert nesterov[nesterov >= 0].min().item() == 31  # the best in the table
    assert "step size 0.025 and momentum 0.75 needs 31" in section_prose(NB02, 4)


def test_02_second_derivatives_s4_nesterov_limit_at_momentum_0_9_is_0_0271():
    from clipkit.momentum import RAVINE_KAPPA, stable_step_limit

    limit = stable_step_limit(RAVINE_KAPPA, 0.9, nesterov=True).item()
    assert f"{limit:.4f}" == "0.0271"
    assert "limit is 0.0271 rather than 0.04" in section_prose(NB02, 4)


def test_02_second_derivatives_s4_every_nesterov_run_at_step_0_03_or_more_blows_up():
    lrs, _, settle = _nb02_sweep()
    for i, lr in enumerate(lrs):
        if lr >= 0.03:
            assert (settle[i, :, 1] == -1).all() and (settle[i, :, 0] > 0).all()
    assert "with step size 0.03 or more" in section_prose(NB02, 4)


def test_02_second_derivatives_s4_momentum_0_99_at_step_0_02_needs_292_more_than_223():
    lrs, mus, settle = _nb02_sweep()
    i, j = lrs.index(0.02), mus.index(0.99)
    assert (settle[i, j, 1].item(), settle[i, j, 0].item()) == (292, 223)
    assert "needs 292 steps, more than the 223" in section_prose(NB02, 4)
