"""The fleet behind ``--sandbox docker`` (``docker_pool.py``), with Inspect's docker provider
replaced by a fake that counts projects: which compose files it serves, how many projects
start, which container each program and each sample gets, what leaves the rotation, what is
brought down. The same mechanism with real containers: ``tests/docker/test_docker_fleet.py``.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import anyio
import pytest
from inspect_ai.util import SandboxUserUnsupportedError

from scievals.prerequisite import PrerequisiteInputError
from scievals.sandbox import container, docker_pool
from scievals.sandbox.image import compose_text

serial = itertools.count()


class FakeContainer:
    def __init__(self, project: int, service: str) -> None:
        self.project, self.service, self.execs = project, service, []

    async def exec(self, cmd, **kwargs):
        self.execs.append(cmd)
        return cmd


class FakeDocker:
    """Inspect's docker provider as the fleet uses it: sample_init starts a project."""

    started: list[dict[str, FakeContainer]] = []
    down: list[dict[str, FakeContainer]] = []
    cleared: list[FakeContainer] = []

    @classmethod
    async def task_init(cls, task_name, config):
        pass

    @classmethod
    async def sample_init(cls, task_name, config, metadata):
        await anyio.sleep(0.01)
        number = next(serial)
        project = {name: FakeContainer(number, name) for name in docker_pool.services(config)}
        cls.started.append(project)
        return project

    @classmethod
    async def sample_cleanup(cls, task_name, config, environments, interrupted):
        cls.down.append(environments)

    @classmethod
    async def task_cleanup(cls, task_name, config, cleanup):
        pass


@pytest.fixture
def fleet(monkeypatch, tmp_path):
    """A compose file of ours (two runtimes), the fake provider, 2 CPUs, clearing that works."""
    FakeDocker.started, FakeDocker.down, FakeDocker.cleared = [], [], []
    monkeypatch.setattr(docker_pool, "_docker", lambda: FakeDocker)
    monkeypatch.setattr(docker_pool.os, "sched_getaffinity", lambda pid: {0, 1})
    cleared = FakeDocker.cleared

    async def clear(env):
        cleared.append(env)
        return not getattr(env, "unclearable", False)

    monkeypatch.setattr(container, "clear", clear)
    path = tmp_path / "compose.yaml"
    path.write_text(compose_text(("2024", "2025")))
    return str(path), cleared


async def _lifecycle(config, body):
    """The task's lifecycle around ``body``; what task_init started (a project per CPU, its
    first service's container warmed by a clear) is checked, then forgotten."""
    cls = docker_pool.SharedContainer
    await cls.task_init("t", config)
    assert len(FakeDocker.started) == 2
    assert FakeDocker.cleared == [p["default"] for p in FakeDocker.started]
    FakeDocker.started.clear()
    FakeDocker.cleared.clear()
    try:
        return await body(cls)
    finally:
        await cls.task_cleanup("t", config, True)


@pytest.mark.parametrize(
    "text, why",
    [
        ("services: {}\n", "no services"),
        ("services:\n  default:\n    image: python:3.11\n", "not every service"),
        (compose_text(("2024",)) + "  agent:\n    x-scievals-runtime: '2024'\n", "agent"),
        ("services:\n  runtime-2025:\n    x-scievals-runtime: '2025'\n", "not 'default'"),
        (": [", "cannot be read"),
        ("just text\n", "cannot be read"),
    ],
)
def test_only_our_compose_files_are_served(tmp_path, text, why):
    path = tmp_path / "other.yaml"
    path.write_text(text)
    with pytest.raises(PrerequisiteInputError, match=why) as raised:
        docker_pool.services(str(path))
    assert f"docker:{path}" in str(raised.value)  # the way to run it anyway


def test_a_missing_compose_file_is_refused(tmp_path):
    with pytest.raises(PrerequisiteInputError, match="cannot be read"):
        docker_pool.services(str(tmp_path / "absent.yaml"))


