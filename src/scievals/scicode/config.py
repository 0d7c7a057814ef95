"""SciCode's protocol knobs: one typed, frozen record, checked once, read by every part.

The task builds it from its parameters (same names) and hands it whole to the solver and scorer
as its plain JSON ``record()`` (what Inspect writes in the log, so ``inspect score LOG`` rebuilds
the same config with ``from_record``); ``grade()`` takes the config itself. A new protocol field
is a change to this file only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from scievals.agents import AgentLimits
from scievals.inputs import InputError, not_one_of
from scievals.sandbox import DEFAULT_RUNTIME, check_runtimes
from scievals.scicode.data.dataset import (
    Dataset,
    Problem,
    Split,
    StepCount,
    check_choice,
    load_problems,
)
from scievals.scicode.data.targets_source import TargetsChoice
from scievals.scicode.grading.runner import DEFAULT_TIMEOUT

VERIFIED_TIMEOUT = 1800
"""SciCode-Verified's canonical protocol: 1,800 s per step per environment."""
VERIFIED_RUNTIMES = ("2024", "2025")
"""SciCode-Verified's two pinned environments: a step passes if either accepts it."""

if TYPE_CHECKING:
    from scievals.sandbox import ScievalsSandboxConfig

PromptProtocol = Literal["single_turn", "chat", "whole_problem"]
PreviousSteps = Literal["model", "gold"]
Extraction = Literal["inspect", "original"]


