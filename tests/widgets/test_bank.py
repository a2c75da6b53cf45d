"""Question banks: loading, and a clear error for each way a bank can be wrong."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clipkit import resources
from clipkit.widgets import BankError, get_question, load_bank, parse_bank

GOOD = {
    "questions": [
        {"id": "q1", "choices": ["a", "b"], "answer": 1, "reasons": ["not a", "b because"]},
    ]
}


def spoiled(change):
    bank = copy.deepcopy(GOOD)
    change(bank["questions"][0], bank)
    return bank


def test_a_good_bank_parses():
    q = parse_bank(GOOD)["q1"]
    assert q.choices == ("a", "b") and q.answer == 1 and q.is_correct(1) and not q.is_correct(0)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda q, b: b.pop("questions"), "'questions' list"),
        (lambda q, b: b["questions"].clear(), "no questions"),
        (lambda q, b: b["questions"].append(copy.deepcopy(q)), "appears twice"),
        (lambda q, b: q.pop("reasons"), "missing ['reasons']"),
        (lambda q, b: q.__setitem__("hint", "x"), "unknown keys ['hint']"),
        (lambda q, b: q.__setitem__("id", ""), "id must be"),
        (lambda q, b: q.__setitem__("choices", ["only"]), "at least two"),
        (lambda q, b: q.__setitem__("choices", ["a", "a"]), "repeat"),
        (lambda q, b: q.__setitem__("choices", ["a", ""]), "non-empty strings"),
        (lambda q, b: q.__setitem__("answer", 2), "outside 0..1"),
        (lambda q, b: q.__setitem__("answer", -1), "outside 0..1"),
        (lambda q, b: q.__setitem__("answer", True), "index of the right choice"),
        (lambda q, b: q.__setitem__("answer", "b"), "index of the right choice"),
        (lambda q, b: q.__setitem__("reasons", ["one"]), "1 reasons for 2 choices"),
    ],
)
def test_a_bad_bank_fails_with_a_clear_message(change, message):
    with pytest.raises(BankError, match=None) as err:
        parse_bank(spoiled(change), "test bank")
    assert message in str(err.value) and "test bank" in str(err.value)


def test_an_entry_that_is_not_an_object_is_named():
    with pytest.raises(BankError, match="question 0: an entry must be an object"):
        parse_bank({"questions": ["q1"]})


def test_the_shipped_banks_load():
    for path in resources.data_path("questions").glob("*.json"):
        assert load_bank(path.stem), path.name


def test_unknown_question_names_the_bank_ids():
    with pytest.raises(KeyError, match="growth-50-steps"):
        get_question("01-cliffs", "no-such-question")


def test_missing_data_file_says_where_it_looked():
    with pytest.raises(resources.ResourceNotFoundError, match="no-such-bank.json"):
        load_bank("no-such-bank")


def test_invalid_json_names_the_file(tmp_path, monkeypatch):
    (tmp_path / "questions").mkdir()
    (tmp_path / "questions" / "broken.json").write_text("{", encoding="utf-8")
    monkeypatch.setattr(resources, "DATA_DIR", tmp_path)
    with pytest.raises(ValueError, match="broken.json is not valid JSON"):
        resources.load_json("questions", "broken.json")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
entries = st.fixed_dictionaries(
    {},
    optional={
        "id": json_values | st.text(min_size=1, max_size=4),
        "choices": json_values | st.lists(st.text(min_size=1, max_size=3), max_size=4),
        "answer": json_values,
        "reasons": json_values | st.lists(st.text(min_size=1, max_size=3), max_size=4),
    },
)


@settings(max_examples=100, deadline=None)
@given(st.one_of(json_values, st.fixed_dictionaries({"questions": st.lists(entries, max_size=3)})))
def test_any_json_either_parses_or_raises_bank_error(data):
    try:
        questions = parse_bank(data)
    except BankError:
        return
    for q in questions.values():  # whatever passed is usable by a widget
        assert 0 <= q.answer < len(q.choices) == len(q.reasons) >= 2