def test_programs_of_every_sample_share_at_most_two_projects_per_cpu(fleet):
    """Forty programs of ten samples at once: four projects (2 CPUs), every program in a
    container of its own runtime, no container holding two programs at a time."""
    config, _ = fleet
    busy: set[int] = set()
    overlaps: list[int] = []

    async def program(env, service):
        async with container.turn(env) as held:
            assert held.service == service
            if id(held) in busy:
                overlaps.append(id(held))
            busy.add(id(held))
            await anyio.sleep(0.02)
            busy.discard(id(held))

    async def body(cls):
        samples = [await cls.sample_init("t", config, {}) for _ in range(10)]
        await asyncio.gather(
            *[program(s[name], name) for s in samples for name in s for _ in range(2)]
        )
        for s in samples:
            await cls.sample_cleanup("t", config, s, False)

    asyncio.run(_lifecycle(config, body))
    assert len(FakeDocker.started) == 2  # beside the two of task_init
    assert overlaps == []
    assert len(FakeDocker.down) == 4  # all brought down at the task's end


def test_a_failed_container_leaves_the_rotation(fleet, monkeypatch):
    config, _ = fleet
    monkeypatch.setattr(container, "failed", lambda env: env.project == first_project[0])
    first_project: list[int] = []

    async def body(cls):
        sample = await cls.sample_init("t", config, {})
        seen = []
        async with container.turn(sample["default"]) as held:
            first_project.append(held.project)
        for _ in range(3):
            async with container.turn(sample["default"]) as held:
                seen.append(held.project)
        return seen

    first, second, third = asyncio.run(_lifecycle(config, body))
    assert first_project[0] != first == second == third


def test_a_sample_that_runs_commands_gets_a_container_of_its_own(fleet):
    """Inspect's exec goes to a container pinned to the sample, its programs too; no other
    sample gets it until the runner has cleared it, and one that cannot be cleared is not
    handed on."""
    config, cleared = fleet

    async def body(cls):
        first = await cls.sample_init("t", config, {})
        await first["default"].exec(["true"])
        pin = first["default"]._pin
        async with container.turn(first["default"]) as held:
            assert held is pin
        second = await cls.sample_init("t", config, {})
        await second["default"].exec(["true"])
        assert second["default"]._pin is not pin  # not while the first holds it
        await cls.sample_cleanup("t", config, first, False)
        assert cleared == [pin]
        third = await cls.sample_init("t", config, {})
        await third["default"].exec(["true"])
        assert third["default"]._pin is pin  # cleared, handed on
        pin.unclearable = True
        await cls.sample_cleanup("t", config, third, False)
        fourth = await cls.sample_init("t", config, {})
        await fourth["default"].exec(["true"])
        assert fourth["default"]._pin is not pin

    asyncio.run(_lifecycle(config, body))


def test_an_interrupted_sample_hands_nothing_on(fleet):
    config, cleared = fleet

    async def body(cls):
        first = await cls.sample_init("t", config, {})
        await first["default"].exec(["true"])
        pin = first["default"]._pin
        await cls.sample_cleanup("t", config, first, True)
        second = await cls.sample_init("t", config, {})
        await second["default"].exec(["true"])
        assert second["default"]._pin is not pin and cleared == []

    asyncio.run(_lifecycle(config, body))


def test_no_command_runs_as_another_user_and_a_sample_without_a_pin_has_no_connection(fleet):
    config, _ = fleet

    async def body(cls):
        sample = await cls.sample_init("t", config, {})
        with pytest.raises(SandboxUserUnsupportedError):
            await sample["default"].exec(["id"], user="root")
        with pytest.raises(ConnectionError, match="no container of its own"):
            await sample["default"].connection()
        assert FakeDocker.started == []  # neither started a container

    asyncio.run(_lifecycle(config, body))


