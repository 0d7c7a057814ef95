"""Where an agent's tools run: never where its answer is graded.

Grading must see nothing the agent left (files, ``sitecustomize.py``, modules on the path,
processes), so an agent works in an environment of its own, ``agent``, and its answers are
graded in the sample's others. In our sandbox that is a directory of its own (every tool call
and every program already gets its own process tree, killed when it ends, and its own
``/tmp``); under Docker a container of its own: the service ``agent`` of our compose file, a
copy of the first runtime's with its own working volume. Any other provider must offer an
``agent`` environment itself, or the run stops at its first sample saying so.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from inspect_ai.util import sandbox

from scievals.inputs import InputError
from scievals.paths import cache_dir, write_if_changed
from scievals.sandbox import AGENT_ENVIRONMENT, ScievalsSandboxConfig


def agent_sandbox() -> str:
    """The environment the current sample's agent works in; an ``InputError`` without one."""
    try:
        sandbox(AGENT_ENVIRONMENT)
    except ValueError:
        raise InputError(
            "an agent needs an environment apart from those its answers are graded in: use "
            "the task's sandbox=scievals or sandbox=docker (not an eval-level --sandbox), or "
            f"give the sandbox's configuration a service named {AGENT_ENVIRONMENT!r}"
        ) from None
    return AGENT_ENVIRONMENT


def with_agent_service(compose: Path) -> Path:
    """``compose`` with the service ``agent`` added: the default service's settings (image,
    no network, limits, user, read-only root, capped tmpfs mounts: a container's own)."""
    data: dict[str, Any] = yaml.safe_load(compose.read_text())
    data["services"][AGENT_ENVIRONMENT] = copy.deepcopy(data["services"]["default"])
    text = "# written by scievals.agents.environment: " + compose.name + " and an agent service\n"
    text += yaml.safe_dump(data, sort_keys=False)
    return write_if_changed(cache_dir("docker") / f"agent-{compose.name}", text)


def agent_sandbox_spec(sandbox: str, spec: str | tuple[str, Any]) -> str | tuple[str, Any]:
    """The task's sandbox ``spec`` (from its parameter ``sandbox``) for an agentic run: ours
    gives each sample an agent environment, a bare ``docker`` (our compose file) gains the
    agent's service; other specs are kept (checked at each sample)."""
    if sandbox == "scievals":
        config = spec[1] if isinstance(spec, tuple) else ScievalsSandboxConfig()
        return "scievals", config.model_copy(update={"agent": True})
    if sandbox == "docker" and isinstance(spec, tuple):
        return "docker", str(with_agent_service(Path(spec[1])))
    return spec
