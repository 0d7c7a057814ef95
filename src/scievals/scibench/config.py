"""The SciBench protocol as one typed, frozen value, built once from the task's parameters.

Dataset, prompts, solvers, scorers and the log's protocol record all read their knobs from here,
by name, so each choice is checked once and recorded as it ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from scievals.agents import AgentLimits, agent_label
from scievals.inputs import InputError, one_of
from scievals.protocol import protocol
from scievals.sandbox import protocol_fields
from scievals.scibench.dataset import BOOKS, VERSIONS, Version
from scievals.scibench.opencompass import VARIANTS

Setting = Literal[
    "zero_nosys",
    "zero",
    "zero_cot",
    "few",
    "few_cot",
    "python",
    "wolfram",
    "opencompass_zs",
    "opencompass_zs_cot",
    "opencompass_fs",
    "opencompass_fs_cot",
]
Subset = Literal["textbook", "multimodal", "exam", "solutions"]
ScorerChoice = Literal["faithful", "robust", "both", "opencompass", "all"]

SETTINGS: tuple[Setting, ...] = get_args(Setting)
TOOL_SETTINGS: tuple[Setting, ...] = ("python", "wolfram")
OPENCOMPASS_SETTINGS: tuple[Setting, ...] = VARIANTS
"""OpenCompass's four prompts (``scievals.scibench.opencompass``): text problems only."""
IMAGE_SETTINGS: tuple[Setting, ...] = ("zero_nosys", "zero", "zero_cot")
AGENT_SETTINGS: tuple[Setting, ...] = ("zero_nosys", "zero", "few", "few_cot")
"""Settings of one model call, which an agent may make in as many turns as its limits allow."""
# Few-shot examples shown by the code of each era: main's eval_few.py loads 3, the 2023 code 5.
DEFAULT_SHOTS: dict[Version, int] = {"main": 3, "old": 5}
DEFAULT_SANDBOX = "scievals"


def parse_books(books: str | Sequence[str] | None) -> tuple[str, ...]:
    """A comma-separated (or listed) choice of textbooks; all ten when none or "all"."""
    if books is None or books == "" or books == "all":
        return BOOKS
    if isinstance(books, str):
        names = books.split(",")
    elif isinstance(books, Sequence):
        names = [str(book) for book in books]
    else:  # -T books=3 arrives as a number
        names = [str(books)]
    chosen = tuple(b.strip() for b in names if b.strip())
    unknown = [b for b in chosen if b not in BOOKS]
    if unknown:
        raise InputError(f"unknown SciBench books {unknown}; choose from {', '.join(BOOKS)}")
    return chosen


def _number(value: object, kind: type | tuple[type, ...] = (int, float)) -> bool:
    """A number of ``kind`` as the command line gives it (``-T shots=abc`` is a string, ``true``
    a bool: neither is a number)."""
    return isinstance(value, kind) and not isinstance(value, bool)


