"""Grading SciBench replies made elsewhere (a JSONL of ``{"book", "index", "response"}``).

Text replies only: the tool settings need their code run, which only the task does (in a sandbox).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from scievals.scibench.answers import faithful_score, official_unit, robust_score
from scievals.scibench.dataset import Record, Source
from scievals.scibench.metrics import Row, summary


def grade_lines(
    lines: Iterable[str], source: Source, scorer: str = "robust"
) -> Iterator[dict[str, Any]]:
    """One result per input line, in order; a bad line raises ValueError naming its number."""
    books: dict[str, list[Record]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            book, index, response = item["book"], int(item["index"]), item["response"]
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"line {number}: expected {{book, index, response}} ({exc})") from exc
        if book not in books:
            books[book] = source.book(book)
        if not 0 <= index < len(books[book]):
            raise ValueError(f"line {number}: {book} has {len(books[book])} problems, no {index}")
        record = books[book][index]
        unit = official_unit(record.unit)
        score = faithful_score if scorer == "faithful" else robust_score
        verdict = score(str(response), record.answer_number, unit)
        yield {
            "book": book,
            "index": index,
            "correct": verdict.correct,
            "parsed": verdict.parsed,
            "rule": verdict.rule,
            "extracted": verdict.extracted,
        }


def grade_file(
    path: Path, version: str = "main", scorer: str = "robust", data_dir: str | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Grade a JSONL file: the per-line results and the summary (counts, accuracies, CIs)."""
    if scorer not in ("faithful", "robust"):
        raise ValueError(f"--scorer must be faithful or robust, not {scorer!r}")
    source = Source(version, data_dir)
    with open(path, encoding="utf-8") as fh:
        results = list(grade_lines(fh, source, scorer))
    rows = [Row(r["book"], r["correct"], r["extracted"]) for r in results]
    return results, {"scorer": scorer, "data_version": source.describe(), **summary(rows)}
