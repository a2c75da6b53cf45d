"""Every notebook, run in JupyterLab in a real Chromium, as a learner would use it.

For each notebooks/*.ipynb (found when the tests are collected): run all cells; no kernel error
or traceback, every widget renders; each demo (.clipkit-demo) reacts when its first slider moves;
the first predict-first widget (.clipkit-predict) stays silent until Check, then answers.
The self-checks run first, on two notebooks written for the purpose, one good and one broken,
so that a check which could never fail would be noticed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from labcheck import KERNEL_LINE, REPO, Timeouts

NOTEBOOKS = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
GOOD, BROKEN = "selfcheck/good.ipynb", "selfcheck/broken.ipynb"


def _explain(report) -> str:
    lines = [f"{report.path}: {len(report.problems)} problem(s)"]
    lines += [f"  - {p}" for p in report.problems]
    lines += [f"  (note: {n})" for n in report.notes]
    return "\n".join(lines)


@pytest.mark.browser_notebook(GOOD)
def test_selfcheck_a_good_sample_passes_in_the_venvs_kernel(checker):
    report = checker.check(GOOD)
    assert not report.problems, _explain(report)
    assert (report.demos, report.predicts) == (1, 1), _explain(report)
    # The kernel is this venv's python3, and clipkit imports in it.
    line = next(s for s in report.stdout.splitlines() if s.startswith(KERNEL_LINE))
    _, prefix, clipkit_file = line.split(" ")
    assert Path(prefix).resolve() == Path(sys.prefix).resolve(), line
    assert Path(clipkit_file).resolve().is_relative_to(REPO.resolve()), line


@pytest.mark.browser_notebook(BROKEN)
def test_selfcheck_each_fault_of_a_broken_sample_is_caught(checker):
    quick = Timeouts(widgets=5, react=3)  # the waits for what never comes run out sooner
    report = checker.check(BROKEN, quick)
    text = "\n".join(report.problems)
    expected = {
        "a cell that raises": "kernel error: RuntimeError: clipkit self-check: a cell that raises",
        "a callback that raises": "kernel error: ValueError: clipkit self-check: broken callback",
        "a demo that does not react": "changed neither readout nor figure",
        "a Check that gives no feedback": "no feedback after choosing and clicking Check",
        "a widget that cannot display": "widget failed: Error displaying widget",
    }
    missed = [fault for fault, needle in expected.items() if needle not in text]
    assert not missed, f"the check missed: {missed}\n{_explain(report)}"


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.browser_notebook(f"notebooks/{n}")) for n in NOTEBOOKS],
)
def test_notebook_runs_and_its_widgets_respond(checker, name):
    report = checker.check(f"notebooks/{name}")
    assert not report.problems, _explain(report)
