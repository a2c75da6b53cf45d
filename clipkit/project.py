"""The repository's address, kept here alone, and the launch badges built from it.

README.md and every notebook carry badges and a Colab set-up cell that name the repository.
They are written from this module: change :data:`REPOSITORY`, then run
``python -m clipkit.project`` to rewrite them. ``tests/test_project.py`` fails while any copy
disagrees with this file.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPOSITORY = "clipkit-dev/clipkit"  # GitHub owner/name
BRANCH = "main"
ROOT = Path(__file__).resolve().parent.parent

BADGES_START = "<!-- badges:start -->"
BADGES_END = "<!-- badges:end -->"
_BADGES = re.compile(re.escape(BADGES_START) + r".*?" + re.escape(BADGES_END), re.DOTALL)


def repository_url() -> str:
    """``https://github.com/<owner>/<name>``."""
    return f"https://github.com/{REPOSITORY}"


def binder_url(notebook: str | None = None) -> str:
    """A mybinder.org link that opens JupyterLab, on ``notebook`` when one is given."""
    url = f"https://mybinder.org/v2/gh/{REPOSITORY}/{BRANCH}"
    return url + (f"?urlpath=lab/tree/notebooks/{notebook}" if notebook else "?urlpath=lab")


def colab_url(notebook: str) -> str:
    """A Colab link that opens ``notebooks/<notebook>`` straight from GitHub."""
    return (
        f"https://colab.research.google.com/github/{REPOSITORY}/blob/{BRANCH}/notebooks/{notebook}"
    )


def badges_markdown(notebook: str | None = None) -> str:
    """The Binder and Colab badges between their markers (Colab only for a given notebook)."""
    colab_target = notebook or "01-cliffs.ipynb"
    return (
        f"{BADGES_START}\n"
        f"[![Binder](https://mybinder.org/badge_logo.svg)]({binder_url(notebook)})\n"
        f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
        f"({colab_url(colab_target)})\n"
        f"{BADGES_END}"
    )


def colab_setup_source() -> str:
    """The set-up cell of every notebook.

    On Colab it clones clipkit beside the notebook and puts it on ``sys.path``: Colab already
    has torch, numpy, matplotlib and ipywidgets, so nothing of theirs is reinstalled. Anywhere
    else (JupyterLab, Binder, nbval) it does nothing but import.
    """
    return (
        "import sys\n"
        "\n"
        'if "google.colab" in sys.modules:  # only on Colab: fetch clipkit, reinstall nothing\n'
        f"    !git clone --quiet --depth 1 {repository_url()} /content/clipkit\n"
        '    sys.path.insert(0, "/content/clipkit")\n'
        "\n"
        "import clipkit"
    )


def expected_notebook_cells(path: Path) -> tuple[str, str]:
    """(badge markdown, set-up code) that notebook ``path`` should carry."""
    return badges_markdown(path.name), colab_setup_source()


def _rewrite_badges(text: str, badges: str) -> str:
    return _BADGES.sub(lambda _: badges, text)


def sync(root: Path = ROOT) -> list[Path]:
    """Rewrite the badges and set-up cells in README.md and notebooks/; return what changed."""
    changed = []
    readme = root / "README.md"
    old = readme.read_text(encoding="utf-8")
    new = _rewrite_badges(old, badges_markdown())
    if new != old:
        readme.write_text(new, encoding="utf-8")
        changed.append(readme)
    import nbformat  # a maintainer's tool: nbformat comes with JupyterLab, not with clipkit

    for path in sorted((root / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        badges, setup = expected_notebook_cells(path)
        touched = False
        for cell in nb["cells"]:
            source = cell["source"]
            if cell["cell_type"] == "markdown" and BADGES_START in source:
                fixed = _rewrite_badges(source, badges)
            elif cell["cell_type"] == "code" and '"google.colab" in sys.modules' in source:
                fixed = setup
            else:
                continue
            if fixed != source:
                cell["source"] = fixed
                touched = True
        if touched:
            nbformat.write(nb, path)
            changed.append(path)
    return changed


if __name__ == "__main__":
    for p in sync():
        print(f"rewrote {p.relative_to(ROOT)}")
    sys.exit(0)
