"""``scievals-docker``: Inspect's docker sandbox for our compose files, its containers shared by
the samples of a task as a fleet, each step program run in the next free one.

Inspect's own lifecycle starts a compose project per sample: five ``docker compose`` processes
(config, up, ps, a ``pwd`` per service, down), a fresh import of numpy, scipy and sympy by each
container's warm server, and one program at a time for the whole sample, so that a problem's
steps run one after another while the machine idles. Our runtime containers need none of that
to keep samples apart: before and after every program the runner (``inside/container_runner.py``)
kills whatever a program left and empties the working directory, /tmp, /dev/shm and the IPC
namespace, so nothing of one program reaches the next, whether the next is a step of the same
sample or of another. So a task's samples share a fleet of at most two projects per CPU,
started as programs first need them and brought down at the task's end, and each program runs
in whichever container of its runtime is free, as our own sandbox runs each in a directory of
its own.

A sample's environments are views of the fleet (``SharedContainer``). Step programs go through
``container.run_file``, which leases a container for the one program. Anything else a task does
with an environment (``exec``, files, a connection) goes to a container pinned to the sample
for its lifetime and cleared by the runner before another sample gets it. A container whose
runner failed leaves the rotation. Only compose files written by scievals are served (every
service one of our runtime images, no agent service): anything else is refused before the first
sample, since it would be shared without the runner's clearing. An agent's tools run in
containers of plain ``docker``, one project per sample.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, overload

import anyio
import yaml
from inspect_ai.util import (
    ExecResult,
    SandboxConnection,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxUserUnsupportedError,
    sandboxenv,
)
from inspect_ai.util._sandbox.lifecycle import (  # inspect-evals-lint: ignore[private_api_imports] -- the batch's provider state, where Inspect's own docker keeps its registry
    sandbox_lifecycle_state,
)
from pydantic import BaseModel

from scievals.prerequisite import PrerequisiteInputError
from scievals.sandbox import container
from scievals.sandbox.registered import registered_provider

NAME = "scievals-docker"
PER_CPU = 2
"""Projects per CPU: one runs a program while another's step is judged on the trusted side."""


def _docker() -> type[SandboxEnvironment]:
    return registered_provider("docker")


def services(config: SandboxEnvironmentConfigType | None) -> list[str]:
    """The services of one of our compose files, in order; a one-line refusal for anything
    else (see the module's doc)."""
    why = None
    try:
        found = yaml.safe_load(Path(str(config)).read_text("utf-8"))["services"]
        if not isinstance(found, dict) or not found:
            why = "it has no services"
        elif not all(isinstance(s, dict) and "x-scievals-runtime" in s for s in found.values()):
            why = "not every service is one of our runtime images (x-scievals-runtime)"
        elif "agent" in found:
            why = "an agent's service runs in plain docker"
        elif next(iter(found)) != "default":
            why = "its first service is not 'default'"
    except (OSError, TypeError, KeyError, UnicodeDecodeError, yaml.YAMLError) as exc:
        why = f"it cannot be read ({type(exc).__name__})"
    if why:
        raise PrerequisiteInputError(
            f"sandbox {NAME} serves only the compose files scievals writes, not {config}: "
            f"{why}; use docker:{config} for a compose file of your own"
        )
    return list(found)


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) or 1


