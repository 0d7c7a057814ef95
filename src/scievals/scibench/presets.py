"""SciBench's published setups (``preset=NAME``), each field as its source gives it.

Sources and every assumption, field by field: ``docs/presets.md`` (shared/specs/scibench.md).
"""

from __future__ import annotations

from scievals.presets import Preset

# Paper Table 3: the old 583-problem text split, the system prompt, temperature 0, official
# scoring (the robust scorer runs beside it and changes none of the faithful numbers).
_PAPER = {
    "version": "old",
    "books": "all",
    "subset": "textbook",
    "scorer": "both",
    "errata": False,
    "abs_tol": 0.0,
}


def _paper(setting: str, summary: str, **fields: object) -> Preset:
    return Preset(
        f"paper_{setting}",
        summary,
        {**_PAPER, "setting": setting, **fields},
        temperature=0.0,
        epochs=1,
        sources=("SciBench paper", "SciBench harness"),
    )


PRESETS = (
    _paper("zero", "the SciBench paper, zero-shot (Table 3), 583 problems"),
    _paper("zero_cot", "the SciBench paper, zero-shot chain of thought (Table 3)"),
    _paper("few", "the SciBench paper's few-shot setting, answers only, 5 examples", shots=5),
    _paper(
        "few_cot", "the SciBench paper, few-shot chain of thought (Table 3), 5 examples", shots=5
    ),
    _paper("python", "the SciBench paper, few-shot with Python (Table 3), 4 examples", timeout=30),
    Preset(
        "opencompass",
        "OpenCompass's data and generation length (main data, all books, 512 tokens); its "
        "prompt wording and exact-match scoring are not reproduced",
        {
            "version": "main",
            "books": "all",
            "setting": "zero",
            "subset": "textbook",
            "scorer": "both",
            "errata": False,
            "abs_tol": 0.0,
        },
        temperature=0.0,
        max_tokens=512,
        epochs=1,
        sources=("OpenCompass",),
    ),
)
