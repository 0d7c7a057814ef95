"""A log's protocol record against what this install records for the same config.

The task is built again here from the config the log's scorer recorded, under the preset its task
arguments name: its protocol (data version and targets, step count, extraction and pre-supplied
steps in the scorer line, timeout, runtimes and their versions, prompt, agent) and its
``runtime_versions`` are what this install would write into a log of the same run, so a field the
log records otherwise was edited, or the run had other data or runtimes than this install. The
sandbox's isolation and the memory limit describe the machine that ran it, not the protocol: they
are notes.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from scievals.artifacts import ArtifactError
from scievals.inputs import InputError
from scievals.regrade_verify import differ
from scievals.scicode.regrade.scievals_log import SharedLog
from scievals.scicode.task import scicode

MACHINE = ("sandbox", "memory_limit")
"""Protocol keys that describe the machine of the run: a difference is a note."""
AGENT_PARAMETERS = {
    "messages": "agent_message_limit",
    "tokens": "agent_token_limit",
    "tool_calls": "agent_tool_call_limit",
    "tool_timeout": "agent_tool_timeout",
    "time": "agent_time_limit",
}
"""``AgentLimits.record()`` keys -> the task parameters that set them (0: no limit)."""


def check_protocol(shared: SharedLog) -> tuple[list[str], list[str]]:
    """(differences, notes): every protocol and runtime-version field the log records otherwise
    than this install would, and the scorer config its metrics name if not the scorer's."""
    log = shared.log
    differences: list[str] = []
    for score in (log.results.scores if log.results else []) or []:
        params = (score.params or {}).get("config")
        if params is not None and params != shared.recorded:
            differences += differ(
                "scorer config",
                params,
                shared.recorded,
                (f"the metrics of {score.name} were computed under", "the scorer records"),
            )
    try:
        here = install_metadata(shared)
    except (InputError, ArtifactError, FileNotFoundError) as exc:
        first = (str(exc).splitlines() or [""])[0]
        return [*differences, f"protocol not checked: {first}"], []
    metadata = log.eval.metadata or {}
    notes: list[str] = []
    theirs, ours = metadata.get("protocol"), here["protocol"]
    if not isinstance(theirs, dict):
        differences.append("protocol: the log records none")
    else:
        for key in [*ours, *(k for k in theirs if k not in ours)]:
            lines = differ(f"protocol {key}", theirs.get(key), ours.get(key))
            (notes if key in MACHINE else differences).extend(lines)
    differences += differ(
        "runtime_versions", metadata.get("runtime_versions"), here["runtime_versions"]
    )
    return differences, notes


def install_metadata(shared: SharedLog) -> dict[str, Any]:
    """The metadata (protocol, runtime versions) this install gives the task of the log's
    config; an ``InputError`` when it does not build that task, or would have to import a file
    the log names to do so."""
    config = shared.config
    agent = config.agent or ""
    file, at, _ = agent.partition("@")
    if at and file.endswith(".py"):
        raise InputError(
            f"its agent {agent} is a file of the machine that ran it: not imported from a log"
        )
    preset = (shared.log.eval.task_args or {}).get("preset")
    task = scicode(**task_parameters(config.record(), shared.recorded.get("h5")), preset=preset)
    return dict(task.metadata or {})


def task_parameters(record: Mapping[str, Any], h5: str | None) -> dict[str, Any]:
    """The task parameters of a config record (``SciCodeConfig.record()``), with the targets
    file the run named (its name is part of the protocol's data version; it is not opened)."""
    names = inspect.signature(scicode).parameters
    params = {key: value for key, value in record.items() if key in names}
    params["h5"] = h5
    for key, value in (record.get("agent_limits") or {}).items():
        params[AGENT_PARAMETERS[key]] = value if key == "tool_timeout" else (value or 0)
    return params