@dataclass(frozen=True, kw_only=True)
class SciBenchConfig:
    """One SciBench protocol; ``sandbox`` is set exactly when the setting runs model code."""

    version: Version = "main"
    books: tuple[str, ...] = BOOKS
    setting: Setting = "zero"
    shots: int = DEFAULT_SHOTS["main"]
    subset: Subset = "textbook"
    scorer: ScorerChoice = "both"
    sandbox: str | None = None
    timeout: int = 30
    errata: bool = False
    abs_tol: float = 0.0
    agent: str | None = None
    """The agent answering each problem after computing with Python (see ``scievals.agents``)."""
    agent_limits: AgentLimits | None = None

    @classmethod
    def from_params(
        cls,
        *,
        version: str = "main",
        books: str | Sequence[str] | None = None,
        setting: str = "zero",
        shots: int | None = None,
        subset: str = "textbook",
        scorer: str = "both",
        sandbox: str | None = None,
        timeout: int = 30,
        errata: bool = False,
        abs_tol: float = 0.0,
        agent: str | None = None,
        agent_limits: AgentLimits | None = None,
    ) -> SciBenchConfig:
        """Check the task's parameters (as users spell them) and fill in the era's defaults."""
        chosen_version = cast(Version, one_of("version", version, VERSIONS))
        chosen_setting = cast(Setting, one_of("setting", setting, SETTINGS))
        chosen_subset = cast(Subset, one_of("subset", subset, get_args(Subset)))
        if chosen_subset == "multimodal" and chosen_setting not in IMAGE_SETTINGS:
            raise InputError(
                f"the multimodal subset supports {', '.join(IMAGE_SETTINGS)}, not {setting!r}"
            )
        if chosen_setting in OPENCOMPASS_SETTINGS and chosen_subset != "textbook":
            raise InputError(f"setting {setting!r} has the text problems only (subset=textbook)")
        chosen_scorer = cast(ScorerChoice, one_of("scorer", scorer, get_args(ScorerChoice)))
        if chosen_scorer in ("opencompass", "all") and chosen_setting in TOOL_SETTINGS:
            raise InputError(
                f"scorer {chosen_scorer!r} has OpenCompass's, which reads a text reply; setting "
                f"{setting!r} is scored on its program's output (use faithful, robust or both)"
            )
        if shots is not None and not (_number(shots, int) and shots >= 0):
            raise InputError(f"shots must be 0 or more (a whole number), not {shots!r}")
        if not (_number(timeout) and timeout > 0):
            raise InputError(f"timeout must be a positive number of seconds, not {timeout!r}")
        if not (_number(abs_tol) and abs_tol >= 0):
            raise InputError(f"abs_tol must be 0 or more, not {abs_tol!r}")
        if not isinstance(errata, bool):
            raise InputError(f"errata must be true or false, not {errata!r}")
        if agent and chosen_subset == "exam":
            raise InputError("the exam subset is graded with a rubric: it has no agentic setting")
        if agent and chosen_setting not in AGENT_SETTINGS:
            raise InputError(
                f"an agent answers settings of one model call ({', '.join(AGENT_SETTINGS)}), not "
                f"{setting!r}: it runs its own code"
            )
        tools = chosen_setting in TOOL_SETTINGS or bool(agent)
        return cls(
            version=chosen_version,
            books=parse_books(books),
            setting=chosen_setting,
            shots=DEFAULT_SHOTS[chosen_version] if shots is None else shots,
            subset=chosen_subset,
            scorer=chosen_scorer,
            sandbox=(sandbox or DEFAULT_SANDBOX) if tools else None,
            timeout=timeout,
            errata=errata,
            abs_tol=abs_tol,
            agent=agent or None,
            agent_limits=(agent_limits or AgentLimits()) if agent else None,
        )

    @property
    def prompt(self) -> str:
        """The prompt layout as the report labels it."""
        label: str = self.setting
        if self.setting in ("few", "few_cot"):
            label += f" ({self.shots} shots)"
        elif self.setting in ("opencompass_fs", "opencompass_fs_cot"):
            label += " (5 shots, its files)"
        elif self.setting in TOOL_SETTINGS:
            label += " (4 examples, thermo 3)"
        if self.subset == "multimodal":
            label += " + image (native vision)"
        if self.agent:
            label += " + agent"
        return label

    def protocol(self, data_version: str, problems: int) -> dict[str, Any]:
        """The log's protocol record (``scievals.protocol``) of a run over ``problems`` items."""
        return protocol(
            "scibench",
            data_version=data_version,
            split=self.subset,
            steps_counted=problems,
            prompt=self.prompt,
            scorer=self.scorer
            + (" + errata" if self.errata else "")
            + (f" + abs_tol {self.abs_tol:g}" if self.abs_tol else ""),
            timeout=self.timeout if self.setting in TOOL_SETTINGS else None,
            agent=agent_label(self.agent),
            agent_limits=self.agent_limits.record() if self.agent_limits else None,
            **protocol_fields(self.sandbox),
        )
