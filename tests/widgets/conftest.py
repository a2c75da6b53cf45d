"""Widget tests run with no kernel and no browser, under ipywidgets 8 and 7.7 (make widgets7)."""

from __future__ import annotations

import pytest

from clipkit.widgets import clear_answers


@pytest.fixture(autouse=True)
def fresh_record():
    clear_answers()
    yield
    clear_answers()
