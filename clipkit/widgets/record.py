"""What the learner has answered in this session, kept in memory and keyed by question.

Predict-first widgets write here when the learner commits; a later "Check yourself" quiz or a
persistent progress store reads :func:`answers` or subscribes with :func:`on_answer`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Answer:
    """One committed answer."""

    question: str  # "<bank>/<question id>"
    choice: int  # index of the chosen option
    correct: bool
    timestamp: float  # seconds since the epoch (time.time())
    attempt: int  # 1 for the first commit to this question, 2 for the next, ...


_record: dict[str, Answer] = {}
_listeners: list[Callable[[Answer], None]] = []


def record_answer(question: str, choice: int, correct: bool) -> Answer:
    """Store (and return) the learner's latest answer to ``question``; tell the listeners."""
    previous = _record.get(question)
    answer = Answer(question, choice, correct, time.time(), previous.attempt + 1 if previous else 1)
    _record[question] = answer
    for listener in list(_listeners):
        listener(answer)
    return answer


def answers() -> dict[str, dict]:
    """A copy of the record: ``{question: {"choice", "correct", "timestamp", "attempt"}}``."""
    return {q: {k: v for k, v in asdict(a).items() if k != "question"} for q, a in _record.items()}


def on_answer(listener: Callable[[Answer], None]) -> Callable[[], None]:
    """Call ``listener(answer)`` after every commit; returns a function that unsubscribes."""
    _listeners.append(listener)
    return lambda: _listeners.remove(listener) if listener in _listeners else None


def clear_answers() -> None:
    """Forget every answer (a fresh start, and test isolation)."""
    _record.clear()
