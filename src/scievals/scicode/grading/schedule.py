"""Keeping every core busy while grading: the longest step programs first, identical ones once.

Every path that grades (``scievals grade``, the Inspect scorer, dev target regeneration) sends
its step programs through one ``StepQueue`` per event loop: at most ``width`` run at once (the
sandbox's width), and whenever a slot frees up the most expensive waiting step takes it, so
the long steps (51.4 takes a minute) do not start last and hold the run up at the end. The
expected cost of a step is its time in a gold run, shipped as ``step_costs.json``; steps
without one cost the default, about a median dev step.

``StepCache`` grades the same step program (same code, tests, targets and timeout) once per
run, for example across epochs of a greedy model; it lives as long as one run.
"""

from __future__ import annotations

import asyncio
import hashlib
import heapq
import itertools
import json
import os
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import cache
from importlib import resources
from typing import Any, TypeVar

DEFAULT_COST = 1.0
T = TypeVar("T")


@cache
def step_costs() -> dict[str, float]:
    """Seconds each dev step's gold program took (measured; see bench/scicode_grade.py)."""
    text = (
        resources.files("scievals.scicode.grading").joinpath("step_costs.json").read_text("utf-8")
    )
    return {k: float(v) for k, v in json.loads(text)["seconds"].items()}


def expected_cost(step_id: str) -> float:
    return step_costs().get(step_id, DEFAULT_COST)


class StepQueue:
    """A concurrency limit that admits the most expensive waiting step first."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.running = 0
        self.waiting: list[tuple[float, int, asyncio.Future[None]]] = []
        self.order = itertools.count()
        self.started: list[str] = []
        """Step ids in the order they got a slot (tests read it to check the order)."""

    @asynccontextmanager
    async def slot(self, step_id: str, cost: float | None = None) -> AsyncIterator[None]:
        cost = expected_cost(step_id) if cost is None else cost
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        heapq.heappush(self.waiting, (-cost, next(self.order), future))
        loop.call_soon(self._admit)  # after every request made in this turn of the loop
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release()
            raise
        self.started.append(step_id)
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        self.running -= 1
        self._admit()

    def _admit(self) -> None:
        while self.waiting and self.running < self.width:
            _, _, future = heapq.heappop(self.waiting)
            if not future.cancelled():
                self.running += 1
                future.set_result(None)


_queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, StepQueue] = (
    weakref.WeakKeyDictionary()
)


def queue() -> StepQueue:
    """The step queue of the running event loop (one per loop: futures belong to a loop)."""
    loop = asyncio.get_running_loop()
    if loop not in _queues:
        _queues[loop] = StepQueue(os.cpu_count() or 1)
    return _queues[loop]


class StepCache:
    """Verdicts of the step programs graded in one run, by what determines them."""

    def __init__(self) -> None:
        self.results: dict[str, asyncio.Future[Any]] = {}
        self.reused = 0

    @staticmethod
    def key(*parts: Any) -> str:
        return hashlib.sha256(json.dumps(parts, default=repr).encode()).hexdigest()

    async def once(self, key: str, compute: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """The result for ``key``, computed by the first caller; (result, whether reused)."""
        if key in self.results:
            self.reused += 1
            return await asyncio.shield(self.results[key]), True
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.results[key] = future
        try:
            result = await compute()
        except BaseException as exc:
            del self.results[key]
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # marked retrieved: the waiters re-raise it
            raise
        future.set_result(result)
        return result, False
