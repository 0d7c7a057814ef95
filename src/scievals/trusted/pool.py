"""A pool of persistent trusted workers: started lazily, warmed early, every job bounded.

At most ``width`` jobs run at once, each in a worker of its own (``worker.py``). A job is bounded
in wall-clock time (the harness kills its worker when it runs past), in CPU time (RLIMIT_CPU,
set by the worker before each job) and in memory (RLIMIT_AS, ``memory_limit``). A job that
overruns, or whose worker crashes or is killed, fails alone with ``JobFailed``; its worker is
replaced at once, so the next job finds a warm one. Workers stay up between jobs, so a job costs
a round trip over two pipes, not an interpreter start.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import fcntl
import json
import math
import os
import pickle
import queue
import select
import signal
import subprocess
import sys
import threading
import time
import weakref
from concurrent.futures import Future
from functools import cache
from pathlib import Path
from typing import Any

import anyio

from scievals.trusted.protocol import HEADER, MAX_ANSWER_BYTES

START_SECONDS = 120.0
"""How long a new worker may take to be ready (its imports, on a loaded machine)."""
WORKER_ENV = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "MALLOC_MMAP_THRESHOLD_": str(128 << 10),
}
"""A worker computes on one thread (the pool's width is the parallelism), and glibc keeps
serving large blocks (a records line, an array) by mmap, returned when freed: its default
raises that threshold after the first free, and a worker that parsed many large records
kept their memory as a fragmented heap (a 2.2 GiB peak over 25 steps of 376 MiB records;
1.7 GiB with this and ``malloc_trim`` after each job)."""
MEMORY_BOUNDS = (2 << 30, 8 << 30)
"""Each worker's address space lies between these, whatever the machine."""


@cache
def memory_limit() -> int:
    """Each worker's address space (RLIMIT_AS): the trusted workers' share of the machine's
    memory (``sandbox.limits.TRUSTED_SHARE``, a quarter), divided among as many workers as
    the pool has at most (one per CPU), within ``MEMORY_BOUNDS``; so the workers' limits
    together stay a quarter of the machine, and the programs' share is the rest."""
    from scievals.sandbox import TRUSTED_SHARE, machine_memory_bytes

    share = int(machine_memory_bytes() * TRUSTED_SHARE) // (os.cpu_count() or 1)
    low, high = MEMORY_BOUNDS
    return min(high, max(low, share)) >> 20 << 20


def out_of_memory() -> str:
    return f"ran out of memory ({memory_limit() / 2**30:.3g} GiB)"


_CHUNK = 1 << 20


class JobFailed(Exception):
    """A job gave no answer. ``kind``: ``wall``, ``cpu``, ``memory``, ``crash``, ``killed``,
    ``answer`` (over the bound or malformed), ``error`` (the job raised) or ``start`` (no worker
    could start); the message completes "the job ..." ("ran past 20 s")."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _command() -> list[str]:
    root = str(Path(__file__).resolve().parents[2])  # the directory that holds scievals
    boot = (
        f"import sys; sys.path.insert(0, {root!r}); "
        "from scievals.trusted.worker import main; main()"
    )
    return [sys.executable, "-I", "-c", boot, str(os.getpid()), str(memory_limit())]


class _Spawner:
    """Starts every worker from one thread that lives as long as the harness: a worker's
    PR_SET_PDEATHSIG fires when the thread that started it ends, not only the harness."""

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[Future[subprocess.Popen[bytes]]] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="scievals-trusted-spawner", daemon=True).start()

    def _serve(self) -> None:
        while True:
            future = self._requests.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(
                    subprocess.Popen(
                        _command(),
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                        env={**os.environ, **WORKER_ENV},
                        cwd="/",
                        bufsize=0,
                    )
                )
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits for it
                future.set_exception(exc)

    def start(self) -> Future[subprocess.Popen[bytes]]:
        future: Future[subprocess.Popen[bytes]] = Future()
        self._requests.put(future)
        return future


_spawner_lock = threading.Lock()
_spawners: list[_Spawner] = []


def _spawner() -> _Spawner:
    with _spawner_lock:
        if not _spawners:
            _spawners.append(_Spawner())
        return _spawners[0]


def request(name: str, args: tuple[Any, ...], cpu: float) -> list[bytes]:
    """The frames of a job request: every ``bytes`` argument (a records file) travels raw, in a
    frame of its own, not copied through pickle."""
    raw = [i for i, arg in enumerate(args) if type(arg) is bytes]
    rest = tuple(None if i in raw else arg for i, arg in enumerate(args))
    head = pickle.dumps((name, rest, cpu, raw), protocol=pickle.HIGHEST_PROTOCOL)
    parts = [HEADER.pack(len(head)), head]
    for i in raw:
        parts += [HEADER.pack(len(args[i])), args[i]]
    return parts


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class _Worker:
    """One worker process and the protocol state with it."""

    def __init__(self, started: Future[subprocess.Popen[bytes]]) -> None:
        self._started = started
        self._proc: subprocess.Popen[bytes] | None = None
        self.ready = False
        self.dead = False

    def _process(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            try:
                self._proc = self._started.result(timeout=START_SECONDS)
            except Exception as exc:  # noqa: BLE001 - no process to run the job in
                self.dead = True
                raise JobFailed("start", f"could not start a worker: {exc}"[:300]) from exc
            for pipe in (self._proc.stdin, self._proc.stdout):
                assert pipe is not None
                os.set_blocking(pipe.fileno(), False)
                with contextlib.suppress(OSError):  # fewer round trips for large records
                    fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, _CHUNK)
        return self._proc

    def _known(self) -> subprocess.Popen[bytes] | None:
        """Its process, if started (without waiting for it)."""
        started = self._started
        if self._proc is None and started.done() and not started.cancelled():
            return None if started.exception() else started.result()
        return self._proc

    def exited(self) -> bool:
        """Its process has exited already (killed from outside while idle)."""
        proc = self._known()
        return proc is not None and proc.poll() is not None

    def pid(self) -> int | None:
        proc = self._known()
        return proc.pid if proc is not None else None

    def run(self, name: str, args: tuple[Any, ...], seconds: float, cpu: float) -> Any:
        parts = request(name, args, cpu)
        try:
            if not self.ready:
                self._hello()
            if self._process().poll() is not None:
                raise JobFailed("start", "its worker had exited before the job")
            late = JobFailed("wall", f"ran past {seconds:g} s")
            answer = self._exchange(parts, time.monotonic() + seconds, late, cpu)
        except BaseException:
            self.kill()
            raise
        if isinstance(answer, dict) and "ok" in answer:
            return answer["ok"]
        failed = answer.get("failed") if isinstance(answer, dict) else None
        if failed == "memory":
            self.kill()  # it exits by itself; a fresh one takes its place
            raise JobFailed("memory", out_of_memory())
        if failed == "answer":
            raise JobFailed("answer", f"gave an answer over {MAX_ANSWER_BYTES >> 20} MiB")
        if failed == "error":
            raise JobFailed("error", f"failed: {str(answer.get('message'))[:500]}")
        self.kill()
        raise JobFailed("answer", "gave a malformed answer")

    def _hello(self) -> None:
        """Wait for a new worker's first answer: ready, or why not."""
        late = JobFailed("start", f"not ready within {START_SECONDS:g} s")
        try:
            hello = self._exchange([], time.monotonic() + START_SECONDS, late, START_SECONDS)
        except JobFailed as exc:
            if exc.kind == "start":
                raise
            raise JobFailed("start", f"could not start a worker: {exc}") from None
        if hello != {"ready": True}:
            error = hello.get("error") if isinstance(hello, dict) else None
            raise JobFailed("start", f"could not start a worker: {str(error)[:300]}")
        self.ready = True

    def _exchange(self, parts: list[bytes], deadline: float, late: JobFailed, cpu: float) -> Any:
        """Send ``parts`` and read one answer (JSON), both before ``deadline`` (else kill the
        worker and raise ``late``)."""
        proc = self._process()
        assert proc.stdin is not None and proc.stdout is not None
        out, into = proc.stdin.fileno(), proc.stdout.fileno()
        unsent = [memoryview(part) for part in parts if part]
        poller = select.poll()
        poller.register(into, select.POLLIN)
        if unsent:
            poller.register(out, select.POLLOUT)
        got = bytearray()
        size: int | None = None
        while size is None or len(got) < HEADER.size + size:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise late
            for fd, _ in poller.poll(math.ceil(left * 1000)):
                if fd == out:
                    with contextlib.suppress(BlockingIOError):
                        try:
                            unsent[0] = unsent[0][os.write(out, unsent[0][:_CHUNK]) :]
                        except BrokenPipeError:  # it died: its end of file says how
                            unsent.clear()
                        if unsent and not unsent[0]:
                            unsent.pop(0)
                        if not unsent:
                            poller.unregister(out)
                    continue
                want = HEADER.size - len(got) if size is None else HEADER.size + size - len(got)
                try:
                    chunk = os.read(into, min(want, _CHUNK))
                except BlockingIOError:
                    continue
                if not chunk:
                    raise self._death(cpu)
                got += chunk
                if size is None and len(got) == HEADER.size:
                    size = HEADER.unpack(got)[0]
                    if size > MAX_ANSWER_BYTES:
                        self.kill()
                        raise JobFailed(
                            "answer", f"gave an answer over {MAX_ANSWER_BYTES >> 20} MiB"
                        )
        try:
            return json.loads(got[HEADER.size :])
        except (ValueError, RecursionError):
            self.kill()
            raise JobFailed("answer", "gave a malformed answer") from None

    def _death(self, cpu: float) -> JobFailed:
        code = self._reap()
        if code == -signal.SIGXCPU:
            return JobFailed("cpu", f"used more than {math.ceil(cpu)} s of CPU")
        if code == -signal.SIGKILL:
            return JobFailed("killed", "was killed (SIGKILL)")
        if code < 0:
            return JobFailed("crash", f"crashed ({_signal_name(-code)})")
        return JobFailed("crash", f"ended with exit status {code}")

    def _reap(self) -> int:
        self.dead = True
        proc = self._process()
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]
        return code

    def kill(self) -> None:
        if self.dead:
            return
        if self._proc is None and not self._started.done():
            self._started.cancel()
        with contextlib.suppress(JobFailed):
            proc = self._process()
            with contextlib.suppress(OSError):
                proc.kill()
            self._reap()
        self.dead = True


