"""Running one step in the sandbox and judging it on the trusted side.

A step passes when its program (``program.py``) exits 0 within the timeout, and every test,
re-run on the trusted side against the real target with the values the model's code returned
(``replay.py``), holds. Reasons come from the sandbox engine's structured outcome and from the
trusted side; text the program prints is only used to name the exception that stopped it.
"""

from __future__ import annotations

import ast
import math
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from typing import Any

import anyio
from inspect_ai.util import SandboxEnvironment

from scievals.sandbox import Ending, FileJob, KeptFile, exclusive, run_file
from scievals.scicode.data.dataset import Problem, Step
from scievals.scicode.extract import MAX_COMPLETION_CHARS, header_name
from scievals.scicode.grading.program import plans_for, step_program
from scievals.scicode.grading.replay import Failure, RecordError, Replayed, read_replayed
from scievals.scicode.grading.rewrite import TestPlan
from scievals.scicode.grading.schedule import StepCache, queue
from scievals.scicode.inside.wire import MAX_RECORD_BYTES
from scievals.scicode.verdict import StepVerdict
from scievals.trusted import JobFailed, out_of_memory, run_job, shared_pool

DEFAULT_TIMEOUT = 300
REPLAY_JOB = "scicode.replay"
"""The trusted re-run's job in a trusted worker (``scievals.trusted.jobs``)."""
REPLAY_CPU_SECONDS = 10.0
REPLAY_CPU_PER_MIB = 0.25
"""The trusted re-run's CPU budget: 10 s plus 0.25 s per MiB of records (``replay_cpu_budget``);
its wall-clock bound is three times that plus 30 s, for a loaded machine."""
_EXCEPTION_LINE = re.compile(
    r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)?)(?::\s?(.*))?$"
)


@dataclass
class Execution:
    """What the sandbox gave back for one step program (all of it untrusted but ``outcome``)."""

    outcome: Ending
    records: KeptFile | None
    """The records file, bounded in size, waiting in the harness's spool (on disk, never in
    the harness's memory); only the trusted re-run opens and parses it."""
    record_error: str | None

    @cached_property
    def too_large(self) -> bool:
        """The recorder stopped at the records' bound (its last event says so); read once,
        before the spooled records are discarded."""
        if self.records is None:
            return False
        last = self.records.tail(1 << 12).rstrip().rpartition(b"\n")[2]
        return last.startswith(b'{"e": "too_large"')

    def discard(self) -> None:
        if self.records is not None:
            self.records.discard()


def replay_cpu_budget(records_bytes: int) -> float:
    """CPU seconds the trusted re-run of a step's tests may take: its own budget, set by the
    work it is given, not the step's timeout (honest re-runs take milliseconds)."""
    return float(math.ceil(REPLAY_CPU_SECONDS + REPLAY_CPU_PER_MIB * (records_bytes >> 20)))


@lru_cache(maxsize=64)
def _syntax_error(code: str) -> str | None:
    try:
        ast.parse(code)
    except SyntaxError as exc:
        return f"{type(exc).__name__}: {exc.msg} (line {exc.lineno})"[:300]
    except (ValueError, MemoryError, RecursionError) as exc:
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None


def static_failure(problem: Problem, step: Step, codes: dict[str, str]) -> tuple[str, str] | None:
    """A failure decided before running: code too large to run, or code that cannot parse."""
    pieces = [*problem.earlier(step), step]
    for piece in pieces:
        code = codes.get(piece.step_id, "")
        if len(code) > MAX_COMPLETION_CHARS:
            return "too_large", (
                f"step {piece.step_id}'s code is {len(code)} characters "
                f"(limit {MAX_COMPLETION_CHARS})"
            )
    for piece in pieces:
        error = _syntax_error(codes.get(piece.step_id, ""))
        if error is not None:
            where = "" if piece is step else f" (in step {piece.step_id}'s code)"
            return "syntax_error", f"{error}{where}"
    return None


def record_path_for(step_id: str) -> str:
    return f"scievals-records-{step_id}-{uuid.uuid4().hex[:10]}.jsonl"


def program_path_for(step_id: str) -> str:
    """The program's file in the sample directory, named as the official harness names it."""
    return f"{step_id}.py"


async def execute(
    env: SandboxEnvironment, program: str, record_path: str, timeout: int, step_id: str
) -> Execution:
    """Run one step program in a directory of its own and read its records (bounded, never
    trusted).

    The program runs from a file, as the official harness runs it (``__file__``,
    ``inspect.getsource`` and tracebacks' line numbers work), and what it prints never fails
    it: each stream keeps its last bytes."""
    path = program_path_for(step_id)
    ran = await run_file(
        env, FileJob(path, program, ["python3", path], timeout, record_path, MAX_RECORD_BYTES)
    )
    record_error = None
    if isinstance(ran.kept_error, FileNotFoundError):
        record_error = "the program never started its tests (no records)"
    elif ran.kept_error is not None:
        record_error = f"records could not be read: {str(ran.kept_error)[:200]}"
    return Execution(ran.outcome, ran.kept, record_error)