class Rotation:
    """Containers of one kind of use (leases or pins): at most ``size`` of each service in the
    rotation, projects started on demand (one for each that left it), the free ones."""

    def __init__(self, fleet: Fleet, size: int) -> None:
        self.fleet, self.size = fleet, size
        self.count = {name: 0 for name in fleet.services}
        """Each service's containers in the rotation (free or in use) or starting."""
        self.free: dict[str, list[SandboxEnvironment]] = {name: [] for name in fleet.services}
        self.changed = anyio.Condition()

    async def take(self, service: str) -> SandboxEnvironment:
        """A free container of ``service``, else a new project's, else the next one freed."""
        async with self.changed:
            while not self.free[service]:
                if self.count[service] < self.size:
                    self._count(+1)
                    break
                await self.changed.wait()
            else:
                return self.free[service].pop()
        try:
            project = await self.fleet.start()
        except BaseException:
            async with self.changed:
                self._count(-1)
                self.changed.notify_all()
            raise
        async with self.changed:
            for name, env in project.items():
                if name != service and name in self.free:
                    self.free[name].append(env)
            self.changed.notify_all()
        return project[service]

    def _count(self, projects: int) -> None:
        """A project brings (or a failed start takes back) one container of each service."""
        for name in self.count:
            self.count[name] += projects

    async def prestart(self, count: int) -> None:
        """Start ``count`` projects at once, their first service's containers warm, before any
        program needs them (our own sandbox warms its zygote at the task's start too)."""
        first = self.fleet.services[0]
        async with self.changed:
            count = max(0, min(count, self.size - self.count[first]))
            self._count(count)
        projects = await asyncio.gather(*(self.fleet.start() for _ in range(count)))
        ready = await asyncio.gather(*(container.clear(p[first]) for p in projects))
        async with self.changed:
            for project, usable in zip(projects, ready, strict=True):
                for name, env in project.items():
                    if name in self.free and (usable or name != first):
                        self.free[name].append(env)
                self.count[first] -= not usable
            self.changed.notify_all()

    async def give_back(self, service: str, env: SandboxEnvironment, usable: bool) -> None:
        """Return a container to the rotation, or keep it out for good (its project still
        comes down at the task's end) and make room for a new one."""
        async with self.changed:
            if usable:
                self.free[service].append(env)
            else:
                self.count[service] -= 1
            self.changed.notify_all()


