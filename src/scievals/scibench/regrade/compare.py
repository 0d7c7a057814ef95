"""A run's score as OpenCompass recorded it, against the official rule's, problem by problem.

For each run (a model under one of OpenCompass's prompts): the accuracy its results files
record; OpenCompass's own rule re-applied (its extraction and exact string match, the
``opencompass`` scorer); the official rule (``faithful``) with its 95% interval; the difference;
``robust`` beside it; and every problem the source and the official rule judge differently, with
its cause where one can be named (``CAUSES``). The source's verdict of a problem is its results
file's (``details``) where it kept one, else its own rule's on the same reply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from scievals.regrade_out import Row as TableRow
from scievals.regrade_out import columns, difference_table
from scievals.scibench.faithful import official_extract
from scievals.scibench.metrics import Row, summary
from scievals.scibench.regrade.grading import Graded, Item
from scievals.scibench.regrade.layout import VARIANTS, Dataset, Recorded
from scievals.scibench.units import official_unit

QUOTED = 60
"""Characters of an answer a sentence quotes."""
CAUSES = ("recorded", "gold", "scale", "extraction", "exact match")
"""``recorded``: the results file's verdict is not what OpenCompass's rule gives the reply;
``gold``: the official code cannot read the gold as a number; ``scale``: the unit carries 10^k,
which the official rule multiplies into the gold and OpenCompass drops; ``extraction``: the two
rules read different answers from the reply; ``exact match``: the same answer, within the
official 5% but not the gold's string."""


def source_verdict(item: Item) -> tuple[bool, str]:
    """The source's verdict of one problem, and where it comes from (``recorded``: its results
    file's details; ``rule``: OpenCompass's rule re-applied to the reply)."""
    if item.recorded is not None:
        return item.recorded[1], "recorded"
    return bool(item.verdicts["opencompass"]["correct"]), "rule"


def cause(item: Item) -> tuple[str | None, str]:
    """(kind, sentence) for a problem the source and the official rule judge differently."""
    ours, theirs = item.verdicts["faithful"], item.verdicts["opencompass"]
    gold = item.record.answer_number.strip()
    if item.recorded is not None and item.recorded[1] != theirs["correct"]:
        return (
            "recorded",
            f"its results file records {_word(item.recorded[1])} (extracted "
            f"{_q(item.recorded[0])}); OpenCompass's extraction and exact match give "
            f"{_word(theirs['correct'])} on this reply ({_q(theirs['parsed'])}): another evaluator "
            "or postprocessor, or an edited file",
        )
    if not _number(gold):
        return (
            "gold",
            f"the official code cannot read the gold {_q(gold)} as a number (float() fails): wrong "
            "for every reply",
        )
    official = official_extract(item.response)
    if official is None:
        return (
            "extraction",
            "no \\boxed{...} that the official rule reads; OpenCompass read "
            f"{_q(theirs['parsed'])} ({_how(theirs['rule'])})",
        )
    if official != theirs["parsed"]:
        return (
            "extraction",
            f"OpenCompass read {_q(theirs['parsed'])} ({_how(theirs['rule'])}), the official rule "
            f"{_q(official)} (the last \\boxed{{}})",
        )
    unit = official_unit(item.record.unit)
    if unit.rescaled:
        k = unit.exponent
        return (
            "scale",
            f"the unit {_q(unit.raw.strip())} carries 10^{k}: the official rule compares "
            f"{_q(ours['parsed'])} with {gold} x 10^{k}, OpenCompass {_q(theirs['parsed'])} with the "
            f"bare {_q(gold)}",
        )
    if ours["correct"]:
        return (
            "exact match",
            f"both read {_q(official)}: within the official 5% of {gold}, but OpenCompass asks for "
            "the gold's string exactly",
        )
    return None, f"the official rule: {ours['rule']} ({_q(ours['parsed'])})"


def _q(value: object) -> str:
    """A value quoted on one short line: a parsed answer may be a whole reply."""
    text = str(value).replace("\n", "\\n")
    return f"'{text[:QUOTED]}...'" if len(text) > QUOTED else f"'{text}'"


