"""How a program ended, as structured facts for scorers (never parsed from what it printed).

In our sandbox the engine says which limit it stopped the program for; elsewhere (docker, local,
k8s) what can be known is derived from ``exec`` (``execution.py``). A failure of the sandbox
machinery itself (zygote or supervisor gone, a broken channel) is ``infrastructure``: no verdict
about the program.
"""

from __future__ import annotations

from dataclasses import dataclass

LIMITS = ("timeout", "wall_clock", "memory", "cpu", "processes", "output", "file_size", "disk")


@dataclass(frozen=True)
class Ending:
    """One execution's end. With ``infrastructure`` set, the other fields say nothing."""

    returncode: int | None  # None: the exec timeout (wall clock asked by the caller) stopped it
    stdout: str
    stderr: str  # the program's own; the engine's notes are not in it
    limit: str | None  # which limit the engine stopped it for (one of LIMITS), or None
    reason: str | None  # the engine's sentence, e.g. "memory limit (4 GiB)"; None: exited itself
    seconds: float  # how long the program ran (the supervisor's clock: no queueing)
    infrastructure: str | None = None  # the sandbox failed twice: no verdict about the program


def infrastructure(failure: str, seconds: float) -> Ending:
    return Ending(None, "", "", None, None, seconds, infrastructure=failure)