class Fleet:
    """The containers of one compose file in one event loop: a pool for step programs' leases
    and one for pinned containers, each with a cap of its own, so that neither waits on the
    other (a sample with a pin runs its programs there)."""

    def __init__(self, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        self.task_name, self.config = task_name, config
        self.services = services(config)
        size = PER_CPU * _cpus()
        self.leases, self.pins = Rotation(self, size), Rotation(self, size)
        self.projects: list[dict[str, SandboxEnvironment]] = []

    async def start(self) -> dict[str, SandboxEnvironment]:
        project = await _docker().sample_init(self.task_name, self.config, {})
        self.projects.append(project)
        return project

    async def close(self, cleanup: bool) -> None:
        if cleanup:
            async with anyio.create_task_group() as group:
                for project in self.projects:
                    group.start_soon(
                        _docker().sample_cleanup, self.task_name, self.config, project, False
                    )
        self.projects.clear()


class Fleets:
    """The fleets of one sandbox lifecycle, by compose file: an Inspect eval's batch (its
    lifecycle scope, shared by every task and sample of the batch), or, outside an eval, the
    caller of ``task_init`` and the samples it starts (``scievals grade``: each call its own,
    as concurrent calls bring theirs down on their own)."""

    def __init__(self) -> None:
        self.by_config: dict[str, Fleet] = {}


_outside_eval: ContextVar[Fleets | None] = ContextVar("scievals_fleets", default=None)


def _fleets(new: bool = False) -> Fleets:
    """The current lifecycle's fleets (``new``: outside an eval, bind fresh ones)."""
    scope = sandbox_lifecycle_state()
    if scope is not None:
        return scope.get(Fleets)
    found = _outside_eval.get()
    if found is None or new:
        found = Fleets()
        _outside_eval.set(found)
    return found


def _fleet(task_name: str, config: SandboxEnvironmentConfigType | None) -> Fleet:
    fleets = _fleets().by_config
    if str(config) not in fleets:
        fleets[str(config)] = Fleet(task_name, config)
    return fleets[str(config)]


@sandboxenv(name=NAME)
class SharedContainer(SandboxEnvironment):
    """A sample's view of one service of the fleet: a container leased per step program, and
    one pinned to the sample for everything else."""

    def __init__(self, fleet: Fleet, service: str) -> None:
        super().__init__()
        self.fleet, self.service = fleet, service
        self._pin: SandboxEnvironment | None = None
        self._pinning = anyio.Lock()
        self._held: dict[int, SandboxEnvironment] = {}

    @asynccontextmanager
    async def lease(self) -> AsyncIterator[SandboxEnvironment]:
        """A container for one program of the current task (the same one again inside): the
        sample's pinned one if it has one, else the next free one of the fleet."""
        task = anyio.get_current_task().id
        if task in self._held:
            yield self._held[task]
            return
        env = self._pin or await self.fleet.leases.take(self.service)
        self._held[task] = env
        try:
            yield env
        finally:
            del self._held[task]
            if env is not self._pin:
                await self.fleet.leases.give_back(self.service, env, not container.failed(env))

    async def pinned(self) -> SandboxEnvironment:
        async with self._pinning:
            if self._pin is None:
                self._pin = await self.fleet.pins.take(self.service)
            return self._pin

    async def release(self, interrupted: bool) -> None:
        """The pinned container back to the fleet, once the runner has cleared it."""
        pin, self._pin = self._pin, None
        if pin is not None:
            usable = not interrupted and await container.clear(pin)
            await self.fleet.pins.give_back(self.service, pin, usable)

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        """Inspect's exec, in the sample's pinned container, as the image's unprivileged user
        (another ``user``, root above all, could reach what the fleet's next sample finds)."""
        if user is not None:
            raise SandboxUserUnsupportedError(
                f"{NAME} shares its containers between a task's samples and runs every "
                "command as the image's unprivileged user; `user` is not supported"
            )
        box = await self.pinned()
        async with container.turn(box):
            return await box.exec(
                cmd,
                input=input,
                cwd=cwd,
                env=env,
                timeout=timeout,
                timeout_retry=timeout_retry,
                concurrency=concurrency,
            )

    async def write_file(self, file: str, contents: str | bytes) -> None:
        box = await self.pinned()
        async with container.turn(box):
            await box.write_file(file, contents)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        box = await self.pinned()
        async with container.turn(box):
            return await box.read_file(file, text)  # type: ignore[call-overload]

    async def connection(self, *, user: str | None = None) -> SandboxConnection:
        """The pinned container's; a sample without one has no container of its own to
        connect to (Inspect asks every sample, and a pin for that alone would idle)."""
        if self._pin is None:
            raise ConnectionError(
                f"a sample of {NAME} has no container of its own until it runs a command: "
                "its step programs run in the fleet's next free container"
            )
        return await self._pin.connection(user=user)

    # -- lifecycle

    @classmethod
    def config_files(cls) -> list[str]:
        return _docker().config_files()

    @classmethod
    def is_docker_compatible(cls) -> bool:
        return True

    @classmethod
    def default_concurrency(cls) -> int | None:
        """None: a sample's views cost nothing; the fleet's pools cap the containers."""
        return None

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return _docker().config_deserialize(config)

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        """Inspect's docker checks, then a project per CPU (the step queue's slots) started."""
        _fleets(new=True)  # outside an eval, this caller's lifecycle gets fleets of its own
        fleet = _fleet(task_name, config)  # refuses a compose file not ours, before Docker's checks
        await _docker().task_init(task_name, config)
        await fleet.leases.prestart(_cpus())

    @classmethod
    async def sample_init(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        fleet = _fleet(task_name, config)
        return {name: cls(fleet, name) for name in fleet.services}

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        for env in environments.values():
            if isinstance(env, SharedContainer):
                await env.release(interrupted)

    @classmethod
    async def task_cleanup(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, cleanup: bool
    ) -> None:
        """The fleet brought down (without ``cleanup``, listed for ``inspect sandbox cleanup
        docker`` as Inspect lists its own)."""
        fleet = _fleets().by_config.pop(str(config), None)
        if fleet is not None:
            await fleet.close(cleanup)
        await _docker().task_cleanup(task_name, config, cleanup)

    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        await _docker().cli_cleanup(id)
