"""Shared helpers for the sandbox tests: one sandbox per module, leak checks."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from scievals.sandbox.engine import UID_SLOTS, engine
from scievals.sandbox.provider import ScievalsSandbox, ScievalsSandboxConfig

SECRET = "sk-scievals-test-secret-5f1c"


def run(coro):
    return asyncio.run(coro)


def make_box(**config) -> ScievalsSandbox:
    os.environ["SCIEVALS_TEST_API_KEY"] = SECRET  # in the harness's environment, never the child's
    return ScievalsSandbox(ScievalsSandboxConfig(**config), engine())


def sandbox_pids() -> list[int]:
    """Processes still alive that belong to executions: sandbox uids, or zygote children."""
    eng = engine()
    zygote = eng.hello.get("pid")
    base = eng.uids.base if eng.uids else None
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        uid = int(fields["Uid"].split()[0])
        ppid = int(fields["PPid"])
        if fields.get("State", "").startswith("Z"):
            continue
        if (base is not None and base < uid <= base + UID_SLOTS) or ppid == zygote:
            found.append(int(entry.name))
    return found


def assert_no_leftovers() -> None:
    """Every execution's processes are gone (supervisors may take a moment to exit)."""
    deadline = time.monotonic() + 5
    while sandbox_pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sandbox_pids() == []
