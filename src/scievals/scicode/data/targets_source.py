"""Which file gives each step's targets, found and opened only when scoring needs them.

Building a task opens nothing (``missing()`` looks at paths): a run that only generates
(``--no-score``) needs no targets.
Scoring calls ``prepare()`` once (the regenerated dev file is built then if absent, by the
``regenerate`` callable its builder passes: the grader lives above this floor; ``scievals data
prepare`` builds it ahead), and every read opens and closes its files, so no handle outlives the
sample that needed it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Literal

from scievals.artifacts import ArtifactError
from scievals.scicode.data.dataset import Dataset, Split, Step
from scievals.scicode.data.targets import ENV_H5, TargetFile, official_h5

TargetsChoice = Literal["auto", "official", "regenerated"]
Regenerator = Callable[[], Path]  # builds the dev targets file if absent and returns its path

NO_H5 = (
    "the SciCode test split needs the official test_data.h5 (about 1 GB), which is not here: "
    "run `scievals data fetch` where its host is reachable, or pass --h5 PATH / set "
    f"{ENV_H5}; the dev split works without it (`--split dev`)"
)


class TargetSource:
    """``auto``: the official file for test steps and the regenerated file for dev steps (the
    official dev targets of 78.3 cannot be met; spec §8); ``official`` or ``regenerated`` only.
    For SciCode-Verified the official file is its own ``test_data_cleaned.h5``."""

    def __init__(
        self,
        split: Split,
        choice: TargetsChoice = "auto",
        h5: str | None = None,
        dataset: Dataset = "original",
        regenerate: Regenerator | None = None,
    ):
        self.split, self.choice, self.h5, self.dataset = split, choice, h5, dataset
        self._regenerate = regenerate
        self._official: Path | None = None
        self._regenerated: Path | None = None
        self._prepared = False

    @property
    def needs_official(self) -> bool:
        return self.split != "dev" or self.choice == "official"

    @property
    def needs_regenerated(self) -> bool:
        return self.split != "test" and self.choice != "official"

    @property
    def note(self) -> str:
        """Which files serve, for the log (decided by the choice, not by what is on disk)."""
        parts = []
        if self.needs_official:
            default = "test_data_cleaned.h5" if self.dataset == "verified" else "test_data.h5"
            name = Path(self.h5).name if self.h5 else default
            parts.append(
                f"official h5 ({name})" + (" for test steps" if self.needs_regenerated else "")
            )
        if self.needs_regenerated:
            parts.append("dev regenerated from gold code")
        return ", ".join(parts)

    def missing(self) -> str | None:
        """Why scoring could not start (one line), or None; looks at paths only."""
        if not self.needs_official:
            return None
        try:
            self._find_official()
        except ArtifactError as exc:
            return str(exc)
        return None

    def prepare(self) -> None:
        """Locate the files, regenerating the dev targets if absent (minutes, once per cache).

        Raises ``ArtifactError`` with a one-line message when the official file is needed and
        not found. Idempotent, blocking: run it off the event loop.
        """
        if self._prepared:
            return
        if self.needs_official:
            self._official = self._find_official()
        if self.needs_regenerated:
            if self._regenerate is None:
                raise ArtifactError(
                    "the dev targets are needed and nothing was given to build them"
                )
            self._regenerated = self._regenerate()
        self._prepared = True

    def _find_official(self) -> Path:
        if self.dataset == "verified":
            from scievals.scicode.data.verified_targets import NO_VERIFIED_H5, verified_h5

            found, missing = verified_h5(self.h5), NO_VERIFIED_H5
        else:
            found, missing = official_h5(self.h5), NO_H5
        if found is None:
            raise ArtifactError(missing)
        return found

    def read(self, steps: Iterable[Step]) -> dict[str, list[Any]]:
        """The targets of ``steps`` by step id; the files are open only during the call."""
        self.prepare()
        with ExitStack() as stack:
            files = [
                stack.enter_context(TargetFile(path))
                for path in (self._regenerated, self._official)
                if path is not None
            ]
            targets = {}
            for step in steps:
                holder = next((f for f in files if f.has_step(step.step_id)), files[-1])
                targets[step.step_id] = holder.step(step.step_id, len(step.tests))
            return targets


def target_lookup(
    split: Split,
    choice: TargetsChoice = "auto",
    h5: str | None = None,
    dataset: Dataset = "original",
    regenerate: Regenerator | None = None,
) -> tuple[Callable[[Step], list[Any]], str]:
    """A step -> targets function ready to use (files prepared now), and the log note."""
    source = TargetSource(split, choice, h5, dataset, regenerate)
    source.prepare()
    return lambda step: source.read([step])[step.step_id], source.note
