"""Published setups by name: a ``preset`` task parameter that sets every protocol field at once.

A number is comparable only with one measured the same way, and a published setup has many
fields (split, background, prompts, extraction, timeout, runtimes, temperature, repeats). A
``Preset`` holds them all; ``presettable`` gives a task factory a ``preset`` parameter that fills
them in, lets the parameters the user gives win, and writes into the log's protocol the preset's
name, its fields and what the user overrode. Where each field comes from, and what a preset
assumes where its source is silent: ``docs/presets.md`` (a test checks the two agree).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspect_ai import Task
from inspect_ai.model import GenerateConfig

from scievals.inputs import not_one_of
from scievals.prerequisite import prerequisite

GENERATION = ("temperature", "max_tokens", "epochs")
"""Fields of a preset that are Inspect's settings, not task parameters (an eval-level
``--temperature`` or ``--epochs`` still wins over them, as Inspect orders settings)."""


@dataclass(frozen=True)
class Preset:
    """One published setup: task parameters (``fields``) and generation settings."""

    name: str
    fields: Mapping[str, Any]
    temperature: float | None = None
    max_tokens: int | None = None
    epochs: int | None = None
    sources: Sequence[str] = field(default_factory=tuple)
    """Where the setup is published (names of the sources cited in docs/presets.md)."""

    def record(self) -> dict[str, Any]:
        """Every field the preset sets, task parameters and generation settings together."""
        generation = {name: getattr(self, name) for name in GENERATION}
        return {**self.fields, **{k: v for k, v in generation.items() if v is not None}}

    def apply(self, task: Task, overridden: Mapping[str, Any]) -> Task:
        """``task`` under this preset's generation settings, its protocol naming the preset."""
        settings = {k: getattr(self, k) for k in GENERATION[:2] if getattr(self, k) is not None}
        if settings:
            task.config = task.config.merge(GenerateConfig(**settings))
        if self.epochs is not None:
            task.epochs = self.epochs  # the task's reducers stay
        protocol = (task.metadata or {}).get("protocol")
        if isinstance(protocol, dict):
            protocol.update(
                preset=self.name, preset_fields=self.record(), overridden=dict(overridden) or None
            )
        return task


def spelled(value: Any) -> str:
    """A parameter as the command line spells it: ``2024,2025`` and ``["2024", "2025"]`` agree,
    as do ``1800`` and ``"1800"``, ``True`` and ``"true"``."""
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value).lower()


def overrides(preset: Preset, given: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters the user gave that change what the preset sets."""
    return {
        name: value
        for name, value in given.items()
        if name in preset.fields and spelled(value) != spelled(preset.fields[name])
    }


def presettable(
    presets: Sequence[Preset],
) -> Callable[[Callable[..., Task]], Callable[..., Task]]:
    """Give a task factory a keyword ``preset`` (one of ``presets``): its fields fill in the
    parameters the user did not give, and the task's protocol records the preset."""
    by_name = {p.name: p for p in presets}

    def decorate(factory: Callable[..., Task]) -> Callable[..., Task]:
        signature = inspect.signature(factory)
        for preset in presets:  # a programming error, caught when the module is imported
            unknown = set(preset.fields) - set(signature.parameters)
            if unknown:
                raise TypeError(f"preset {preset.name} sets unknown parameters {sorted(unknown)}")

        @functools.wraps(factory)
        def build(*args: Any, preset: str | None = None, **params: Any) -> Task:
            return preset_task(factory, by_name, preset, args, params)

        keyword = inspect.Parameter(
            "preset", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="str | None"
        )
        build.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*signature.parameters.values(), keyword]
        )
        return build

    return decorate


def preset_task(
    factory: Callable[..., Task],
    presets: Mapping[str, Preset],
    preset: str | None,
    args: Sequence[Any],
    params: Mapping[str, Any],
) -> Task:
    """The task ``factory`` builds of ``params`` under ``preset`` (a name of ``presets``; None:
    no preset): its fields fill in what ``params`` leave out, and the log records it."""
    if preset is None:
        return factory(*args, **params)
    with prerequisite():
        if preset not in presets:
            raise not_one_of("preset", preset, list(presets))
    chosen = presets[preset]
    task = factory(*args, **{**chosen.fields, **params})
    return chosen.apply(task, overrides(chosen, params))
