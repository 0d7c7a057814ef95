"""The ``scievals/scicode`` task: every protocol knob in one place, recorded in the log."""

from __future__ import annotations

from inspect_ai import Epochs, Task, task

from scievals.protocol import protocol
from scievals.sandbox import protocol_fields
from scievals.sandbox.provider import ScievalsSandboxConfig
from scievals.scicode.dataset import DATA_VERSION, Split, load_problems, samples
from scievals.scicode.metrics import scicode_epochs
from scievals.scicode.runner import DEFAULT_TIMEOUT
from scievals.scicode.scorer import scicode_scorer
from scievals.scicode.solver import Extraction, PreviousSteps, Protocol, scicode_solver
from scievals.scicode.targets_source import TargetsChoice, target_lookup


@task
def scicode(
    split: Split = "test",
    provide_scientific_background: bool = False,
    prompt_protocol: Protocol = "single_turn",
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
    if include_dev_set is not None:
        split = "all" if include_dev_set else split
    if previous_steps == "gold" and split != "dev":
        raise ValueError("previous_steps=gold needs split=dev (only the dev set has gold code)")
    problems = load_problems(split, source)
    lookup, targets_note = target_lookup(split, targets, h5)
    by_id = {p.problem_id: p for p in problems}
    gold_previous = previous_steps == "gold"
    prompt = prompt_protocol + (" + gold previous steps" if gold_previous else "")
    return Task(
        dataset=samples(problems),
        solver=scicode_solver(
            by_id, provide_scientific_background, prompt_protocol, previous_steps, extraction
        ),
        scorer=scicode_scorer(by_id, lookup, timeout, gold_previous),
        sandbox=_sandbox_spec(sandbox, timeout),
        epochs=Epochs(1, scicode_epochs()),
        metadata={
            "protocol": protocol(
                "scicode",
                data_version=f"{DATA_VERSION}; targets: {targets_note}",
                split=split,
                steps_counted=sum(len(p.scored_steps) for p in problems),
                background=provide_scientific_background,
                prompt=prompt,
                scorer=f"sandboxed records; extraction={extraction}; pre-supplied steps "
                "13.6/62.1/76.3 inserted whole, not scored",
                timeout=timeout,
                **protocol_fields(sandbox),
            )
        },
    )


def _sandbox_spec(sandbox: str, timeout: int) -> str | tuple[str, ScievalsSandboxConfig]:
    """Our sandbox's CPU and wall limits follow the step timeout (1800 s for parity runs)."""
    if sandbox != "scievals":
        return sandbox
    return sandbox, ScievalsSandboxConfig(
        cpu_seconds=float(max(600, timeout)), wall_seconds=float(max(1800, timeout))
    )
