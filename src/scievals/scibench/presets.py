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


def _paper(setting: str, **fields: object) -> Preset:
    return Preset(
        f"paper_{setting}",
        {**_PAPER, "setting": setting, **fields},
        temperature=0.0,
        epochs=1,
        sources=("SciBench paper", "SciBench harness"),
    )


def _opencompass(variant: str) -> Preset:
    """OpenCompass's ``scibench_gen_2b21f3`` variant (``zs`` is its ``scibench`` group): its
    prompts, one greedy generation of 512 tokens, its extraction and exact-match scoring."""
    return Preset(
        "opencompass" if variant == "zs" else f"opencompass_{variant}",
        {
            "version": "main",
            "books": "all",
            "setting": f"opencompass_{variant}",
            "subset": "textbook",
            "scorer": "opencompass",
            "errata": False,
        },
        temperature=0.0,
        max_tokens=512,
        epochs=1,
        sources=("OpenCompass",),
    )


PRESETS = (
    _paper("zero"),  # Table 3, zero-shot
    _paper("zero_cot"),  # Table 3, zero-shot chain of thought
    _paper("few", shots=5),  # the paper-era few-shot script, answers only
    _paper("few_cot", shots=5),  # Table 3, few-shot chain of thought
    _paper("python", timeout=30),  # Table 3, few-shot with Python (4 examples, thermo 3)
    *(_opencompass(variant) for variant in ("zs", "zs_cot", "fs", "fs_cot")),
)
