"""Widgets for the notebooks: predict-first questions and interactive demos.

>>> from clipkit import widgets
>>> q = widgets.predict("01-cliffs", "growth-50-steps")   # a question from a bank
>>> q.committed, q.feedback.value                         # nothing shown before Check
(False, '')

Every demo is a :class:`Demo`: ``demo.controls`` (name -> slider), ``demo.update(**values)``,
``demo.state`` (the numbers on screen) and ``demo.root`` (the widget to display).
"""

from clipkit.widgets.bank import BankError, Question, get_question, load_bank, parse_bank
from clipkit.widgets.demo import Demo
from clipkit.widgets.predict import PredictFirst, predict
from clipkit.widgets.record import Answer, answers, clear_answers, on_answer

__all__ = [
    "Answer",
    "BankError",
    "Demo",
    "PredictFirst",
    "Question",
    "answers",
    "clear_answers",
    "get_question",
    "load_bank",
    "on_answer",
    "parse_bank",
    "predict",
]
