"""The repository's address lives in clipkit/project.py alone; README and notebooks follow it."""

from __future__ import annotations

import shutil

import nbformat

from clipkit import project


def test_readme_and_notebooks_agree_with_project_py(tmp_path):
    # sync() on a copy must find nothing to rewrite; otherwise run `python -m clipkit.project`.
    shutil.copy(project.ROOT / "README.md", tmp_path / "README.md")
    shutil.copytree(project.ROOT / "notebooks", tmp_path / "notebooks")
    assert project.sync(tmp_path) == []


def test_sync_rewrites_a_stale_address(tmp_path):
    (tmp_path / "notebooks").mkdir()
    stale = project.badges_markdown().replace(project.REPOSITORY, "someone/old-name")
    (tmp_path / "README.md").write_text(f"# x\n{stale}\n", encoding="utf-8")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# t\n{stale}"),
        nbformat.v4.new_code_cell(project.colab_setup_source().replace(project.REPOSITORY, "x/y")),
    ]
    nbformat.write(nb, tmp_path / "notebooks" / "01-cliffs.ipynb")
    assert len(project.sync(tmp_path)) == 2
    assert "someone/old-name" not in (tmp_path / "README.md").read_text(encoding="utf-8")
    cells = nbformat.read(tmp_path / "notebooks" / "01-cliffs.ipynb", as_version=4).cells
    assert project.REPOSITORY in cells[0].source and project.REPOSITORY in cells[1].source
    assert "x/y" not in cells[1].source


def test_every_notebook_has_badges_and_the_setup_cell():
    for path in sorted((project.ROOT / "notebooks").glob("*.ipynb")):
        sources = [c.source for c in nbformat.read(path, as_version=4).cells]
        assert any(project.BADGES_START in s for s in sources[:2]), path.name
        assert project.colab_setup_source() in sources, path.name