def _last_exception(stderr: str) -> tuple[str, str] | None:
    for line in reversed(stderr.strip().splitlines()[-200:]):
        match = _EXCEPTION_LINE.match(line.strip())
        if match and not line.startswith(" "):
            return match.group(1), (match.group(2) or "").strip()
    return None


def _classify(step: Step, kind: str, message: str) -> tuple[str, str]:
    short = kind.rsplit(".", 1)[-1]
    text = f"{short}: {message}" if message else short
    if short in ("SyntaxError", "IndentationError", "TabError"):
        return "syntax_error", text[:300]
    if short == "NameError" and f"'{header_name(step.function_header)}'" in message:
        return "missing_function", text[:300]
    if short == "AssertionError":
        return "assertion", text[:300]
    return "exception", text[:300]


def _crash(step: Step, stderr: str) -> tuple[str, str]:
    """Why a program that exited non-zero failed, as its stderr names it."""
    found = _last_exception(stderr)
    if found is None:
        tail = stderr.strip().splitlines()[-1:] or ["no error output"]
        return "exception", f"exited with an error: {tail[0][:300]}"
    return _classify(step, *found)


def _trusted_failure(step: Step, run: Execution, number: int, error: Failure) -> tuple[str, str]:
    """Why test ``number`` failed on the trusted side, from the failure the re-run recorded."""
    if error.category == "stopped":
        if run.outcome.returncode:
            kind, reason = _crash(step, run.outcome.stderr)
            return kind, reason if error.before_tests else f"test {number}: {reason}"
        return "missing_record", f"test {number} did not run to its end (exited early)"
    if error.category == "exit":
        return "missing_record", f"test {number} did not run to its end ({error.message})"
    if error.category == "unsupported":
        return "unsupported", f"test {number}: {error.message}"
    if error.category == "record":
        return "invalid_record", f"test {number}: {error.message}"
    if error.category == "memory":
        return "limit", f"test {number}: the trusted re-run of its tests {out_of_memory()}"
    if error.category == "assertion" and error.message.startswith(("assertion", "a zero-size")):
        return "assertion", f"test {number}: {error.message}"[:400]
    kind, reason = _classify(step, error.type, error.message)
    return kind, f"test {number}: {reason}"[:400]


def _halted(failed: JobFailed) -> tuple[str, str]:
    """Why a step whose trusted re-run gave no answer fails: over a bound is a limit."""
    kind = {"start": "infrastructure", "error": "exception"}.get(failed.kind, "limit")
    budget = ""
    if failed.kind in ("cpu", "wall"):
        budget = (
            f" (its budget: {REPLAY_CPU_SECONDS:g} s of CPU plus {REPLAY_CPU_PER_MIB:g} s per MiB"
            " of records)"
        )
    return kind, f"the trusted re-run of its tests {failed}{budget}"[:400]


def judge(
    step: Step, run: Execution, replayed: Replayed | JobFailed | None, timeout: int
) -> StepVerdict:
    """The verdict for one step from its execution and the trusted re-run of its tests."""
    outcome = run.outcome
    verdict = StepVerdict(step.step_id, False, seconds=round(outcome.seconds, 3))
    outcomes = replayed.outcomes if isinstance(replayed, Replayed) else None
    failed = next((o for o in outcomes or [] if o.error is not None), None)
    if outcome.infrastructure:
        verdict.reason_kind, verdict.reason = "infrastructure", outcome.infrastructure
    elif outcome.returncode is None:
        verdict.reason_kind, verdict.reason = "timeout", f"timed out after {timeout} s"
    elif outcome.limit:
        verdict.reason_kind, verdict.reason = "limit", f"killed: {outcome.reason}"
    elif run.too_large:
        verdict.reason_kind = "too_large"
        verdict.reason = f"returned values exceed {MAX_RECORD_BYTES >> 20} MiB (the records' bound)"
    elif isinstance(replayed, JobFailed):
        verdict.reason_kind, verdict.reason = _halted(replayed)
    elif outcomes is None:
        if outcome.returncode:
            verdict.reason_kind, verdict.reason = _crash(step, outcome.stderr)
        else:
            unreadable = replayed.records_error if isinstance(replayed, Replayed) else None
            if unreadable:
                verdict.reason_kind, verdict.reason = "invalid_record", unreadable
            else:
                verdict.reason_kind, verdict.reason = "missing_record", run.record_error
    elif failed is not None and failed.error is not None:
        verdict.reason_kind, verdict.reason = _trusted_failure(
            step, run, failed.index + 1, failed.error
        )
    elif outcome.returncode:
        kind, reason = _crash(step, outcome.stderr)
        verdict.reason_kind, verdict.reason = kind, f"after its tests: {reason}"
    else:
        verdict.passed = True
    return verdict


