"""Which SciBench problem each OpenCompass prediction answers.

OpenCompass reads ``data/scibench/<book>.json`` of its own data bundle, in file order, so the
n-th prediction of ``scibench-<book>`` answers its n-th problem; which SciBench version that
bundle is, is not recorded. So each prediction is checked against the problem its place names,
by what the file holds of it: its ``gold`` (the stripped ``answer_number``) and its prompt
(which holds the stripped problem text). One that does not fit is looked up by the question its
prompt asks, else (no prompt kept) by a gold no other problem of the book has; one that fits
nothing is not graded, with a line. ``choose_version`` picks the data version that fits most.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scievals.scibench.dataset import Record
from scievals.scibench.opencompass import question
from scievals.scibench.regrade.layout import Dataset, Prediction

TAIL_CHARS = 4096
"""How far from its end a prompt is looked into, past the question: OpenCompass's templates end
with the question and a cue ("\\nAnswer:", "\\nExplanation for Problem 6: "), a chat template
adds a few tokens; a long prompt is not searched whole."""
QUESTION_STARTS = ("\n\nProblem 6: ", "\n\nProblem: ")
"""Where each template puts the question: after its instruction or few-shot examples and a blank
line (a bare "Problem 6: " is also the end of "Explanation for Problem 6: ")."""
QUESTION_ENDS = ("\nExplanation for Problem 6:", "\nAnswer:")


@dataclass(frozen=True)
class Mapped:
    """A prediction and the problem it answers (``index`` None: none; ``how`` says why)."""

    prediction: Prediction
    index: int | None
    how: str


def fits(prediction: Prediction, record: Record) -> bool:
    """Whether what the file kept of a prediction (gold, prompt) agrees with ``record``."""
    if prediction.gold is not None and prediction.gold.strip() != record.answer_number.strip():
        return False
    if prediction.prompt is None:
        return True
    asked = question(record.problem_text)
    return asked in prediction.prompt[-(len(asked) + TAIL_CHARS) :]


def asked_question(prompt: str) -> str | None:
    """The question OpenCompass's template put in ``prompt`` (after its last "\\n\\nProblem: "
    or "\\n\\nProblem 6: ", up to the cue that follows), or None where the prompt is not its
    template."""
    tail = prompt[-TAIL_CHARS * 8 :]
    for start_marker in QUESTION_STARTS:
        start = tail.rfind(start_marker)
        if start < 0:
            continue
        start += len(start_marker)
        ends = [e for e in (tail.find(m, start) for m in QUESTION_ENDS) if e >= 0]
        if ends:
            return tail[start : min(ends)]
    return None


def map_dataset(dataset: Dataset, records: Sequence[Record]) -> list[Mapped]:
    """Each prediction of one book's file with the problem it answers, in file order."""
    by_question: dict[str, list[int]] = {}
    by_gold: dict[str, list[int]] = {}
    for i, record in enumerate(records):
        by_question.setdefault(question(record.problem_text), []).append(i)
        by_gold.setdefault(record.answer_number.strip(), []).append(i)
    same_count = len(dataset.predictions) == len(records)
    mapped = []
    for prediction in dataset.predictions:
        i = prediction.position
        if i < len(records) and fits(prediction, records[i]):
            known = prediction.gold is not None or prediction.prompt is not None
            if known or same_count:
                mapped.append(Mapped(prediction, i, "order"))
                continue
        mapped.append(_looked_up(prediction, records, by_question, by_gold, dataset.book))
    return mapped


def _looked_up(
    prediction: Prediction,
    records: Sequence[Record],
    by_question: dict[str, list[int]],
    by_gold: dict[str, list[int]],
    book: str,
) -> Mapped:
    """A prediction whose place names a problem it does not fit, found by what it asked."""
    if prediction.prompt is not None:
        asked = asked_question(prediction.prompt)
        found = [j for j in by_question.get(asked or "", []) if fits(prediction, records[j])]
        if len(found) == 1:
            return Mapped(prediction, found[0], "prompt")
        if asked is None:
            why = "its prompt is none of OpenCompass's SciBench prompts"
        elif not found:
            why = f"no {book} problem has its prompt's question" + (
                " and gold" if prediction.gold is not None else ""
            )
        else:
            why = f"{book} problems {found} all have its prompt's question"
        return Mapped(prediction, None, why)
    if prediction.gold is not None:
        found = by_gold.get(prediction.gold.strip(), [])
        if len(found) == 1:
            return Mapped(prediction, found[0], "gold")
        why = "no" if not found else f"{len(found)}"
        return Mapped(prediction, None, f"{why} {book} problems have its gold {prediction.gold!r}")
    return Mapped(
        prediction,
        None,
        "the file keeps neither its prompt nor its gold, and its count differs from the book's "
        f"({len(records)} problems)",
    )