class SciCodeConfig(BaseModel):
    """How a SciCode run asks, extracts and grades (the task's parameters, validated)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dataset: Dataset = "original"
    split: Split = "test"
    provide_scientific_background: bool = False
    prompt_protocol: PromptProtocol = "single_turn"
    previous_steps: PreviousSteps = "model"
    extraction: Extraction = "inspect"
    timeout: int | None = Field(default=None, gt=0)
    """Seconds per step program (per runtime); None: 300, or 1800 for the Verified dataset."""
    h5: str | None = None
    targets: TargetsChoice = "auto"
    source: str = "package"
    sandbox: str = "scievals"
    step_count: StepCount | None = None
    """None: ``official``, or ``verified`` for that dataset (see ``dataset.StepCount``)."""
    runtimes: tuple[str, ...] | None = None
    """Scoring runtimes in the order tried; None: ``2024``, or ``2024,2025`` for Verified."""
    all_runtimes: bool = False
    """Grade every step in every runtime (default: a runtime sees only what the ones before it
    failed)."""
    agent: str | None = None
    """The agent answering each step (``react``, a registered Inspect agent, ``FILE.py@NAME``);
    None: one model call per step, as the published protocols."""
    agent_limits: AgentLimits | None = Field(default=None, validate_default=True)
    """What each agent step may use (``AgentLimits.from_params`` of the task's ``agent_*``
    parameters; the defaults when an agent is given without them); None without an agent."""

    @classmethod
    def from_params(cls, **params: Any) -> SciCodeConfig:
        """The config of a task's parameters as users give them; every wrong one is a line of one
        ``InputError`` that names it, its value and what it may be."""
        try:
            return cls(**params)
        except ValidationError as exc:
            raise InputError("\n".join(_problem(error) for error in exc.errors())) from None

    @classmethod
    def from_record(cls, record: Mapping[str, Any] | None) -> SciCodeConfig:
        """The config a solver or scorer was given as ``record()`` (None: the defaults)."""
        return cls.from_params(**(record or {}))

    def record(self) -> dict[str, Any]:
        """The whole config as plain JSON, every field given and the defaults that depend on
        others resolved (timeout, runtimes, step count), so that a later default cannot change
        what a logged run meant."""
        return {
            **self.model_dump(mode="json"),
            "timeout": self.step_timeout,
            "runtimes": list(self.runtime_names),
            "step_count": self.steps_convention,
        }

    @field_validator("agent_limits")
    @classmethod
    def _limits_of_an_agent(
        cls, value: AgentLimits | None, info: ValidationInfo
    ) -> AgentLimits | None:
        return (value or AgentLimits()) if info.data.get("agent") else None

    @field_validator("runtimes", mode="before")
    @classmethod
    def _known_runtimes(cls, value: object) -> tuple[str, ...] | None:
        if value is None:
            return None
        if isinstance(value, list | tuple):
            return check_runtimes([str(name) for name in value])
        return check_runtimes(str(value))  # -T runtimes=2024 arrives as a number

    @model_validator(mode="after")
    def _choices_that_exist(self) -> SciCodeConfig:
        if self.previous_steps == "gold" and self.split != "dev":
            raise InputError("previous_steps=gold needs split=dev (only the dev set has gold code)")
        if self.targets == "regenerated" and self.split != "dev":
            raise InputError("targets=regenerated exists for the dev split only (test has no gold)")
        check_choice(self.dataset, self.split, self.steps_convention)
        if self.whole_problem and self.gold_previous:
            raise InputError(
                "prompt_protocol=whole_problem asks every step at once: no previous steps"
            )
        if self.agent and self.prompt_protocol == "chat":
            raise InputError(
                "an agent answers each step from its single-turn prompt (as HAL's agents do): use "
                "prompt_protocol=single_turn or whole_problem"
            )
        return self

    @property
    def verified(self) -> bool:
        return self.dataset == "verified"

    @property
    def steps_convention(self) -> StepCount:
        """The step count convention in force (the protocol's ``step_count``)."""
        return self.step_count or ("verified" if self.verified else "official")

    @property
    def step_timeout(self) -> int:
        return self.timeout or (VERIFIED_TIMEOUT if self.verified else DEFAULT_TIMEOUT)

    @property
    def runtime_names(self) -> tuple[str, ...]:
        return self.runtimes or (VERIFIED_RUNTIMES if self.verified else (DEFAULT_RUNTIME,))

    def problems(self) -> tuple[Problem, ...]:
        """The problems this protocol asks and scores (cached by ``load_problems``)."""
        return load_problems(self.split, self.source, self.dataset, self.steps_convention)

    @property
    def gold_previous(self) -> bool:
        """Earlier steps carry gold code in prompts and step programs (the paper's setup)."""
        return self.previous_steps == "gold"

    @property
    def whole_problem(self) -> bool:
        """One prompt with every step, one answer with every function, graded on the last step
        (HAL's ``scicode_hard``); each step's verdict is reported too."""
        return self.prompt_protocol == "whole_problem"

    @property
    def prompt(self) -> str:
        """The protocol record's ``prompt`` entry (an agent adds its own system prompt)."""
        return (
            self.prompt_protocol
            + (" + gold previous steps" if self.gold_previous else "")
            + (" + agent" if self.agent else "")
        )


def _problem(error: ErrorDetails) -> str:
    """One line for one parameter pydantic refused, in the words of ``inputs.one_of``."""
    name = ".".join(str(part) for part in error["loc"])
    cause = error.get("ctx", {}).get("error")
    if cause is not None:  # our own check's message; a field's gets the field's name first
        return f"{name}: {cause}" if name else str(cause)
    if error["type"] == "literal_error":
        return str(
            not_one_of(name, error["input"], _choices(SciCodeConfig.model_fields[name].annotation))
        )
    rule = error["msg"].removeprefix("Input should be ").split(",")[0]
    return f"{name} must be {rule}, not {error['input']!r}"


def _choices(annotation: object) -> tuple[str, ...]:
    """The values of the ``Literal`` in a field's type (``StepCount | None``: the step counts)."""
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    return tuple(choice for arg in get_args(annotation) for choice in _choices(arg))


def sandbox_config(
    timeout: int, runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,)
) -> ScievalsSandboxConfig:
    """Our sandbox's CPU and wall limits follow the step timeout (1800 s for parity runs); each
    sample gets an environment per runtime."""
    from scievals.sandbox import ScievalsSandboxConfig

    return ScievalsSandboxConfig(
        cpu_seconds=float(max(600, timeout)),
        wall_seconds=float(max(1800, timeout)),
        runtimes=runtimes,
    )
