"""Shared helpers for the sandbox tests: one sandbox per module, leak checks."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from scievals.sandbox._zygote import tree
from scievals.sandbox.engine import engine
from scievals.sandbox.provider import ScievalsSandbox, ScievalsSandboxConfig

SECRET = "sk-scievals-test-secret-5f1c"


def run(coro):
    return asyncio.run(coro)


def make_box(**config) -> ScievalsSandbox:
    os.environ["SCIEVALS_TEST_API_KEY"] = SECRET  # in the harness's environment, never the child's
    return ScievalsSandbox(ScievalsSandboxConfig(**config), engine())


def sandbox_pids() -> list[int]:
    """Live processes under this process's zygote (every execution's tree hangs there: orphans
    are adopted by the execution's own init, not by the host's)."""
    zygote = engine().hello.get("pid")
    return [p for p in tree(zygote) if p != zygote and not _zombie(p)] if zygote else []


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def assert_no_leftovers() -> None:
    """Every execution's processes are gone (supervisors may take a moment to exit)."""
    deadline = time.monotonic() + 5
    while sandbox_pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sandbox_pids() == []
