"""Question banks: the choices, the answer and the reason behind every choice.

A bank is a JSON file in ``data/questions/`` (``01-cliffs.json`` and so on). The question's text
lives in the notebook's markdown; the bank holds what a widget needs::

    {"bank": "01-cliffs",
     "questions": [{"id": "growth-50-steps",
                    "choices": ["about 6", "about 117"],
                    "answer": 1,
                    "reasons": ["why 'about 6' is wrong", "why 'about 117' is right"]}]}

``answer`` is the index of the right choice; ``reasons[i]`` explains choice ``i``. Every entry is
checked on loading, so a bad bank fails at once with a message that names the file and entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from clipkit.resources import load_json

_QUESTION_KEYS = {"id", "choices", "answer", "reasons"}


class BankError(ValueError):
    """A question bank that cannot be used, with the reason."""


@dataclass(frozen=True)
class Question:
    """One multiple-choice question from a bank."""

    id: str
    choices: tuple[str, ...]
    answer: int  # index into choices
    reasons: tuple[str, ...]  # one per choice

    def is_correct(self, index: int) -> bool:
        return index == self.answer


def _check_text_list(value: Any, what: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(s, str) and s.strip() for s in value):
        raise BankError(f"{where}: {what} must be a list of non-empty strings")
    return tuple(value)


def parse_question(entry: Any, where: str = "question") -> Question:
    """Check one bank entry and turn it into a :class:`Question`."""
    if not isinstance(entry, dict):
        raise BankError(f"{where}: an entry must be an object, not {type(entry).__name__}")
    missing, extra = _QUESTION_KEYS - entry.keys(), entry.keys() - _QUESTION_KEYS
    if missing:
        raise BankError(f"{where}: missing {sorted(missing)}")
    if extra:
        raise BankError(f"{where}: unknown keys {sorted(extra)}")
    qid = entry["id"]
    if not isinstance(qid, str) or not qid.strip():
        raise BankError(f"{where}: id must be a non-empty string")
    where = f"{where} {qid!r}"
    choices = _check_text_list(entry["choices"], "choices", where)
    if len(choices) < 2:
        raise BankError(f"{where}: needs at least two choices")
    if len(set(choices)) != len(choices):
        raise BankError(f"{where}: choices repeat")
    answer = entry["answer"]
    # bool is an int in Python; true/false in the JSON is a mistake, not an index.
    if not isinstance(answer, int) or isinstance(answer, bool):
        raise BankError(f"{where}: answer must be the index of the right choice")
    if not 0 <= answer < len(choices):
        raise BankError(f"{where}: answer {answer} is outside 0..{len(choices) - 1}")
    reasons = _check_text_list(entry["reasons"], "reasons", where)
    if len(reasons) != len(choices):
        raise BankError(f"{where}: {len(reasons)} reasons for {len(choices)} choices")
    return Question(qid, choices, answer, reasons)


def parse_bank(data: Any, where: str = "bank") -> dict[str, Question]:
    """Check a whole bank (already parsed from JSON); return its questions by id."""
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        raise BankError(f"{where}: expected an object with a 'questions' list")
    questions: dict[str, Question] = {}
    for i, entry in enumerate(data["questions"]):
        q = parse_question(entry, f"{where}, question {i}")
        if q.id in questions:
            raise BankError(f"{where}: question id {q.id!r} appears twice")
        questions[q.id] = q
    if not questions:
        raise BankError(f"{where}: no questions")
    return questions


@cache
def load_bank(name: str) -> dict[str, Question]:
    """The questions of ``data/questions/<name>.json``, checked, by id."""
    return parse_bank(load_json("questions", f"{name}.json"), f"data/questions/{name}.json")


def get_question(bank: str, qid: str) -> Question:
    """One question, with a clear error naming the bank's ids when ``qid`` is not there."""
    questions = load_bank(bank)
    if qid not in questions:
        raise KeyError(f"no question {qid!r} in bank {bank!r}; it has {sorted(questions)}")
    return questions[qid]