def test_pins_never_wait_on_leases(fleet):
    """Every lease held (four projects busy), a sample's first command still gets a container
    (from the pins' own projects), so the two kinds cannot wait on each other."""
    config, _ = fleet
    release = anyio.Event()

    async def hold(env):
        async with container.turn(env):
            await release.wait()

    async def body(cls):
        samples = [await cls.sample_init("t", config, {}) for _ in range(4)]
        async with anyio.create_task_group() as group:
            for s in samples:
                group.start_soon(hold, s["default"])
            await anyio.sleep(0.2)
            other = await cls.sample_init("t", config, {})
            with anyio.fail_after(5):
                await other["default"].exec(["true"])
            release.set()

    asyncio.run(_lifecycle(config, body))
    assert len(FakeDocker.started) == 3  # two more leases' projects, the pin's own


def test_the_bare_docker_spec_is_the_fleet(monkeypatch):
    from scievals.sandbox import environments

    monkeypatch.setattr("scievals.sandbox.image.image_problem", lambda name: None)
    kind, config = environments.sandbox_spec("docker", ("2024", "2025"))
    assert kind == docker_pool.NAME
    assert docker_pool.services(config) == ["default", "runtime-2025"]
    assert environments.sandbox_spec("docker:mine.yaml") == ("docker", "mine.yaml")
    assert Path(config).is_file()


def test_concurrent_lifecycles_outside_an_eval_keep_their_own_fleets(fleet):
    """Two ``scievals grade`` calls at once (the hostile corpus in Docker runs three): the one
    that ends first brings down its own projects, never the other's, which is still running."""
    config, _ = fleet
    cls = docker_pool.SharedContainer
    first_done = anyio.Event()

    async def grade(wait: bool) -> set[int]:
        await cls.task_init("t", config)
        sample = await cls.sample_init("t", config, {})
        used = set()
        if wait:
            await first_done.wait()
        async with container.turn(sample["default"]) as held:
            used.add(held.project)
        await cls.task_cleanup("t", config, True)
        if not wait:
            first_done.set()
        return used

    async def both():
        return await asyncio.gather(grade(True), grade(False))

    later, sooner = asyncio.run(both())
    assert later.isdisjoint(sooner)
    down = {env["default"].project for env in FakeDocker.down}
    assert later <= down and sooner <= down  # each brought down once its own call ended
    assert len(FakeDocker.started) == len(FakeDocker.down) == 4


@pytest.mark.parametrize(
    "recorded, ran, overridden",
    [
        ("docker (scievals-runtime:2024 pins 1a2b)", docker_pool.NAME, False),  # the fleet
        ("docker (scievals-runtime:2024 pins 1a2b)", "docker", False),  # an agent's run
        ("docker:mine.yaml", "docker", False),
        ("docker:mine.yaml", docker_pool.NAME, True),
        ("scievals (unshare)", docker_pool.NAME, True),
        ("scievals (unshare)", "local", True),
    ],
)
def test_the_report_knows_the_fleet_is_what_docker_asked_for(recorded, ran, overridden):
    from types import SimpleNamespace

    from scievals.report.load import _ran_in

    log = SimpleNamespace(eval=SimpleNamespace(sandbox=SimpleNamespace(type=ran, config="c")))
    said = _ran_in(log, {"sandbox": recorded})
    assert bool(said) is overridden
    if overridden:
        assert said["sandbox"].startswith(f"{ran}:c (eval-level --sandbox")


def test_containers_that_fail_are_replaced_so_no_program_waits_forever(fleet, monkeypatch):
    """Every container's runner fails (a program that breaks it, a container that died): each
    leaves the rotation and a new project takes its place, so twelve programs in turn all get
    one, where a fleet that only counted its starts would wait forever after four."""
    config, _ = fleet
    monkeypatch.setattr(container, "failed", lambda env: True)

    async def body(cls):
        sample = await cls.sample_init("t", config, {})
        with anyio.fail_after(10):
            for _ in range(12):
                async with container.turn(sample["default"]):
                    pass

    asyncio.run(_lifecycle(config, body))
    assert len(FakeDocker.started) == 10  # the two of task_init served the first two