def _how(rule: str) -> str:
    """How OpenCompass's extraction read a reply, from its scorer's rule."""
    return {
        "opencompass: boxed, exact match": 'the first \\boxed{} after the first "answer is"',
        "opencompass: last number, exact match": "the last number",
    }.get(rule, "the whole text: no number")


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _word(correct: bool) -> str:
    return "right" if correct else "wrong"


def compare(graded: Graded) -> dict[str, Any]:
    """The comparison of one run (plain JSON)."""
    run = graded.run
    scores = {s: _score(graded.items, s) for s in ("opencompass", "faithful", "robust")}
    theirs = _recorded(graded)
    official = scores["faithful"]
    difference = None
    if theirs is not None and theirs["percentage"] is not None:
        recorded_books = {d.book for d, _, _ in _accuracies(graded)}
        same = _score([i for i in graded.items if i.record.book in recorded_books], "faithful")
        theirs["official_rule_on_these_books"] = same
        difference = same["percentage"] - theirs["percentage"]
    return {
        "run": run.label,
        "experiment": run.experiment,
        "model": run.model,
        "prompt_type": run.prompt_type,
        "setting": VARIANTS[run.prompt_type],
        "data_version": graded.version,
        "books": [
            {
                "abbr": d.abbr,
                "files": list(d.files),
                "predictions": len(d.predictions),
                "results_file": d.recorded.file if d.recorded else None,
                "recorded_accuracy": d.recorded.accuracy if d.recorded else None,
            }
            for d in run.datasets
        ],
        "predictions": sum(len(d.predictions) for d in run.datasets),
        "graded": len(graded.items),
        "source": theirs,
        "opencompass_rule": scores["opencompass"],
        "official_rule": official,
        "robust": scores["robust"],
        "difference_percentage_points": difference,
        "difference": "the official rule minus the source, on the books the source recorded",
        "differing_problems": _differing(graded.items),
        "recorded_differences": _recorded_differences(graded),
        "not_graded": list(graded.not_graded),
        "notes": list(run.notes),
        "verdicts": [
            {
                "abbr": i.abbr,
                "position": i.position,
                "book": i.record.book,
                "index": i.record.index,
                "source": dict(zip(("correct", "from"), source_verdict(i), strict=True)),
                **{s: _as_logged(i.verdicts[s]) for s in ("opencompass", "faithful", "robust")},
            }
            for i in graded.items
        ],
    }


def _as_logged(verdict: Mapping[str, Any]) -> dict[str, Any]:
    """A verdict with its parsed answer as text, as the run's log keeps it (``Score.answer``):
    a resumed re-grade, which reads the verdicts back from the log, writes the same file."""
    parsed = verdict["parsed"]
    return {**verdict, "parsed": None if parsed is None else str(parsed)}


def _score(items: Sequence[Item], scorer: str) -> dict[str, Any]:
    """A scorer's counts, accuracy and interval over the graded problems."""
    result = summary([Row(i.record.book, bool(i.verdicts[scorer]["correct"])) for i in items])
    low, high = result["ci_low"], result["ci_high"]
    return {
        "correct": result["correct"],
        "total": result["total"],
        "percentage": 100 * float(result["micro"]),  # type: ignore[arg-type]
        "interval_95": [100 * low, 100 * high] if low is not None and high is not None else None,
        "by_book": result["by_book"],
    }


def _accuracies(graded: Graded) -> list[tuple[Dataset, Recorded, float]]:
    """The run's books whose results file records an accuracy."""
    return [
        (d, d.recorded, d.recorded.accuracy)
        for d in graded.run.datasets
        if d.recorded is not None and d.recorded.accuracy is not None
    ]


def _recorded(graded: Graded) -> dict[str, Any] | None:
    """The source's numbers: each book's recorded accuracy times its predictions, summed (its
    summarizer's unweighted mean over books beside it)."""
    books = _accuracies(graded)
    if not books:
        return None
    correct = sum(round(accuracy * len(d.predictions) / 100) for d, _, accuracy in books)
    total = sum(len(d.predictions) for d, _, _ in books)
    return {
        "results_files": [r.file for _, r, _ in books],
        "books": len(books),
        "correct": correct,
        "total": total,
        "percentage": 100 * correct / total if total else None,
        "opencompass_average": sum(accuracy for _, _, accuracy in books) / len(books),
        "per_problem": any(r.verdicts for _, r, _ in books),
    }


