"""Notebooks are stored clean: no outputs (they would give the predictions away), no execution
counts, no saved widget state, and the plain python3 kernel that every set-up provides."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def hygiene_problems(nb: nbformat.NotebookNode) -> list[str]:
    """Every way in which ``nb`` is not fit to be committed, one line each."""
    problems = []
    kernel = nb.metadata.get("kernelspec", {}).get("name")
    if kernel != "python3":
        problems.append(f"kernelspec is {kernel!r}, not 'python3'")
    if "widgets" in nb.metadata:
        problems.append("saved widget state in the notebook's metadata")
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("outputs"):
            problems.append(f"cell {i} carries outputs")
        if cell.get("execution_count") is not None:
            problems.append(f"cell {i} carries an execution count")
        if "widgets" in cell.get("metadata", {}):
            problems.append(f"cell {i} carries widget state")
    return problems


def _clean_notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), nbformat.v4.new_code_cell("1 + 1")]
    return nb


def test_checker_accepts_a_clean_notebook():
    assert hygiene_problems(_clean_notebook()) == []


@pytest.mark.parametrize(
    "spoil, expected",
    [
        (lambda nb: nb.cells[1].outputs.append({"output_type": "stream"}), "outputs"),
        (lambda nb: nb.cells[1].__setitem__("execution_count", 3), "execution count"),
        (lambda nb: nb.metadata.__setitem__("widgets", {"state": {}}), "widget state"),
        (lambda nb: nb.metadata.kernelspec.__setitem__("name", "venv"), "kernelspec"),
    ],
)
def test_checker_catches_each_problem(spoil, expected):
    nb = _clean_notebook()
    spoil(nb)
    problems = hygiene_problems(nb)
    assert len(problems) == 1 and expected in problems[0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_stored_notebook_is_clean(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert hygiene_problems(nb) == [], f"{path.name}: clear outputs before committing"
