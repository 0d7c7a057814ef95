"""One sample of a SciBench log set against this install's dataset, and graded again.

What the sample records of its problem (its metadata, the gold among it, its target and prompt)
is checked against the dataset this install builds of the run's parameters, and the scorers
read this install's gold, not the log's. The completion graded is the logged output's: in a run
without an agent it is its message's text and the last assistant message's too, so a completion
edited alone is a line. In
the Python setting the score is that of the program the reply holds: it is run again in the
sandbox the way the task's solver ran it (``python_runs``), and output it prints otherwise than
the log records is a line. Wolfram programs are not run again (the sandbox has no Wolfram
kernel): they are scored from the output the log records, and each such sample says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.dataset import Sample
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessage, ModelName
from inspect_ai.scorer import Score, Scorer, Target
from inspect_ai.solver import TaskState
from inspect_ai.util import SandboxEnvironment

from scievals.regrade_verify import shown
from scievals.scibench.config import SciBenchConfig
from scievals.scibench.scorer import TOOL_STORE_KEY
from scievals.scibench.solver import python_runs

MODES = ("faithful", "robust")
"""The two runs of a tool setting's program, as the solver stores them."""


@dataclass
class Regraded:
    """A sample's scores as re-graded, and the lines of what it records otherwise."""

    scores: dict[str, Score] = field(default_factory=dict)
    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rerun: bool | None = None
    """Whether its program was run again (the Python setting), or not (Wolfram); None: it has
    none."""


def recorded_lines(sample: EvalSample, ours: Sample, config: SciBenchConfig) -> list[str]:
    """What ``sample`` records of its problem otherwise than this install's dataset (``ours``),
    and an output that is not its last reply."""
    lines = []
    metadata = sample.metadata if isinstance(sample.metadata, dict) else {}
    for key, value in (ours.metadata or {}).items():
        if metadata.get(key) != value:
            lines.append(
                f"its metadata's {key} is {shown(metadata.get(key))}, this install's dataset's "
                f"{shown(value)}"
            )
    if sample.target != ours.target:
        lines.append(f"its target is {shown(sample.target)}, the dataset's {shown(ours.target)}")
    if _texts(sample.input) != _texts(ours.input):
        lines.append(f"its input is not the prompt this install gives it ({config.prompt})")
    if not config.agent:  # an agent's answer is what it submitted, no message's text
        replies = [m for m in sample.messages if m.role == "assistant"]
        texts = {
            "its output's message": [c.message.text for c in sample.output.choices[:1]],
            "its last assistant message": [m.text for m in replies[-1:]],
        }
        other = [k for k, v in texts.items() if v and v[0] != sample.output.completion]
        if other:
            lines.append(
                f"its output's completion is not {' nor '.join(other)}: graded from the completion"
            )
    return lines


def _texts(messages: str | list[ChatMessage]) -> list[tuple[str, str]]:
    """A prompt as roles and texts (an image's data is no text)."""
    if isinstance(messages, str):
        return [("user", messages)]
    return [(m.role, m.text) for m in messages]


async def regrade(
    sample: EvalSample,
    ours: Sample,
    scorers: Mapping[str, Scorer],
    config: SciBenchConfig,
    box: SandboxEnvironment | None,
) -> Regraded:
    """``sample`` graded again by ``scorers`` against this install's gold (``ours``), its
    program run again in ``box`` in the Python setting (None: the other settings)."""
    result = Regraded()
    store = await _tool_store(sample, config, box, result)
    state = TaskState(
        model=ModelName("none/none"),
        sample_id=sample.id,
        epoch=sample.epoch,
        input=sample.input,
        messages=[],
        target=Target(ours.target),
        output=sample.output,
        metadata=dict(ours.metadata or {}),
        store=store,
    )
    for name, score in scorers.items():
        result.scores[name] = await score(state, Target(ours.target))
    return result


async def _tool_store(
    sample: EvalSample, config: SciBenchConfig, box: SandboxEnvironment | None, result: Regraded
) -> dict[str, Any]:
    """The store the scorers read: a tool setting's program output, run again or as logged."""
    if config.setting not in ("python", "wolfram"):
        return {}
    logged = (sample.store or {}).get(TOOL_STORE_KEY)
    if config.setting == "wolfram":
        if not _is_runs(logged):
            raise ValueError(f"its store holds no program output (store[{TOOL_STORE_KEY!r}])")
        result.rerun = False
        result.notes.append(
            f"its {config.setting} program was not run again (the scievals sandbox has no "
            "Wolfram kernel): scored from the output the log records"
        )
        return {TOOL_STORE_KEY: logged}
    runs = await python_runs(sample.output.completion, config.timeout, box)
    result.rerun = True
    for mode in MODES:
        theirs = logged.get(mode) if isinstance(logged, dict) else None
        said = theirs.get("stdout") if isinstance(theirs, dict) else None
        if said != runs[mode]["stdout"]:
            result.differences.append(
                f"its {mode} program run again printed {shown(runs[mode]['stdout'])}, the log "
                f"records {shown(said)}"
            )
    return {TOOL_STORE_KEY: runs}


def _is_runs(logged: Any) -> bool:
    """Whether ``logged`` is program output as the tool solvers store it."""
    return isinstance(logged, dict) and all(
        isinstance(logged.get(mode), dict)
        and isinstance(logged[mode].get("stdout"), str | type(None))
        for mode in MODES
    )


def score_line(scorer: str, theirs: Score | None, ours: Score) -> str | None:
    """The fields of ``scorer``'s score (value, answer, each metadata entry) the log records
    otherwise than the re-grade, as one line; None when none."""
    if theirs is None:
        return f"{scorer}: the log records no score; re-graded {shown(ours.value)}"
    mine, logged = _fields(ours), _fields(theirs)
    keys = [
        k for k in [*mine, *(k for k in logged if k not in mine)] if mine.get(k) != logged.get(k)
    ]
    if not keys:
        return None
    said = ", ".join(f"{k} {shown(logged.get(k))}" for k in keys)
    return f"{scorer}: re-graded {', '.join(f'{k} {shown(mine.get(k))}' for k in keys)}; the log records {said}"


def _fields(score: Score) -> dict[str, Any]:
    """A score as a log holds it (JSON values): its value, answer and metadata entries."""
    data = score.model_dump(mode="json")
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    return {"value": data.get("value"), "answer": data.get("answer"), **metadata}
