"""The verdicts of a run being re-graded, kept beside its log as they are decided, so that an
interrupted re-grade resumes (``--resume``) from the step where it stopped, as ``scievals grade``
does, not from the start of the run (one inspect_evals log can be one run of 338 steps).

The file is hidden beside the run's log (``.regrade-NNN-<run>.verdicts.jsonl``): a header line
naming the run, a digest of its answers and the grading config, then one whole verdict a line.
It is read only when all three match, within a bound, and a torn last line (the kill) is left
out; the log, once written, replaces it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from scievals.scicode.config import SciCodeConfig
from scievals.scicode.verdict import StepVerdict

MAX_BYTES = 64 * 2**20
"""More than 338 whole verdicts ever take; a larger file is not read."""


def answers_digest(completions: Mapping[str, str]) -> str:
    """The run's answers in one value: a verdict kept for other answers is never reused."""
    return hashlib.sha256(json.dumps(dict(completions), sort_keys=True).encode()).hexdigest()


class PartialRun:
    """The verdicts file of one run: read back on resume, appended to while it is graded."""

    def __init__(
        self, log: Path, run: str, completions: Mapping[str, str], config: SciCodeConfig
    ) -> None:
        self.path = log.with_name(f".{log.stem}.verdicts.jsonl")
        self.header = {
            "run": run,
            "answers": answers_digest(completions),
            "grading": config.record(),
        }
        self._fh: IO[str] | None = None

    def read(self) -> dict[str, StepVerdict]:
        """The verdicts an interrupted re-grade of this very run kept; none where the file is
        missing, too large, of another run, answers or config, or not what this module writes."""
        try:
            if self.path.stat().st_size > MAX_BYTES:
                return {}
            lines = self.path.read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError):
            return {}
        if len(lines) < 2 or _loaded(lines[0]) != self.header:
            return {}
        kept: dict[str, StepVerdict] = {}
        for line in lines[1:-1]:  # the last is "" after a whole line, or a torn one
            verdict = _verdict(_loaded(line))
            if verdict is None:
                return {}
            kept[verdict.step] = verdict
        return kept

    def start(self, kept: Mapping[str, StepVerdict]) -> None:
        """The file begun anew with its header and ``kept`` (what resuming keeps of it)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - open for the run
        self._fh.write(json.dumps(self.header) + "\n")
        for verdict in kept.values():
            self.add(verdict)

    def add(self, verdict: StepVerdict) -> None:
        """One verdict, on disk before the next is decided."""
        assert self._fh is not None, "start() first"
        self._fh.write(json.dumps(verdict.as_dict()) + "\n")
        self._fh.flush()

    def close(self, done: bool) -> None:
        """Closed; removed once ``done`` (the run's log holds every verdict)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if done:
            self.path.unlink(missing_ok=True)


def _loaded(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _verdict(record: Any) -> StepVerdict | None:
    """A verdict as ``StepVerdict.as_dict`` writes it, or None for anything else."""
    if not isinstance(record, dict) or set(record) != set(StepVerdict.__dataclass_fields__):
        return None
    if not (isinstance(record["step"], str) and isinstance(record["passed"], bool)):
        return None
    try:
        return StepVerdict(**record)
    except TypeError:
        return None
