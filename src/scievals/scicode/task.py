# inspect-evals-lint: ignore-file[main_file] -- task.py as in scievals/scibench; the package exports the task from __init__.py
"""The ``scievals/scicode`` task: its parameters become one ``SciCodeConfig``, recorded in the log.

Building the task loads the problem files and nothing else: targets are found (and dev targets
regenerated if absent) when scoring starts, so a run that only generates needs none.
"""

from __future__ import annotations

import logging
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.solver import Solver

from scievals.protocol import protocol
from scievals.sandbox import protocol_fields
from scievals.sandbox.provider import ScievalsSandboxConfig
from scievals.scicode.config import (
    Extraction,
    PreviousSteps,
    PromptProtocol,
    SciCodeConfig,
    TargetsChoice,
    sandbox_config,
)
from scievals.scicode.dataset import DATA_VERSION, Problem, Split, load_problems, samples
from scievals.scicode.metrics import scicode_epochs
from scievals.scicode.runner import DEFAULT_TIMEOUT
from scievals.scicode.scorer import scicode_scorer
from scievals.scicode.solver import chat_solver, single_turn_solver
from scievals.scicode.targets_source import TargetSource

logger = logging.getLogger(__name__)


@task
def scicode(
    split: Split = "test",
    provide_scientific_background: bool = False,
    prompt_protocol: PromptProtocol = "single_turn",
    previous_steps: PreviousSteps = "model",
    extraction: Extraction = "inspect",
    timeout: int = DEFAULT_TIMEOUT,
    h5: str | None = None,
    targets: TargetsChoice = "auto",
    source: str = "package",
    sandbox: str = "scievals",
    include_dev_set: bool | None = None,
) -> Task:
    """SciCode: research-coding problems, each step's code run against scientists' tests.

    Args:
        split: ``test`` (65 problems, 288 scored steps), ``dev`` (15, 50) or ``all`` (80, 338).
        provide_scientific_background: show each step's background (paper's "with background").
        prompt_protocol: ``single_turn`` (official templates) or ``chat`` (inspect_evals).
        previous_steps: earlier steps carry the model's own code (``model``) or gold (``gold``, dev).
        extraction: ``inspect`` (inspect_evals 3-A rules) or ``original`` (first python block).
        timeout: seconds per step program (300 as inspect_evals; 1800 as the original).
        h5: path to the official ``test_data.h5`` (else ``$SCIEVALS_SCICODE_H5`` or the cache).
        targets: ``auto`` (official file for test steps, regenerated for dev), ``official``, or
            ``regenerated`` (dev only).
        source: problem files from ``package`` (nvidia-scicode wheel), ``hf``, or a directory.
        sandbox: sandbox provider that runs model code (``scievals``, ``docker``, ...).
        include_dev_set: inspect_evals' name; true means ``split=all``.
    """
    config = SciCodeConfig(
        split="all" if include_dev_set else split,
        provide_scientific_background=provide_scientific_background,
        prompt_protocol=prompt_protocol,
        previous_steps=previous_steps,
        extraction=extraction,
        timeout=timeout,
        h5=h5,
        targets=targets,
        source=source,
        sandbox=sandbox,
    )
    problems = load_problems(config.split, config.source)
    target_source = TargetSource(config.split, config.targets, config.h5)
    missing = target_source.missing()
    if missing:
        logger.warning(
            "scoring will fail at its first sample (--no-score needs no targets): %s", missing
        )
    return Task(
        dataset=samples(problems),
        solver=_solver(config),
        scorer=scicode_scorer(
            split=config.split,
            source=config.source,
            targets=config.targets,
            h5=config.h5,
            timeout=config.timeout,
            previous_steps=config.previous_steps,
        ),
        sandbox=_sandbox_spec(config),
        epochs=Epochs(1, scicode_epochs()),
        metadata={"protocol": _protocol(config, problems, target_source.note)},
    )


def _solver(config: SciCodeConfig) -> Solver:
    if config.prompt_protocol == "chat":
        return chat_solver(
            split=config.split,
            source=config.source,
            provide_scientific_background=config.provide_scientific_background,
            extraction=config.extraction,
        )
    return single_turn_solver(
        split=config.split,
        source=config.source,
        provide_scientific_background=config.provide_scientific_background,
        previous_steps=config.previous_steps,
        extraction=config.extraction,
    )


def _sandbox_spec(config: SciCodeConfig) -> str | tuple[str, ScievalsSandboxConfig]:
    if config.sandbox != "scievals":
        return config.sandbox
    return config.sandbox, sandbox_config(config.timeout)


def _protocol(config: SciCodeConfig, problems: tuple[Problem, ...], targets: str) -> dict[str, Any]:
    return protocol(
        "scicode",
        data_version=f"{DATA_VERSION}; targets: {targets}",
        split=config.split,
        steps_counted=sum(len(p.scored_steps) for p in problems),
        background=config.provide_scientific_background,
        prompt=config.prompt,
        scorer=f"sandboxed records; extraction={config.extraction}; pre-supplied steps "
        "13.6/62.1/76.3 inserted whole, not scored",
        timeout=config.timeout,
        **protocol_fields(config.sandbox),
    )