async def judge_tests(
    problem: Problem,
    plans: list[TestPlan],
    run: Execution,
    targets: list[Any] | None,
    timeout: int,
) -> Replayed | JobFailed | None:
    """Re-run the tests on the trusted side, in a trusted worker: parsing the records, decoding
    their values and replaying the tests are bounded by a CPU budget of their own
    (``replay_cpu_budget``), a wall clock and the worker's memory, and a crash takes only the
    worker down. The worker reads the spooled records itself; they are discarded after. None
    when there are no records, or when the program's outcome decides the verdict anyway."""
    outcome = run.outcome
    try:
        if (
            run.records is None
            or run.too_large
            or outcome.infrastructure
            or outcome.returncode is None
            or outcome.limit
        ):
            return None
        job = (str(run.records.path), plans, problem.dependencies, targets)
        cpu = replay_cpu_budget(run.records.size)
        return read_replayed(await run_job(REPLAY_JOB, job, 3 * cpu + 30, cpu))
    except JobFailed as exc:
        return exc
    except RecordError:
        return JobFailed("answer", "gave a malformed answer")
    finally:
        run.discard()


async def grade_step(
    envs: dict[str, SandboxEnvironment],
    problem: Problem,
    step: Step,
    codes: dict[str, str],
    targets: list[Any] | Callable[[], list[Any]],
    timeout: int = DEFAULT_TIMEOUT,
    cache: StepCache | None = None,
    all_runtimes: bool = False,
) -> StepVerdict:
    """Grade one step in each scoring runtime of ``envs`` (name -> environment, in the order
    tried) and pass it if any passes. A runtime is tried only where the ones before it failed,
    unless ``all_runtimes``; a failure decided before running (syntax, size) is the same in
    every runtime and is not run again. The targets are read once."""
    shared_pool().warm()  # the trusted workers start while the first programs run
    read: list[list[Any]] = []

    def shared() -> list[Any]:
        if not read:
            read.append(targets() if callable(targets) else targets)
        return read[0]

    verdicts: dict[str, StepVerdict] = {}
    for name, env in envs.items():
        verdict = await run_step(env, problem, step, codes, shared, timeout, cache, name)
        verdicts[name] = verdict
        if (
            verdict.passed
            and not all_runtimes
            or _decided_statically(problem, step, codes, verdict)
        ):
            break
    chosen = next((v for v in verdicts.values() if v.passed), next(iter(verdicts.values())))
    own = {
        name: {k: v.as_dict()[k] for k in ("passed", "reason_kind", "reason", "seconds")}
        for name, v in verdicts.items()
    }
    return replace(chosen, runtimes=own)


def _decided_statically(
    problem: Problem, step: Step, codes: dict[str, str], verdict: StepVerdict
) -> bool:
    """The failure came before running (the syntax check is cached), so no runtime differs."""
    if verdict.reason_kind not in ("syntax_error", "too_large"):
        return False
    return static_failure(problem, step, codes) is not None


async def run_step(
    env: SandboxEnvironment,
    problem: Problem,
    step: Step,
    codes: dict[str, str],
    targets: list[Any] | Callable[[], list[Any]],
    timeout: int = DEFAULT_TIMEOUT,
    cache: StepCache | None = None,
    runtime: str | None = None,
) -> StepVerdict:
    """Grade one step. ``targets`` may be a function that reads them: it is called only once
    the program has run, so the targets of waiting steps are not all held at once. With
    ``cache``, a program already graded in this run is not run again (the same code before and
    in the step, so the same tests and targets, and the same timeout)."""
    if cache is None:
        verdict = await _run_step(env, problem, step, codes, targets, timeout)
        return replace(verdict, runtime=runtime)
    used = [codes.get(s.step_id, "") for s in (*problem.earlier(step), step)]
    key = StepCache.key(problem.problem_id, step.step_id, used, timeout, runtime)
    verdict, reused = await cache.once(
        key, lambda: _run_step(env, problem, step, codes, targets, timeout)
    )
    return replace(verdict, reused=reused, runtime=runtime)


async def _run_step(
    env: SandboxEnvironment,
    problem: Problem,
    step: Step,
    codes: dict[str, str],
    targets: list[Any] | Callable[[], list[Any]],
    timeout: int,
) -> StepVerdict:
    plans = plans_for(problem, step)
    path = record_path_for(step.step_id)
    program = step_program(problem, step, codes, plans, path)
    # The slot is asked for before anything else awaits, so that every step submitted together
    # is in the queue when it chooses the longest; a container's program waits for its turn
    # first, holding no slot meanwhile.
    async with exclusive(env), queue().slot(step.step_id):
        static = await anyio.to_thread.run_sync(static_failure, problem, step, codes)
        if static is not None:
            return StepVerdict(step.step_id, False, *static)
        run = await execute(env, program, path, timeout, step.step_id)
    if callable(targets):
        targets = await anyio.to_thread.run_sync(targets)
    return judge(step, run, await judge_tests(problem, plans, run, targets, timeout), timeout)
