"""Predict first: the learner commits to an answer before the demo can show it.

The question's text is in the notebook's markdown; the choices, the answer and the reasons come
from a question bank (:mod:`clipkit.widgets.bank`). Until the learner presses Check, nothing in
the widgets' state (which the front end receives) hints at the answer: the feedback is empty
and hidden, and the right choice is known only to the kernel.
"""

from __future__ import annotations

import html

import ipywidgets

from clipkit.widgets.bank import Question, get_question
from clipkit.widgets.display import widget_bundle
from clipkit.widgets.record import Answer, record_answer

ROOT_CLASS = "clipkit-predict"
COMMIT_CLASS = "clipkit-commit"
FEEDBACK_CLASS = "clipkit-feedback"


class PredictFirst:
    """A choice, a Check button and feedback that says right or wrong, and why.

    ``root`` is the widget to display (a notebook cell can also show the object itself).
    After Check, the choice is locked: the prediction is what the record keeps.
    """

    def __init__(self, question: Question, bank: str = ""):
        self.question = question
        self.key = f"{bank}/{question.id}" if bank else question.id
        self.result: Answer | None = None
        self.choice = ipywidgets.RadioButtons(
            options=list(question.choices),
            index=None,  # nothing picked: no default that could be mistaken for a hint
            description="Your prediction:",
            style={"description_width": "initial"},
            layout=ipywidgets.Layout(width="auto"),
        )
        self.check = ipywidgets.Button(description="Check", disabled=True, button_style="primary")
        self.check.add_class(COMMIT_CLASS)
        self.feedback = ipywidgets.HTML(value="")
        self.feedback.add_class(FEEDBACK_CLASS)
        self.feedback.layout.display = "none"
        self.root = ipywidgets.VBox([self.choice, self.check, self.feedback])
        self.root.add_class(ROOT_CLASS)
        self.choice.observe(self._on_pick, names="index")
        self.check.on_click(lambda _button: self.commit())

    @property
    def committed(self) -> bool:
        return self.result is not None

    def _on_pick(self, change) -> None:
        self.check.disabled = self.committed or change["new"] is None

    def select(self, choice: int | str) -> None:
        """Pick a choice by index or by its text (what a click on the radio button does)."""
        if isinstance(choice, str):
            choice = self.question.choices.index(choice)
        self.choice.index = choice

    def commit(self) -> Answer:
        """Check the picked choice: record it, lock the widgets and show the feedback."""
        if self.committed:
            return self.result
        index = self.choice.index
        if index is None:
            raise ValueError("pick a choice before checking")
        correct = self.question.is_correct(index)
        self.result = record_answer(self.key, index, correct)
        self.choice.disabled = True
        self.check.disabled = True
        self.feedback.value = self.feedback_html(index)
        self.feedback.layout.display = None  # back to the default: visible
        return self.result

    def feedback_html(self, index: int) -> str:
        """Right or wrong, the reason for the chosen option, and the right one when it differs."""
        q, esc = self.question, html.escape
        if q.is_correct(index):
            return f"<p><b>Right.</b> {esc(q.reasons[index])}</p>"
        return (
            f"<p><b>Not quite.</b> {esc(q.reasons[index])}</p>"
            f"<p><b>The answer is {esc(q.choices[q.answer])}.</b> {esc(q.reasons[q.answer])}</p>"
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        options = "; ".join(self.question.choices)
        return widget_bundle(self.root, f"Predict first. Choose one: {options}; then press Check.")


def predict(bank: str, question_id: str) -> PredictFirst:
    """The predict-first widget for question ``question_id`` of ``data/questions/<bank>.json``."""
    return PredictFirst(get_question(bank, question_id), bank)
