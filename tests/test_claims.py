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
