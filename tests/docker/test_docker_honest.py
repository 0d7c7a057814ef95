"""The honest corpus (``tests/scicode/honest_corpus.py``) in Inspect's docker sandbox.

Honest code written unlike the gold code must get the same verdict in a container as in our
sandbox: every case is graded both ways in the same run (``grade(..., sandbox="docker")``, the
fleet of ``docker_pool.py``, our compose file) and the (pass, reason kind) pairs must be equal. That
our sandbox agrees with the official rule on them is ``tests/scicode/test_honest_corpus.py``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from timing import OFFICIAL_TIMEOUT

from scievals.scicode.grade import grade
from tests.scicode.honest_corpus import CASES
from tests.scicode.test_honest_corpus import batches, completions

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("runtime_image", "dev_targets")]

DIFFERS: dict[str, str] = {}
"""Case id -> why a container gives another verdict than our sandbox (none today)."""


def _grade_all(sandbox: str) -> dict[str, dict[str, Any]]:
    plan = [(batch, completions(batch)) for batch in batches(CASES)]

    async def every() -> list[list[dict[str, Any]]]:
        gate = asyncio.Semaphore(2)

        async def one(replies: dict[str, str]) -> list[dict[str, Any]]:
            async with gate:
                return (
                    await grade(replies, split="dev", sandbox=sandbox, timeout=OFFICIAL_TIMEOUT)
                )[0]

        return await asyncio.gather(*[one(replies) for _, replies in plan])

    rows = {}
    for (batch, _), verdicts in zip(plan, asyncio.run(every()), strict=True):
        by_step = {v["step"]: v for v in verdicts}
        for item in batch:
            rows[item.id] = by_step[item.step]
    return rows


def test_honest_corpus_gets_our_verdicts_in_docker():
    """One test (about 5 minutes on 2 cores): the corpus in Docker, then in our sandbox."""
    started = time.monotonic()
    docker = _grade_all("docker")
    in_docker = time.monotonic() - started
    ours = _grade_all("scievals")
    wrong = []
    for item in CASES:
        mine, theirs = ours[item.id], docker[item.id]
        pair = (theirs["passed"], theirs["reason_kind"])
        if pair != (mine["passed"], mine["reason_kind"]) and item.id not in DIFFERS:
            wrong.append(
                f"{item.id}: Docker {theirs['reason_kind']} ({theirs['reason']}), "
                f"ours {mine['reason_kind']} ({mine['reason']})"
            )
    passed = sum(v["passed"] for v in docker.values())
    print(
        f"\nhonest corpus in Docker: {len(CASES)} cases, {passed} pass, {len(wrong)} differ from "
        f"our sandbox ({in_docker:.0f} s in Docker, {time.monotonic() - started - in_docker:.0f} s "
        "in ours)",
        *wrong,
        sep="\n  ",
    )
    assert not wrong, "verdicts differ from our sandbox:\n" + "\n".join(wrong)