class WorkerPool:
    """Up to ``width`` workers; ``run`` takes an idle one (or starts one) for each job."""

    def __init__(self, width: int) -> None:
        self.width = max(1, width)
        self._idle: list[_Worker] = []
        self._workers: weakref.WeakSet[_Worker] = weakref.WeakSet()
        self._count = 0
        self._changed = threading.Condition()

    def _start(self) -> _Worker:
        worker = _Worker(_spawner().start())
        self._workers.add(worker)
        return worker

    def warm(self) -> None:
        """Start every worker not started yet (returns at once; they get ready meanwhile)."""
        with self._changed:
            while self._count < self.width:
                self._count += 1
                self._idle.append(self._start())

    def run(
        self, name: str, args: tuple[Any, ...], seconds: float, cpu: float | None = None
    ) -> Any:
        """Run job ``name`` on ``args`` within ``seconds`` of wall clock and ``cpu`` seconds of
        CPU (default: ``seconds``); its JSON answer, or ``JobFailed``. A worker that never got
        ready (killed while it started) is replaced once before the job fails."""
        cpu = seconds if cpu is None else cpu
        try:
            return self._run_once(name, args, seconds, cpu)
        except JobFailed as exc:
            if exc.kind != "start":
                raise
        return self._run_once(name, args, seconds, cpu)

    def _run_once(self, name: str, args: tuple[Any, ...], seconds: float, cpu: float) -> Any:
        worker = self._acquire()
        try:
            return worker.run(name, args, seconds, cpu)
        finally:
            with self._changed:
                self._idle.append(self._start() if worker.dead else worker)
                self._changed.notify()

    def _acquire(self) -> _Worker:
        with self._changed:
            while True:
                while self._idle:
                    ready = [w for w in self._idle if w.ready]
                    worker = ready[-1] if ready else self._idle[-1]
                    self._idle.remove(worker)
                    if not worker.exited():
                        return worker
                    worker.kill()
                    self._idle.insert(0, self._start())
                if self._count < self.width:
                    self._count += 1
                    return self._start()
                self._changed.wait()

    def pids(self) -> list[int]:
        """The process ids of the workers started so far and alive (for tests and tools)."""
        return [p for w in list(self._workers) if not w.dead and (p := w.pid()) is not None]

    def close(self) -> None:
        """Stop every worker: at the harness's exit, so that none outlives it even briefly."""
        with self._changed:
            workers = list(self._workers)
            self._idle, self._count = [], 0
        for worker in workers:
            worker.kill()


_shared_lock = threading.Lock()
_shared: list[WorkerPool] = []
_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = (
    weakref.WeakKeyDictionary()
)


def shared_pool() -> WorkerPool:
    """The harness's pool, as wide as the machine (like the step queue)."""
    with _shared_lock:
        if not _shared:
            _shared.append(WorkerPool(os.cpu_count() or 1))
            atexit.register(_shared[0].close)
        return _shared[0]


async def run_job(
    name: str, args: tuple[Any, ...], seconds: float, cpu: float | None = None
) -> Any:
    """``shared_pool().run`` without blocking the event loop; jobs beyond the pool's width wait here
    rather than each holding a thread."""
    shared = shared_pool()
    loop = asyncio.get_running_loop()
    if loop not in _limiters:
        _limiters[loop] = anyio.CapacityLimiter(shared.width)
    return await anyio.to_thread.run_sync(
        shared.run, name, args, seconds, cpu, limiter=_limiters[loop]
    )
