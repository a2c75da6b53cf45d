"""clipkit.resources: data files beside the package, with a clear error when one is missing."""

from __future__ import annotations

import pytest

from clipkit import resources


def test_data_path_finds_the_question_banks():
    assert resources.data_path("questions").is_dir()
    assert resources.load_json("questions", "01-cliffs.json")["questions"]


def test_a_missing_file_says_where_and_why():
    with pytest.raises(resources.ResourceNotFoundError, match="nope.json.*clone of the repository"):
        resources.data_path("questions", "nope.json")


def test_missing_is_also_a_file_not_found_error():
    with pytest.raises(FileNotFoundError):
        resources.data_path("no-such-folder")
