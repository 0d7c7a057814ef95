"""The fleet behind ``--sandbox docker`` with real containers: what a sample's programs leave in
a container (files, processes, IPC objects, a pinned container's files) never reaches the next
sample that gets the same container, and the containers are reused (one project started for
samples that run one after another).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from scievals.sandbox import FileJob, run_file
from scievals.sandbox.environments import sandbox_task

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("runtime_image")]

LEAVE = """
import ctypes, json, os, socket, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
rt = ctypes.CDLL("librt.so.1", use_errno=True)
for where in (".", "/tmp", "/dev/shm"):
    with open(os.path.join(where, "left-by-a"), "w") as fh:
        fh.write("secret")
made = {
    "shm": libc.shmget(0x5C1E, 4096, 0o1666),
    "msg": libc.msgget(0x5C1E, 0o1666),
    "sem": libc.semget(0x5C1E, 1, 0o1666),
    "mq": rt.mq_open(b"/left-by-a", os.O_CREAT | os.O_RDWR, 0o666, None),
}
subprocess.Popen(["sleep", "300"], start_new_session=True)  # outlives this program
print(json.dumps({"host": socket.gethostname(), "made": made}))
"""

LOOK = """
import ctypes, json, os, socket
libc = ctypes.CDLL(None, use_errno=True)
rt = ctypes.CDLL("librt.so.1", use_errno=True)
found = [p for p in ("left-by-a", "/tmp/left-by-a", "/dev/shm/left-by-a") if os.path.exists(p)]
found += [k for k, v in {
    "shm": libc.shmget(0x5C1E, 0, 0), "msg": libc.msgget(0x5C1E, 0), "sem": libc.semget(0x5C1E, 0, 0),
    "mq": rt.mq_open(b"/left-by-a", os.O_RDWR),
}.items() if v >= 0]
found += [p for p in os.listdir("/proc") if p.isdigit()
          and open(f"/proc/{p}/cmdline", "rb").read() == b"sleep\\x00300\\x00"]
print(json.dumps({"host": socket.gethostname(), "found": found}))
"""


async def _program(env, source: str) -> dict:
    ran = await run_file(env, FileJob("p.py", source, ["python3", "p.py"], 60))
    assert ran.outcome.returncode == 0, ran.outcome.stderr[-2000:]
    return json.loads(ran.outcome.stdout.strip().splitlines()[-1])


def test_nothing_of_one_sample_reaches_the_next_in_the_same_container():
    async def both() -> tuple[dict, dict]:
        async with sandbox_task("docker") as sample:
            async with sample() as envs:
                left = await _program(envs["2024"], LEAVE)
            async with sample() as envs:
                looked = await _program(envs["2024"], LOOK)
        return left, looked

    left, looked = asyncio.run(both())
    assert all(v >= 0 for v in left["made"].values()), left  # each was made
    assert looked["host"] == left["host"]  # the same container served both samples
    assert looked["found"] == []


def test_a_pinned_container_is_cleared_before_another_sample_gets_it():
    """Inspect's exec (a sample's own container): files it writes stay for the sample's next
    command, and are gone for the next sample that gets the container."""

    look = ["python3", "-c", LOOK.replace("left-by-a", "kept")]

    async def run() -> tuple[str, dict, dict]:
        async with sandbox_task("docker") as sample:
            async with sample() as envs:
                env = envs["2024"]
                await env.exec(["sh", "-c", "echo secret > kept; sleep 300 &"])
                same = (await env.exec(["cat", "kept"])).stdout.strip()
                before = json.loads((await env.exec(look)).stdout)
            async with sample() as envs:
                later = json.loads((await envs["2024"].exec(look)).stdout)
        return same, before, later

    same, before, later = asyncio.run(run())
    assert same == "secret" and "kept" in before["found"]
    assert any(f.isdigit() for f in before["found"])  # the sleep, seen while the sample runs
    assert later["host"] == before["host"]  # the pinned container was handed on ...
    assert later["found"] == []  # ... cleared: no file, no process
