"""Grading SciBench replies made elsewhere (a JSONL of ``{"book", "index", "response"}``).

Text replies only: the tool settings need their code run, which only the task does (in a sandbox).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, cast, get_args

from scievals.inputs import InputError, JsonLine, one_of, read_jsonl
from scievals.scibench.dataset import Record, Source
from scievals.scibench.faithful import faithful_score
from scievals.scibench.metrics import Row, summary
from scievals.scibench.opencompass import opencompass_score
from scievals.scibench.robust import robust_score
from scievals.scibench.units import official_unit
from scievals.scibench.verdict import Verdict

GradeScorer = Literal["faithful", "robust", "opencompass"]
GRADE_SCORERS: tuple[GradeScorer, ...] = get_args(GradeScorer)
FIELDS = {"book": str, "index": int, "response": str}


def _opencompass(reply: str, answer_number: str, unit: object) -> Verdict:
    return opencompass_score(reply, answer_number)  # it never sees the unit


SCORE = {"faithful": faithful_score, "robust": robust_score, "opencompass": _opencompass}


def grade_lines(
    lines: Iterable[JsonLine], source: Source, scorer: GradeScorer = "robust"
) -> Iterator[dict[str, Any]]:
    """One result per input line, in order; a line naming no problem is an InputError."""
    books: dict[str, list[Record]] = {}
    score = SCORE[scorer]
    for line in lines:
        book, index, response = line.values
        if book not in books:
            try:
                books[book] = source.book(book)
            except InputError as exc:
                raise line.error(str(exc)) from None
        if not 0 <= index < len(books[book]):
            raise line.error(f"{book} has {len(books[book])} problems, no {index}")
        record = books[book][index]
        try:
            verdict = score(response, record.answer_number, official_unit(record.unit))
        except Exception as exc:  # noqa: BLE001 - the backstop: one reply never stops the run
            verdict = Verdict(False, None, f"scorer-error: {type(exc).__name__}", False)
        yield {
            "book": book,
            "index": index,
            "correct": verdict.correct,
            "parsed": verdict.parsed,
            "rule": verdict.rule,
            "extracted": verdict.extracted,
        }


def read_replies(path: Path) -> list[JsonLine]:
    """The input's lines, checked; a problem given twice is an error, not a choice."""
    return list(read_jsonl(path, FIELDS, unique=("book", "index"), noun="problem"))


def grade_file(
    path: Path,
    version: str = "main",
    scorer: str = "robust",
    data_dir: str | None = None,
    decided: Mapping[tuple[str, int], dict[str, Any]] | None = None,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Grade a JSONL file: the per-line results (in its order) and the summary (counts,
    accuracies, CI). Problems in ``decided`` (an interrupted run's results) are not graded
    again; ``on_result`` gets each new result as it is decided."""
    chosen = cast(GradeScorer, one_of("--scorer", scorer, GRADE_SCORERS))
    source = Source(version, data_dir)
    lines = read_replies(path)
    done = dict(decided or {})
    fresh = grade_lines((x for x in lines if x.values[:2] not in done), source, chosen)
    results = []
    for line in lines:
        result = done.get(line.values[:2])
        if result is None:
            result = next(fresh)
            if on_result is not None:
                on_result(result)
        results.append(result)
    rows = [Row(r["book"], r["correct"], r["extracted"]) for r in results]
    return results, {"scorer": chosen, "data_version": source.describe(), **summary(rows)}
