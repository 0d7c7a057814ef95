"""SciCode's protocol knobs: one typed, frozen record, checked once, read by every part.

The task builds it from its parameters (same names), passes its fields by name to the solver,
scorer and sandbox, and writes the log's protocol record from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from scievals.scicode.dataset import Split
from scievals.scicode.runner import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from scievals.sandbox.provider import ScievalsSandboxConfig

PromptProtocol = Literal["single_turn", "chat"]
PreviousSteps = Literal["model", "gold"]
Extraction = Literal["inspect", "original"]
TargetsChoice = Literal["auto", "official", "regenerated"]


class SciCodeConfig(BaseModel):
    """How a SciCode run asks, extracts and grades (the task's parameters, validated)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    split: Split = "test"
    provide_scientific_background: bool = False
    prompt_protocol: PromptProtocol = "single_turn"
    previous_steps: PreviousSteps = "model"
    extraction: Extraction = "inspect"
    timeout: int = Field(default=DEFAULT_TIMEOUT, gt=0)
    h5: str | None = None
    targets: TargetsChoice = "auto"
    source: str = "package"
    sandbox: str = "scievals"

    @model_validator(mode="after")
    def _dev_only_choices(self) -> SciCodeConfig:
        if self.previous_steps == "gold" and self.split != "dev":
            raise ValueError("previous_steps=gold needs split=dev (only the dev set has gold code)")
        if self.targets == "regenerated" and self.split != "dev":
            raise ValueError("targets=regenerated exists for the dev split only (test has no gold)")
        return self

    @property
    def gold_previous(self) -> bool:
        """Earlier steps carry gold code in prompts and step programs (the paper's setup)."""
        return self.previous_steps == "gold"

    @property
    def prompt(self) -> str:
        """The protocol record's ``prompt`` entry."""
        return self.prompt_protocol + (" + gold previous steps" if self.gold_previous else "")


def sandbox_config(timeout: int) -> ScievalsSandboxConfig:
    """Our sandbox's CPU and wall limits follow the step timeout (1800 s for parity runs)."""
    from scievals.sandbox.provider import ScievalsSandboxConfig

    return ScievalsSandboxConfig(
        cpu_seconds=float(max(600, timeout)), wall_seconds=float(max(1800, timeout))
    )
