"""Every notebook, run in JupyterLab in a real Chromium, as a learner would use it.

For each notebooks/*.ipynb (found when the tests are collected): run all cells; no kernel error
or traceback, every widget renders; each demo (.clipkit-demo) reacts when its first slider moves;
the first predict-first widget (.clipkit-predict) stays silent until Check, then answers.
The self-check tests run the same check on two notebooks written for the purpose, one good and
one broken, so that a check which could never fail would be noticed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from labcheck import KERNEL_LINE, REPO, Timeouts, check_notebook

NOTEBOOKS = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))


def _explain(report) -> str:
    lines = [f"{report.path}: {len(report.problems)} problem(s)"]
    lines += [f"  - {p}" for p in report.problems]
    lines += [f"  (note: {n})" for n in report.notes]
    return "\n".join(lines)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_and_its_widgets_respond(page, lab, name):
    report = check_notebook(page, lab, f"notebooks/{name}")
    assert not report.problems, _explain(report)


def test_selfcheck_a_good_sample_passes_in_the_venvs_kernel(page, lab):
    report = check_notebook(page, lab, "selfcheck/good.ipynb")
    assert not report.problems, _explain(report)
    assert (report.demos, report.predicts) == (1, 1), _explain(report)
    # The kernel is this venv's python3, and clipkit imports in it.
    line = next(s for s in report.stdout.splitlines() if s.startswith(KERNEL_LINE))
    _, prefix, clipkit_file = line.split(" ")
    assert Path(prefix).resolve() == Path(sys.prefix).resolve(), line
    assert Path(clipkit_file).resolve().is_relative_to(REPO.resolve()), line


def test_selfcheck_each_fault_of_a_broken_sample_is_caught(page, lab):
    quick = Timeouts(widgets=5, react=3)  # every wait here is expected to run out
    report = check_notebook(page, lab, "selfcheck/broken.ipynb", quick)
    text = "\n".join(report.problems)
    expected = {
        "a cell that raises": "RuntimeError: clipkit self-check: a cell that raises",
        "a callback that raises": "clipkit self-check: broken callback",
        "a demo that does not react": "changed neither readout nor figure",
        "a Check that gives no feedback": "no feedback after choosing and clicking Check",
        "a widget that cannot display": "idget",  # 'Error displaying widget' or stuck 'Loading'
    }
    missed = [fault for fault, needle in expected.items() if needle not in text]
    assert not missed, f"the check missed: {missed}\n{_explain(report)}"