def _recorded_differences(graded: Graded) -> list[str]:
    """A line per book whose recorded accuracy is not what OpenCompass's rule gives its
    predictions (where every prediction was graded): the results are not of these replies, or
    not of this rule."""
    lines = []
    for d, _, accuracy in _accuracies(graded):
        items = [i for i in graded.items if i.abbr == d.abbr]
        if len(items) != len(d.predictions):
            continue
        n = len(items)
        recorded = round(accuracy * n / 100)
        rule = sum(bool(i.verdicts["opencompass"]["correct"]) for i in items)
        if recorded != rule:
            lines.append(
                f"{d.abbr}: its results file records {accuracy:g}% ({recorded}/{n}); "
                f"OpenCompass's rule gives its predictions {rule}/{n}"
            )
    return lines


def _differing(items: Sequence[Item]) -> list[dict[str, Any]]:
    rows = []
    for item in items:
        theirs, basis = source_verdict(item)
        ours = bool(item.verdicts["faithful"]["correct"])
        if theirs == ours:
            continue
        kind, why = cause(item)
        rows.append(
            {
                "book": item.record.book,
                "index": item.record.index,
                "abbr": item.abbr,
                "position": item.position,
                "source": theirs,
                "source_from": basis,
                "official": ours,
                "cause": kind,
                "detail": why,
            }
        )
    return rows


def table(comparisons: Sequence[dict[str, Any]]) -> str:
    """The terminal summary: a row per run, then each run's differing problems."""
    head = (
        "run",
        "graded",
        "source",
        "opencompass rule",
        "official rule (95% CI)",
        "diff",
        "robust (95% CI)",
        "differ",
    )
    rows = [head]
    for c in comparisons:
        theirs, diff = c["source"], c["difference_percentage_points"]
        rows.append(
            (
                c["run"],
                f"{c['graded']}/{c['predictions']}",
                _recorded_count(theirs, len(c["books"])) if theirs else "not recorded",
                _count(c["opencompass_rule"]),
                _count(c["official_rule"], interval=True),
                f"{diff:+.1f} pp" if diff is not None else "-",
                _count(c["robust"], interval=True),
                str(len(c["differing_problems"])),
            )
        )
    lines = columns(rows)
    for c in comparisons:
        differ, books = c["differing_problems"], c["recorded_differences"]
        if not differ and not books:
            continue
        lines += ["", f"{c['run']}: {len(differ)} problems differ (data {c['data_version']})"]
        lines += [f"  {line}" for line in books]
        if not differ:
            continue
        lines += difference_table(("problem", "source", "official"), difference_rows(c))
    return "\n".join(lines)


def difference_rows(comparison: Mapping[str, Any]) -> list[TableRow]:
    """The problems that the source and the official rule judge differently, as the table and
    the run's log name them."""
    return [
        (
            f"{r['book']} {r['index']}",
            _word(r["source"]) + (" (rule)" if r["source_from"] == "rule" else ""),
            _word(r["official"]),
            r,
        )
        for r in comparison["differing_problems"]
    ]


def source_scores(comparison: Mapping[str, Any]) -> dict[str, float | None]:
    """The score OpenCompass recorded (percent, its results files) for each metric of a scievals
    SciBench log: its own rule's; it records nothing of the official rule or of ``robust``."""
    theirs = comparison["source"] or {}
    return {"faithful": None, "robust": None, "opencompass": theirs.get("percentage")}


def _recorded_count(theirs: Mapping[str, Any], books: int) -> str:
    """The source's score, and over how many of the run's books where not all."""
    text = _count(theirs)
    return text if theirs["books"] == books else f"{text}, {theirs['books']} of {books} books"


def _count(part: Mapping[str, Any], interval: bool = False) -> str:
    text = f"{part['correct']}/{part['total']} ({part['percentage']:.1f}%)"
    if interval and part.get("interval_95"):
        low, high = part["interval_95"]
        text += f" [{low:.1f}, {high:.1f}]"
    return text


def to_json(comparisons: Sequence[dict[str, Any]], about: Mapping[str, Any]) -> str:
    """The file ``--out`` gets: what was run, and every run's comparison."""
    return json.dumps({**about, "runs": list(comparisons)}, indent=1) + "\n"
