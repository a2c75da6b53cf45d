"""Predict first: nothing is revealed before the learner commits; feedback and a record after."""

from __future__ import annotations

import json

import pytest

from clipkit.widgets import PredictFirst, answers, on_answer, parse_bank, predict
from clipkit.widgets.display import WIDGET_VIEW_MIME

BANK = {
    "questions": [
        {
            "id": "q",
            "choices": ["about 6", "about 117"],
            "answer": 1,
            "reasons": ["REASON-WRONG compounding", "REASON-RIGHT 1.1^50"],
        }
    ]
}


def make() -> PredictFirst:
    return PredictFirst(parse_bank(BANK)["q"], "bank")


def rendered_state(widget) -> str:
    """Everything the front end receives about ``widget`` and its children, as one string."""
    parts, stack = [], [widget]
    while stack:
        w = stack.pop()
        state = w.get_state()
        parts.append(json.dumps({k: v for k, v in state.items() if isinstance(v, str | list)}))
        stack.extend(getattr(w, "children", ()))
    return " ".join(parts)


def test_nothing_is_revealed_before_commit():
    q = make()
    state = rendered_state(q.root)
    assert "REASON" not in state and "Right" not in state and "Not quite" not in state
    assert q.feedback.value == "" and q.feedback.layout.display == "none"
    assert q.choice.index is None, "no choice is preselected"
    assert q.check.disabled, "Check waits for a choice"
    assert "117" not in q._repr_mimebundle_()["text/plain"].split("Choose one:")[0]
    assert answers() == {}


def test_picking_enables_check_but_reveals_nothing():
    q = make()
    q.select("about 6")
    assert not q.check.disabled
    assert q.feedback.value == "" and answers() == {}


def test_a_wrong_commit_says_why_and_gives_the_answer():
    q = make()
    q.select(0)
    q.check.click()  # what the browser's click does
    assert q.feedback.layout.display != "none"
    assert "Not quite" in q.feedback.value and "REASON-WRONG" in q.feedback.value
    assert "about 117" in q.feedback.value and "REASON-RIGHT" in q.feedback.value
    record = answers()["bank/q"]
    assert record["choice"] == 0 and record["correct"] is False and record["attempt"] == 1
    assert record["timestamp"] > 0


def test_a_right_commit_says_right_and_why():
    q = make()
    q.select(1)
    answer = q.commit()
    assert answer.correct and "Right" in q.feedback.value and "REASON-RIGHT" in q.feedback.value
    assert "REASON-WRONG" not in q.feedback.value


def test_the_prediction_is_locked_once_checked():
    q = make()
    q.select(0)
    q.commit()
    assert q.choice.disabled and q.check.disabled
    q.commit()  # a second press changes nothing
    assert answers()["bank/q"]["attempt"] == 1


def test_a_new_widget_for_the_same_question_counts_another_attempt():
    for choice in (0, 1):
        q = make()
        q.select(choice)
        q.commit()
    record = answers()["bank/q"]
    assert record["attempt"] == 2 and record["correct"] is True


def test_commit_without_a_choice_is_an_error():
    with pytest.raises(ValueError, match="pick a choice"):
        make().commit()


def test_listeners_hear_every_commit_and_can_unsubscribe():
    heard = []
    stop = on_answer(heard.append)
    q = make()
    q.select(1)
    q.commit()
    stop()
    q2 = make()
    q2.select(0)
    q2.commit()
    assert [a.question for a in heard] == ["bank/q"] and heard[0].correct


def test_the_answers_record_is_a_copy():
    q = make()
    q.select(1)
    q.commit()
    answers()["bank/q"]["correct"] = False
    assert answers()["bank/q"]["correct"] is True


def test_dom_classes_for_the_browser_test():
    q = make()
    assert "clipkit-predict" in q.root._dom_classes
    assert "clipkit-commit" in q.check._dom_classes
    assert "clipkit-feedback" in q.feedback._dom_classes


def test_display_bundle_is_the_widget_with_a_text_fallback():
    q = make()
    bundle = q._repr_mimebundle_()
    assert bundle[WIDGET_VIEW_MIME]["model_id"] == q.root.model_id
    assert "about 6" in bundle["text/plain"]


def test_feedback_escapes_html_from_the_bank():
    bank = json.loads(json.dumps(BANK))
    bank["questions"][0]["reasons"][1] = "<script>x</script>"
    q = PredictFirst(parse_bank(bank)["q"])
    q.select(1)
    q.commit()
    assert "<script>" not in q.feedback.value


def test_predict_loads_from_a_bank_file():
    q = predict("01-cliffs", "growth-50-steps")
    assert q.key == "01-cliffs/growth-50-steps" and len(q.choice.options) == 4
