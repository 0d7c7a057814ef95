"""Published figures (shared/specs: scicode.md §11, scibench.md §5) and the protocols they hold for.

A published number is shown only beside a run whose protocol matches the one it was measured under;
anything else (291 or 338 steps, chat prompts, the main-branch SciBench data) is not comparable.
Values are percentages as published.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Reference:
    """One published row: ``metrics`` uses the report's metric keys (main/sub, or a scorer name).

    ``requires`` maps a protocol key to the allowed value(s), or to a predicate on the value.
    """

    benchmark: str
    source: str
    model: str
    setting: str  # how the figure was obtained, in a few words
    requires: Mapping[str, Any]
    metrics: Mapping[str, float]
    books: Mapping[str, float] = field(default_factory=dict)


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


def _version(name: str) -> Callable[[Any], bool]:
    """A data version, however it was obtained: "old" and "old (local /data/scibench)" agree."""
    return lambda value: isinstance(value, str) and value.split(" (")[0].strip() == name


def references_for(protocol: Mapping[str, Any], ignore: tuple[str, ...] = ()) -> list[Reference]:
    return [ref for ref in REFERENCES if matches(ref, protocol, ignore)]


# The leaderboard and the paper ran the original harness: its extraction and its 1800 s timeout.
_SCICODE_BASE = {
    "split": "test",
    "steps_counted": 288,
    "prompt": "single_turn",
    "timeout": 1800,
    "scorer": lambda value: isinstance(value, str) and "extraction=original" in value,
}
_LEADERBOARD = "SciCode leaderboard"
_SCICODE_PAPER = "SciCode paper, Table 3"
_SCIBENCH_PAPER = "SciBench paper, Table 3"

# main % / subproblem %, test split, no background (scicode.md §11).
_LEADERBOARD_ROWS = [
    ("o3-mini-low", 10.8, 33.3),
    ("o3-mini-high", 9.2, 34.4),
    ("o3-mini-medium", 9.2, 33.0),
    ("o1-preview", 7.7, 28.5),
    ("DeepSeek-R1", 4.6, 28.5),
    ("Claude 3.5 Sonnet", 4.6, 26.0),
    ("Claude 3.5 Sonnet (new)", 4.6, 25.3),
    ("DeepSeek-V3", 3.1, 23.7),
    ("DeepSeek-Coder-v2", 3.1, 21.2),
    ("GPT-4o", 1.5, 25.0),
    ("GPT-4-Turbo", 1.5, 22.9),
    ("o1-mini", 1.5, 22.2),
    ("Gemini 1.5 Pro", 1.5, 21.9),
    ("Claude 3 Opus", 1.5, 21.5),
    ("Llama-3.1-405B", 1.5, 19.8),
    ("Qwen2-72B", 1.5, 17.0),
    ("Llama-3.1-70B", 0.0, 17.0),
    ("Mixtral-8x22B", 0.0, 16.3),
    ("Llama-3-70B", 0.0, 14.6),
]
# With background (paper Table 3): subproblem % / main %, in the paper's order.
_PAPER_BACKGROUND_ROWS = [
    ("Claude 3.5 Sonnet", 35.4, 12.3),
    ("GPT-4o", 35.4, 9.2),
    ("GPT-4-Turbo", 33.7, 9.2),
    ("Gemini 1.5 Pro", 30.6, 7.7),
    ("DeepSeek-Coder-v2", 27.1, 4.6),
    ("Claude 3 Opus", 26.7, 4.7),
    ("Claude 3 Sonnet", 25.7, 4.7),
    ("Qwen2-72B", 22.2, 4.6),
    ("Llama-3-70B", 20.8, 1.5),
    ("Mixtral-8x22B", 20.8, 3.1),
]
# SciBench old 583-item text split, micro accuracy %: zero, zero_cot, few_cot, python (§5).
# The paper-era code used 5 few-shot examples, and 4 (thermo 3) with Python.
_SCIBENCH_SETTINGS = {
    "zero": ("zero",),
    "zero_cot": ("zero_cot",),
    "few_cot": ("few_cot", "few_cot (5 shots)"),
    "python": ("python", "python (4 examples, thermo 3)"),
}
# The errata overlay touches only the robust scorer, so faithful figures stay comparable.
_FAITHFUL = ("faithful", "both", "faithful + errata", "both + errata")
_SCIBENCH_ROWS = [
    ("LLaMA-2-7B", (1.03, 0.67, 3.60, 1.20)),
    ("LLaMA-2-70B", (2.41, 1.89, 8.40, 5.14)),
    ("Mistral-7B", (6.23, 4.63, 6.17, 5.32)),
    ("Claude2", (14.94, 13.89, 15.26, 14.92)),
    ("GPT-3.5-Turbo", (9.59, 12.17, 11.99, 19.91)),
    ("GPT-4", (33.79, 28.52, 30.36, 43.22)),
    ("GPT-4-Turbo", (40.99, 42.37, 39.45, 28.47)),
]
_BOOK_ORDER = (
    "atkins",
    "chemmc",
    "quan",
    "matter",
    "fund",
    "class",
    "thermo",
    "diff",
    "stat",
    "calculus",
)
_SCIBENCH_BOOKS = {
    ("GPT-4", "zero"): (45.79, 28.21, 26.47, 22.45, 23.29, 25.53, 17.91, 32.00, 49.33, 54.76),
    ("GPT-4", "python"): (57.01, 38.46, 44.12, 34.69, 28.77, 23.40, 34.33, 44.00, 68.00, 38.10),
    ("GPT-4-Turbo", "zero_cot"): (
        60.75,
        35.90,
        29.41,
        28.57,
        30.14,
        31.91,
        25.37,
        38.00,
        64.00,
        54.76,
    ),
}


def _build() -> list[Reference]:
    refs = [
        Reference(
            "scicode",
            _LEADERBOARD,
            model,
            "no background",
            {**_SCICODE_BASE, "background": False},
            {"main": main, "sub": sub},
        )
        for model, main, sub in _LEADERBOARD_ROWS
    ]
    refs += [
        Reference(
            "scicode",
            _SCICODE_PAPER,
            model,
            "with background",
            {**_SCICODE_BASE, "background": True},
            {"main": main, "sub": sub},
        )
        for model, sub, main in _PAPER_BACKGROUND_ROWS
    ]
    for model, values in _SCIBENCH_ROWS:
        for (setting, prompts), value in zip(_SCIBENCH_SETTINGS.items(), values, strict=True):
            books = _SCIBENCH_BOOKS.get((model, setting), ())
            refs.append(
                Reference(
                    "scibench",
                    _SCIBENCH_PAPER,
                    model,
                    setting,
                    {
                        "data_version": _version("old"),
                        "split": "textbook",
                        "steps_counted": 583,
                        "prompt": prompts,
                        "scorer": _FAITHFUL,
                    },
                    {"faithful": value},
                    dict(zip(_BOOK_ORDER, books, strict=False)),
                )
            )
    return refs


REFERENCES: list[Reference] = _build()
