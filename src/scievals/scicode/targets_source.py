"""Choosing where each step's targets come from, and failing loudly when there are none."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from scievals.artifacts import ArtifactError
from scievals.scicode.dataset import Split, Step
from scievals.scicode.targets import ENV_H5, TargetFile, official_h5

TargetsChoice = Literal["auto", "official", "regenerated"]

NO_H5 = (
    "the SciCode test split needs the official test_data.h5 (about 1 GB), which is not here: "
    "run `scievals data fetch` where its host is reachable, or pass --h5 PATH / set "
    f"{ENV_H5}; the dev split works without it (`--split dev`)"
)


def target_lookup(
    split: Split, choice: TargetsChoice = "auto", h5: str | None = None
) -> tuple[Callable[[Step], list[Any]], str]:
    """A function giving a step's targets, and a note for the log saying which files serve.

    ``auto``: the official file for test steps and the regenerated file for dev steps (the
    official dev targets of 78.3 cannot be met; spec §8). Opening is eager so that a missing
    file is reported before any model is called.
    """
    if choice not in ("auto", "official", "regenerated"):
        raise ValueError(f"targets={choice!r}: use auto, official or regenerated")
    official_path = official_h5(h5)
    needs_test = split in ("test", "all")
    if choice == "regenerated" and needs_test:
        raise ArtifactError("targets=regenerated exists for the dev split only (test has no gold)")
    if (needs_test or choice == "official") and official_path is None:
        raise ArtifactError(NO_H5)
    official = TargetFile(official_path) if official_path else None
    regenerated = None
    if split in ("dev", "all") and choice != "official":
        from scievals.scicode.regenerate import ensure_dev_targets

        regenerated = TargetFile(ensure_dev_targets())

    def lookup(step: Step) -> list[Any]:
        dev_step = regenerated is not None and regenerated.has_step(step.step_id)
        source = regenerated if dev_step else official
        assert source is not None
        return source.step(step.step_id, len(step.tests))

    parts = []
    if official:
        parts.append(
            f"official h5 ({official.path.name})" + (" for test steps" if regenerated else "")
        )
    if regenerated:
        parts.append("dev regenerated from gold code")
    return lookup, ", ".join(parts)
