"""Published figures (``published.csv``, shipped with the package) and the protocols they hold for.

Each row of ``published.csv`` is one published value: benchmark, protocol, model, metric (SciCode
``main`` or ``sub``, SciBench ``faithful``), book (SciBench per-book figures), the value as
published in percent, or the count and total it was published as, and its source with a link.
Sources: shared/specs/scicode.md §11 (leaderboard, paper Table 3), protocols.md (SciCode-Verified,
regrade_summary.json), scibench.md §5 (paper Table 3), hal-harness PR #149 (HAL's Codex agent),
NVIDIA Model-Optimizer's Nemotron-3-Nano tutorial (NeMo Evaluator's SciCode, 8 repeats).

A protocol is named after the preset that reproduces it (docs/presets.md); ``PROTOCOLS`` says
which protocol record values a run must have for the figure to be comparable with it. A published
number is shown only beside such runs: anything else (291 or 338 steps, chat prompts, the
main-branch SciBench data) is not comparable.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

TABLE = "published.csv"


@dataclass(frozen=True)
class Reference:
    """One model's published figures under one protocol, from one source.

    ``metrics`` uses the report's metric keys; ``requires`` maps a protocol key to the allowed
    value(s), or to a predicate on the value.
    """

    benchmark: str
    source: str
    model: str
    setting: str  # how the figure was obtained, in a few words
    requires: Mapping[str, Any]
    metrics: Mapping[str, float]
    books: Mapping[str, float] = field(default_factory=dict)
    url: str = ""
    protocol: str = ""  # the preset that reproduces it


def _norm(value: Any) -> Any:
    """Compare loosely: "zeroCot", "zero_cot" and "zero-cot" are one setting, 288 and "288" one
    count; booleans stay booleans so that background True is never the number 1."""
    if isinstance(value, bool) or value is None:
        return value
    return re.sub(r"[^a-z0-9]", "", str(value).lower())


def matches(ref: Reference, protocol: Mapping[str, Any], ignore: tuple[str, ...] = ()) -> bool:
    """True when the run's protocol has every value the published figure was measured under.

    ``ignore`` drops keys from the rule: per-book figures hold for a run over some books only.
    """
    if protocol.get("benchmark") != ref.benchmark:
        return False
    for key, want in ref.requires.items():
        if key in ignore:
            continue
        got = protocol.get(key)
        if callable(want):
            if not want(got):
                return False
            continue
        allowed = want if isinstance(want, tuple) else (want,)
        if _norm(got) not in {_norm(a) for a in allowed}:
            return False
    return True


def same_model(run_model: str, published: str) -> bool:
    """Whether a run's model is the published one: ``openai/gpt-4o`` is "GPT-4o", and a dated
    snapshot (``claude-3-5-sonnet-20240620``) is its model; ``gpt-4o`` is not "GPT-4"."""
    mine, theirs = _norm(run_model.rsplit("/", 1)[-1]), _norm(published)
    return mine == theirs or (mine.startswith(theirs) and mine[len(theirs) :].isdigit())


def _version(name: str) -> Callable[[Any], bool]:
    """A data version, however it was obtained: "old" and "old (local /data/scibench)" agree."""
    return lambda value: isinstance(value, str) and value.split(" (")[0].strip() == name


def references_for(protocol: Mapping[str, Any], ignore: tuple[str, ...] = ()) -> list[Reference]:
    return [ref for ref in REFERENCES if matches(ref, protocol, ignore)]


# The leaderboard and the paper ran the original harness: its extraction and its 1800 s timeout.
_SCICODE_PAPER = {
    "dataset": ("original", None),
    "split": "test",
    "steps_counted": 288,
    "prompt": "single_turn",
    "timeout": 1800,
    "scorer": lambda value: isinstance(value, str) and "extraction=original" in value,
}
# The paper-era SciBench code: 5 few-shot examples, and 4 (thermo 3) with Python. The errata
# overlay touches only the robust scorer, so faithful figures stay comparable.
_SCIBENCH_PAPER = {
    "data_version": _version("old"),
    "split": "textbook",
    "steps_counted": 583,
    "scorer": ("faithful", "both", "faithful + errata", "both + errata"),
}

PROTOCOLS: dict[tuple[str, str], tuple[str, Mapping[str, Any]]] = {
    ("scicode", "paper"): ("no background", {**_SCICODE_PAPER, "background": False}),
    ("scicode", "paper_background"): ("with background", {**_SCICODE_PAPER, "background": True}),
    ("scicode", "verified"): (
        "SciCode-Verified, no background",
        {
            "dataset": "verified",
            "split": "test",
            "steps_counted": 287,
            "background": False,
            "prompt": "single_turn",
            "timeout": 1800,
            "runtimes": lambda value: list(value or []) == ["2024", "2025"],
        },
    ),
    # HAL's harness scores every sub-step, the pre-supplied 13.6, 62.1 and 76.3 too (its agents
    # give them their official code): its subproblem figures count 291 steps, ours 288.
    ("scicode", "hal"): (
        "HAL: an agent per step, 60 s per test; HAL's steps are 291 (13.6, 62.1, 76.3 scored)",
        {
            "dataset": ("original", None),
            "split": "test",
            "steps_counted": (288, 291),
            "background": False,
            "prompt": "single_turn + agent",
            "timeout": 60,
        },
    ),
    # All 80 problems with background, as NeMo-Skills' test_aai "for consistency with AAI"; the
    # timeout is not published (NeMo-Skills 30 s, the preset 1,800 s) and not required.
    ("scicode", "artificial_analysis"): (
        "80 problems, 338 steps, background (Artificial Analysis, NeMo-Skills)",
        {
            "dataset": ("original", None),
            "split": "all",
            "steps_counted": 338,
            "background": True,
            "prompt": "single_turn",
        },
    ),
    ("scibench", "paper_zero"): ("zero", {**_SCIBENCH_PAPER, "prompt": "zero"}),
    ("scibench", "paper_zero_cot"): ("zero_cot", {**_SCIBENCH_PAPER, "prompt": "zero_cot"}),
    ("scibench", "paper_few_cot"): (
        "few_cot",
        {**_SCIBENCH_PAPER, "prompt": ("few_cot", "few_cot (5 shots)")},
    ),
    ("scibench", "paper_python"): (
        "python",
        {**_SCIBENCH_PAPER, "prompt": ("python", "python (4 examples, thermo 3)")},
    ),
}
"""(benchmark, protocol) -> (setting label, what a run's protocol record must hold)."""


def _value(row: Mapping[str, str]) -> float:
    """The published percentage: as written, or from the count and total it was published as."""
    if row["value"]:
        return float(row["value"])
    return 100 * int(row["count"]) / int(row["total"])


def _load() -> list[Reference]:
    """One Reference per (benchmark, protocol, model, source), in the table's order."""
    text = files("scievals.report").joinpath(TABLE).read_text(encoding="utf-8")
    grouped: dict[tuple[str, ...], dict[str, Any]] = {}
    for row in csv.DictReader(text.splitlines()):
        key = (row["benchmark"], row["protocol"], row["model"], row["source"])
        entry = grouped.setdefault(key, {"metrics": {}, "books": {}, "url": row["url"]})
        target = entry["books"] if row["book"] else entry["metrics"]
        target[row["book"] or row["metric"]] = _value(row)
    refs = []
    for (benchmark, name, model, source), entry in grouped.items():
        setting, requires = PROTOCOLS[(benchmark, name)]
        refs.append(
            Reference(
                benchmark,
                source,
                model,
                setting,
                requires,
                entry["metrics"],
                entry["books"],
                entry["url"],
                name,
            )
        )
    return refs


REFERENCES: list[Reference] = _load()
