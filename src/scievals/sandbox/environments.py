"""Sandbox environments outside an Inspect eval, one per scoring runtime, for any provider.

``scievals grade`` and re-scoring need what an eval's sample gets: an environment per runtime,
named as ``runtime.runtime_environment`` says (``default`` for the first, ``runtime-NAME`` for
the others), so that the scorer finds each runtime the same way under every provider. Our own
provider makes them from ``ScievalsSandboxConfig``; any other registered Inspect provider
(``docker``, ``k8s``, ...) goes through its own lifecycle (task_init, sample_init,
sample_cleanup, task_cleanup) with its config file, the packaged compose file for a bare
``docker``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from inspect_ai.util import SandboxEnvironment

from scievals.artifacts import ArtifactError
from scievals.inputs import InputError
from scievals.sandbox.registered import registered_provider
from scievals.sandbox.runtime import DEFAULT_RUNTIME, check_runtimes, runtime_environment

TASK_NAME = "scievals-grade"
logger = logging.getLogger(__name__)


def sandbox_spec(
    sandbox: str, runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,)
) -> str | tuple[str, str]:
    """What a task passes to Inspect for a provider other than ours: ``docker`` alone becomes
    the compose file of ``runtimes`` served by ``scievals-docker`` (Inspect's docker, each
    sample's containers handed on to the next: ``docker_pool.py``), with a warning now, not a
    failure at the first sample, when Docker answers and an image is missing or has other
    pins; ``TYPE:CONFIG`` and other providers pass as they are."""
    kind, _, config = sandbox.partition(":")
    if kind == "docker" and not config:
        from scievals.sandbox.docker_pool import NAME
        from scievals.sandbox.image import compose_file, image_problem

        for name in check_runtimes(runtimes):
            problem = image_problem(name)
            if problem:
                logger.warning("sandbox docker: %s", problem)
        return NAME, str(compose_file(runtimes))
    return (kind, config) if config else kind


def providers_of(sandbox: str) -> set[str]:
    """The Inspect provider types a task's ``sandbox`` parameter runs under: a bare ``docker``
    is the fleet (``scievals-docker``), or plain ``docker`` for an agent's run."""
    from scievals.sandbox.docker_pool import NAME

    kind = sandbox.partition(":")[0]
    return {kind, NAME} if sandbox == "docker" else {kind}


@asynccontextmanager
async def sandbox_task(
    sandbox: str = "scievals", runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,), **config: Any
) -> AsyncIterator[Callable[[], AbstractAsyncContextManager[dict[str, SandboxEnvironment]]]]:
    """A provider set up as for one task; yields a factory of samples, each a context manager
    giving ready environments (runtime name -> environment), removed on exit, as an eval's
    sample gets them (for Docker: containers of its own).

    ``config`` takes the fields of ``ScievalsSandboxConfig`` for our sandbox; other providers
    take their limits from their config file (``docker:COMPOSE``, ``k8s:VALUES``; a bare
    ``docker`` is ours, ``image.compose_text``) and ignore ``config``.
    """
    runtimes = check_runtimes(runtimes)
    if sandbox == "scievals":
        from scievals.sandbox.provider import ScievalsSandboxConfig

        provider: Any = provider_class("scievals")
        chosen: Any = ScievalsSandboxConfig(**config, runtimes=runtimes)
    else:
        spec = sandbox_spec(sandbox, runtimes)
        kind, chosen = spec if isinstance(spec, tuple) else (spec, None)
        provider = provider_class(kind)

    @asynccontextmanager
    async def sample() -> AsyncIterator[dict[str, SandboxEnvironment]]:
        made = await provider.sample_init(TASK_NAME, chosen, {})
        try:
            wanted = {name: runtime_environment(name, i) for i, name in enumerate(runtimes)}
            missing = [env for env in wanted.values() if env not in made]
            if missing:
                raise InputError(
                    f"sandbox {sandbox} has no environment {', '.join(missing)} for runtimes "
                    f"{','.join(runtimes)} (its services: {', '.join(made)})"
                )
            yield {name: made[env] for name, env in wanted.items()}
        finally:
            await provider.sample_cleanup(TASK_NAME, chosen, made, False)

    try:
        await provider.task_init(TASK_NAME, chosen)
    except Exception as exc:  # noqa: BLE001 - any provider's start-up failure, e.g. no daemon
        lines = [line for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
        raise ArtifactError(f"sandbox {sandbox} could not start: {' '.join(lines)[:400]}") from exc
    try:
        yield sample
    finally:
        await provider.task_cleanup(TASK_NAME, chosen, True)


@asynccontextmanager
async def open_environments(
    sandbox: str = "scievals", runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,), **config: Any
) -> AsyncIterator[dict[str, SandboxEnvironment]]:
    """The environments of one sample (``sandbox_task`` with a single sample)."""
    async with sandbox_task(sandbox, runtimes, **config) as sample, sample() as envs:
        yield envs


def provider_class(kind: str) -> type[SandboxEnvironment]:
    """The provider class Inspect registered under ``kind``, with ours registered first."""
    import scievals.sandbox.docker_pool  # noqa: F401 - registers "scievals-docker"
    import scievals.sandbox.provider  # noqa: F401 - registers "scievals"

    return registered_provider(kind)
