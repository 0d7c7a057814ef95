"""A scievals SciBench log read back for ``--verify``: bounded, its task, parameters and scorers
checked, and the task this install builds of the same parameters beside it.

Logs are untrusted input. The file is refused with one line when it is too large
(``regrade_verify``), is not a scored log of the ``scibench`` task, or records parameters or
scorers this install refuses. The parameters are those the run was given (Inspect's
``task_args_passed``, a preset among them): the task built of them here gives the dataset the
run's samples are checked against (ids, gold, prompts), its protocol record, and its scorers.
Paths the log names (its data folder, a compose file, an agent's file) are of the machine that
ran it and are never opened: the data are this machine's (``--data-dir``,
``SCIEVALS_SCIBENCH_DIR`` or the cache), the sandbox ours.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.log import EvalLog
from inspect_ai.scorer import Scorer

from scievals.inputs import InputError, unreadable_log
from scievals.regrade_verify import read_bounded, read_header
from scievals.scibench.config import DEFAULT_SANDBOX, SciBenchConfig
from scievals.scibench.dataset import ENV_VAR
from scievals.scibench.presets import PRESETS
from scievals.scibench.scorer import SCORERS
from scievals.scibench.task import scibench, to_read

TASK = "scievals/scibench"
CONFIG_PARAMETERS = tuple(
    name for name in inspect.signature(SciBenchConfig.from_params).parameters if name != "cls"
)
"""The task parameters ``SciBenchConfig`` reads (the agent's limits aside: grading reads none)."""


@dataclass(frozen=True)
class OwnLog:
    """A SciBench log to verify, and what this install makes of its parameters."""

    path: Path
    log: EvalLog
    params: dict[str, Any]
    """The parameters the run was given, as the log records them."""
    config: SciBenchConfig
    """Those parameters (with the preset's fields they name) as this install reads them."""
    task: Task
    """This install's task of those parameters: its data, the sandbox ours."""
    scorers: dict[str, Scorer]
    """The log's scorers by name, built of the arguments it records."""
    notes: tuple[str, ...]
    protocol_unchecked: str | None = None
    """Why the task built here cannot stand for the run's protocol, or None."""

    @property
    def records(self) -> dict[str, dict[str, Any]]:
        """Scorer name -> its arguments, as the log records them."""
        return {s.name.split("/")[-1]: dict(s.options or {}) for s in self.log.eval.scorers or []}


def is_scibench_log(path: Path) -> bool:
    """Whether ``path`` is a readable Inspect log of the ``scibench`` task (by its header's task
    name or protocol; cheap and bounded): ``--verify`` sends it here, anything else to SciCode."""
    if unreadable_log(path) is not None:
        return False
    try:
        header = read_bounded(path, header_only=True)
    except InputError:
        return False
    protocol = (header.eval.metadata or {}).get("protocol")
    return header.eval.task == TASK or (
        isinstance(protocol, dict) and protocol.get("benchmark") == "scibench"
    )


def read_log(path: Path, data_dir: str | None) -> OwnLog:
    """The log at ``path`` and this install's task of its parameters (data from ``data_dir``,
    else ``SCIEVALS_SCIBENCH_DIR``, else the cache); an ``InputError`` (one line) for a file
    that is not a scored scievals SciBench log within the bounds."""
    header = read_header(path)
    if header.eval.task != TASK:
        raise InputError(f"{path} is a log of task {header.eval.task!r}, not of {TASK}")
    if header.results is None or not header.results.scores:
        raise InputError(
            f"{path} holds no scores to verify (generated with --no-score?): score it with "
            "`inspect score` first"
        )
    params = _params(path, header)
    config = _config(path, params)
    if config.subset == "exam":
        raise InputError(
            f"{path} is a log of the exam subset: a grader model scored it by a rubric, and "
            "--verify calls no model"
        )
    scorers = _scorers(path, header)
    here = data_dir or os.environ.get(ENV_VAR)
    notes, given = [], {**params, "data_dir": here}
    if params.get("data_dir") not in (None, here):
        notes.append(
            f"the run read its data from {params['data_dir']}; read here from {here or 'the cache'}"
        )
    if config.sandbox not in (None, DEFAULT_SANDBOX):
        notes.append(f"the run's programs ran in sandbox {config.sandbox}; re-run here in ours")
    if params.get("sandbox") is not None:
        given["sandbox"] = DEFAULT_SANDBOX
    unchecked = None
    agent = config.agent or ""
    if agent.partition("@")[0].endswith(".py") and "@" in agent:
        unchecked = f"its agent {agent} is a file of the machine that ran it: not imported"
        given = {**given, "agent": "react"}  # the same dataset; the agent is no part of grading
    try:
        with to_read():
            task = scibench(**given)
    except (InputError, TypeError, ValueError) as exc:
        lines = str(exc).splitlines()
        raise InputError("\n".join(f"{path}: its task parameters: {x}" for x in lines)) from None
    return OwnLog(path, read_bounded(path), params, config, task, scorers, tuple(notes), unchecked)


def _params(path: Path, header: EvalLog) -> dict[str, Any]:
    """The parameters the run was given; each must be one of the task's."""
    params = header.eval.task_args_passed
    if not isinstance(params, dict):
        raise InputError(f"{path} records no task parameters")
    known = inspect.signature(scibench).parameters
    unknown = sorted(str(k) for k in params if k not in known)
    if unknown:
        raise InputError(f"{path} records task parameters {unknown}, not of {TASK}")
    return dict(params)


def _config(path: Path, params: dict[str, Any]) -> SciBenchConfig:
    """The config of ``params`` under the preset they name."""
    presets = {p.name: p for p in PRESETS}
    preset = presets.get(str(params.get("preset")))
    fields = {**(preset.fields if preset else {}), **params}
    try:
        chosen = {k: v for k, v in fields.items() if k in CONFIG_PARAMETERS}
        return SciBenchConfig.from_params(**chosen)
    except (InputError, TypeError, ValueError) as exc:
        raise InputError(f"{path}: its task parameters: {exc}") from None


def _scorers(path: Path, header: EvalLog) -> dict[str, Scorer]:
    """The scorers the log records, each built of its recorded arguments; only SciBench's."""
    built: dict[str, Scorer] = {}
    for record in header.eval.scorers or []:
        name, options = record.name.split("/")[-1], record.options or {}
        if name not in SCORERS or name in built:
            raise InputError(
                f"{path} records scorer {record.name!r}"
                + (" twice" if name in built else f": not one of {', '.join(SCORERS)}")
            )
        try:
            if name == "robust":  # the values the task's parameters errata and abs_tol take
                SciBenchConfig.from_params(
                    errata=options.get("use_errata", False), abs_tol=options.get("abs_tol", 0.0)
                )
            built[name] = SCORERS[name](**options)
        except (InputError, TypeError) as exc:
            first = (str(exc).splitlines() or [""])[0][:200]
            raise InputError(f"{path}: its scorer {name}'s arguments: {first}") from None
    if not built:
        raise InputError(f"{path} records no SciBench scorer: not a log scievals scored")
    return built
