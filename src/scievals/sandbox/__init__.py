"""Running model-written code: isolated, limited, fast, and unable to fake a pass.

``describe()`` is what tasks write into their logs; ``session()`` gives a ready sandbox outside an
Inspect eval (``scievals grade``). The provider itself is ``provider.ScievalsSandbox``. The names
other packages use (``_EXPORTS``) are imported from here, each on first use.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from scievals.lazy import lazy_exports

if TYPE_CHECKING:
    from scievals.sandbox.container import FileJob
    from scievals.sandbox.docker_pool import SharedContainer
    from scievals.sandbox.ending import Ending
    from scievals.sandbox.environments import (
        open_environments,
        providers_of,
        sandbox_spec,
        sandbox_task,
    )
    from scievals.sandbox.execution import exclusive, run_file
    from scievals.sandbox.kept import KeptFile
    from scievals.sandbox.limits import TRUSTED_SHARE, machine_memory_bytes
    from scievals.sandbox.provider import AGENT_ENVIRONMENT, ScievalsSandbox, ScievalsSandboxConfig
    from scievals.sandbox.runtime import (
        DEFAULT_RUNTIME,
        RUNTIMES,
        check_runtimes,
        ensure_runtime,
        runtime_environment,
    )

_described: dict[str, dict[str, Any]] = {}


def describe(runtime: str | None = None) -> dict[str, Any]:
    """The sandbox protocol for the log: isolation mode, a runtime's versions (default: the
    first runtime), limits, and what really enforces each limit on this host (``enforced``)
    (cached)."""
    from scievals.sandbox.runtime import DEFAULT_RUNTIME

    runtime = runtime or DEFAULT_RUNTIME
    if runtime not in _described:
        from scievals.sandbox.enforce import enforcement
        from scievals.sandbox.engine import detect_mode
        from scievals.sandbox.limits import Limits
        from scievals.sandbox.runtime import REPORTED, find_runtime, pins, pins_hash

        mode, note = detect_mode()
        built = find_runtime(runtime)
        versions = built.versions if built else pins(runtime)
        _described[runtime] = {
            "provider": "scievals",
            "mode": mode,
            "mode_note": note,
            "isolation": _ISOLATION[mode],
            "runtime_name": runtime,
            "runtime": {k: versions.get(k) for k in REPORTED},
            "runtime_all": versions,
            "runtime_python": f"{sys.version_info.major}.{sys.version_info.minor}",
            "runtime_hash": pins_hash(runtime),
            "runtime_built": built is not None,
            "limits": Limits().describe(),
            "enforced": enforcement().describe(Limits(), mode),
            "concurrency": os.cpu_count(),
            "blas_threads": 1,
            "kernel": platform.release(),
        }
    return dict(_described[runtime])


def protocol_fields(sandbox: str | None, runtimes: tuple[str, ...] = ()) -> dict[str, Any]:
    """The ``sandbox``, ``runtime`` (the first runtime's reported versions) and ``runtimes``
    (names, in the order they are tried) entries of a task's protocol record."""
    from scievals.sandbox.runtime import DEFAULT_RUNTIME, REPORTED, pins

    if sandbox is None:  # nothing runs model code
        return {"sandbox": None, "runtime": {}, "runtimes": None, "memory_limit": None}
    names = runtimes or (DEFAULT_RUNTIME,)
    if sandbox != "scievals":  # another provider serves the same pins (an image per runtime)
        first = pins(names[0])
        return {
            "sandbox": _foreign(sandbox, names),
            "runtime": {k: first.get(k) for k in REPORTED},
            "runtimes": list(names),
            # our compose file takes this machine's figure; another provider's is its own
            "memory_limit": memory_limit() if sandbox == "docker" else None,
        }
    facts = describe(names[0])
    return {
        "sandbox": f"scievals ({facts['mode']})",
        "runtime": facts["runtime"],
        "runtimes": list(names),
        "memory_limit": memory_limit(),
    }


def memory_limit() -> str:
    """Each program's memory on this machine, and what it was derived from (``limits.py``)."""
    from scievals.sandbox.limits import (
        HARNESS_GIB,
        TRUSTED_SHARE,
        Limits,
        machine_memory_bytes,
    )

    return (
        f"{Limits().memory_gib:g} GiB per program: {machine_memory_bytes() / 2**30:.1f} GiB, "
        f"less {TRUSTED_SHARE:.0%} for trusted workers and {HARNESS_GIB:g} GiB for the harness, "
        f"over {os.cpu_count() or 1} execution slots (at least 4 GiB)"
    )


def _foreign(sandbox: str, runtimes: tuple[str, ...]) -> str:
    """A bare ``docker`` is our compose file: named with the image and pins of each runtime
    (pins hash, not image id: ids differ between machines that build the same pins)."""
    if sandbox != "docker":
        return sandbox
    from scievals.sandbox.image import image_tag
    from scievals.sandbox.runtime import pins_hash

    return "docker (" + ", ".join(f"{image_tag(n)} pins {pins_hash(n)}" for n in runtimes) + ")"


def sandbox_images(sandbox: str | None, runtimes: tuple[str, ...]) -> list[dict[str, Any]]:
    """For the log: the images that serve ``runtimes`` under our compose file (bare
    ``docker``): tag, image id, pins hash, python and base; empty for other sandboxes."""
    if sandbox != "docker":
        return []
    from scievals.sandbox.image import image_records

    return image_records(runtimes)


def runtime_versions(runtimes: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """Every pinned package of each runtime, for the log (the protocol shows the main five)."""
    from scievals.sandbox.runtime import pins

    return {name: pins(name) for name in runtimes}


_ISOLATION = {
    "unshare": "pid, mount, network, ipc and uts namespaces per execution; private root file "
    "system (system and runtime read-only, private /tmp, sample dir writable); a dedicated "
    "unprivileged uid per execution; memory and pids cgroups, seccomp filter, fresh keyring, "
    "capped sample dir where the host allows (see enforced); rlimits; clean environment",
    "userns": "user, pid, mount, network, ipc and uts namespaces per execution; private root file "
    "system; capabilities dropped; cgroups, seccomp and keyring where the host allows (see "
    "enforced); rlimits (no per-uid process rlimit: the process count is watched instead); "
    "clean environment",
    "rlimits-only": "WEAKER: no namespaces (host file system and network visible); rlimits; a "
    "dedicated uid when running as root; cgroups, seccomp and keyring where the host allows "
    "(see enforced); clean environment",
}


def prestart(runtime: str | None = None) -> None:
    """Start a runtime's zygote (default: the first runtime) in a background thread, so that its
    imports overlap the harness's own start-up (about a second of ``scievals grade``'s wall
    time). A failure is left to the first real use, which reports it."""
    import threading

    def start() -> None:
        from scievals.sandbox.engine import engine
        from scievals.sandbox.runtime import DEFAULT_RUNTIME, find_runtime

        name = runtime or DEFAULT_RUNTIME
        with contextlib.suppress(Exception):  # the first real use says what went wrong
            if find_runtime(name) is not None:  # building one is the first use's to do
                engine(name).ensure_started()

    threading.Thread(target=start, name="scievals-prestart", daemon=True).start()


@asynccontextmanager
async def session(**config: Any) -> AsyncIterator[ScievalsSandbox]:
    """A ready sandbox outside an Inspect eval; its directory is removed on exit.

    ``config`` takes the fields of ``ScievalsSandboxConfig`` (memory_gib, cpu_seconds, ...).
    """
    import anyio

    from scievals.sandbox.engine import engine
    from scievals.sandbox.provider import ScievalsSandbox, ScievalsSandboxConfig

    eng = await anyio.to_thread.run_sync(engine)
    await anyio.to_thread.run_sync(eng.ensure_started)
    box = ScievalsSandbox(ScievalsSandboxConfig(**config), eng)
    try:
        yield box
    finally:
        box.cleanup()


_EXPORTS = {
    "AGENT_ENVIRONMENT": "provider",
    "DEFAULT_RUNTIME": "runtime",
    "Ending": "ending",
    "FileJob": "container",
    "KeptFile": "kept",
    "RUNTIMES": "runtime",
    "ScievalsSandbox": "provider",
    "ScievalsSandboxConfig": "provider",
    "SharedContainer": "docker_pool",
    "TRUSTED_SHARE": "limits",
    "check_runtimes": "runtime",
    "ensure_runtime": "runtime",
    "exclusive": "execution",
    "machine_memory_bytes": "limits",
    "open_environments": "environments",
    "providers_of": "environments",
    "run_file": "execution",
    "runtime_environment": "runtime",
    "sandbox_spec": "environments",
    "sandbox_task": "environments",
}
__all__ = [
    "describe",
    "memory_limit",
    "prestart",
    "protocol_fields",
    "runtime_versions",
    "sandbox_images",
    "session",
    "AGENT_ENVIRONMENT",
    "DEFAULT_RUNTIME",
    "Ending",
    "FileJob",
    "KeptFile",
    "RUNTIMES",
    "ScievalsSandbox",
    "ScievalsSandboxConfig",
    "SharedContainer",
    "TRUSTED_SHARE",
    "check_runtimes",
    "ensure_runtime",
    "exclusive",
    "machine_memory_bytes",
    "open_environments",
    "providers_of",
    "run_file",
    "runtime_environment",
    "sandbox_spec",
    "sandbox_task",
]

lazy_exports(__name__, _EXPORTS)
