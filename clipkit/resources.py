"""Where clipkit's data files live: the repository's ``data/`` folder, beside the package.

The question banks and the precomputed results ship with a clone of the repository (Binder,
Colab and ``pip install -e .`` all keep it), not inside the wheel, so they are found relative to
this file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


class ResourceNotFoundError(FileNotFoundError):
    """A data file that clipkit needs is not where it should be."""


def data_path(*parts: str) -> Path:
    """The path of ``data/<parts...>``, which must exist.

    >>> data_path("questions", "01-cliffs.json").name
    '01-cliffs.json'
    """
    path = DATA_DIR.joinpath(*parts)
    if not path.exists():
        raise ResourceNotFoundError(
            f"clipkit data file not found: {path}. The data/ folder comes with a clone of the "
            "repository; install clipkit from a clone (pip install -e .) rather than a wheel."
        )
    return path


def load_json(*parts: str) -> Any:
    """Parse ``data/<parts...>`` as JSON, naming the file in any error."""
    path = data_path(*parts)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from err
