"""Building a step's program as the official harness does, running it sandboxed, and judging it.

A step passes when its program exits 0 within the timeout, every test ran to its end, and every
comparison with a target holds on the trusted side. The program is the official layout
(dependencies, earlier steps' code, this step's code, the tests), preceded by our recorder.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import asdict, dataclass
from typing import Any

from inspect_ai.util import SandboxEnvironment

from scievals.scicode.child import recorder
from scievals.scicode.dataset import Problem, Step
from scievals.scicode.extract import header_name
from scievals.scicode.testcode import (
    RecordError,
    Records,
    TestPlan,
    check_test,
    child_tests,
    parse_records,
    plan_test,
)

DEFAULT_TIMEOUT = 300
ORIGINAL_TIMEOUT = 1800
# Gold code that times its own runs (78.3) would make regenerated targets machine-dependent; a
# clock that advances one millisecond per call makes every such choice reproducible.
STEADY_CLOCK = (
    "import time as __scievals_time__\n"
    "__scievals_ticks__ = [0.0]\n"
    "def __scievals_tick__():\n"
    "    __scievals_ticks__[0] += 0.001\n"
    "    return __scievals_ticks__[0]\n"
    "__scievals_time__.time = __scievals_tick__\n"
)
_EXCEPTION_LINE = re.compile(
    r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)?)(?::\s?(.*))?$"
)
_KILLED = re.compile(r"scievals-sandbox: killed: (.+)")


@dataclass
class StepVerdict:
    step: str
    passed: bool
    reason_kind: str | None = None  # syntax_error, missing_function, exception, assertion,
    reason: str | None = None  # timeout, limit, missing_record
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Execution:
    returncode: int | None
    stderr: str
    records: Records | None
    record_error: str | None
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def plans_for(step: Step) -> list[TestPlan]:
    return [plan_test(i, test) for i, test in enumerate(step.tests)]


def step_program(
    problem: Problem,
    step: Step,
    codes: dict[str, str],
    plans: list[TestPlan],
    record_path: str,
    prelude: str = "",
) -> str:
    """The program for ``step``: ``codes`` holds the code used for it and every earlier step."""
    index = problem.steps.index(step)
    previous = "\n".join(codes.get(s.step_id, "") for s in problem.steps[:index])
    head = f"{prelude}{problem.dependencies}\n{previous}\n\n{codes.get(step.step_id, '')}\n\n"
    tests = child_tests(plans)
    # Line numbers of the done markers in the final program (the recorder's length is fixed).
    first_test_line = recorder(record_path, {}).count("\n") + 2 + head.count("\n")
    done_lines = {
        plan.index: first_test_line + number
        for number, line in enumerate(tests.split("\n"))
        for plan in plans
        if line == f"__scievals_done__({plan.index})"
    }
    return f"{recorder(record_path, done_lines)}\n{head}{tests}\n"


async def execute(
    env: SandboxEnvironment, program: str, record_path: str, timeout: int
) -> Execution:
    """Run one step program in the sandbox and collect its records (never trusted beyond data)."""
    started = time.monotonic()
    try:
        result = await env.exec(["python3", "-c", program], timeout=timeout, timeout_retry=False)
        returncode: int | None = result.returncode
        stderr = result.stderr
    except TimeoutError:
        returncode, stderr = None, ""
    seconds = time.monotonic() - started
    records: Records | None = None
    record_error = None
    try:
        records = parse_records(await env.read_file(record_path))
    except FileNotFoundError:
        record_error = "the program never started its tests (no records)"
    except (RecordError, UnicodeDecodeError) as exc:
        record_error = f"unreadable records: {exc}"
    except Exception as exc:  # e.g. the records file exceeded the read limit
        record_error = f"records could not be read: {type(exc).__name__}: {exc}"
    return Execution(returncode, stderr, records, record_error, seconds)


def _last_exception(stderr: str) -> tuple[str, str] | None:
    for line in reversed(stderr.strip().splitlines()):
        match = _EXCEPTION_LINE.match(line.strip())
        if match and not line.startswith(" "):
            return match.group(1), (match.group(2) or "").strip()
    return None


def _failure_from_stderr(step: Step, stderr: str) -> tuple[str, str]:
    killed = _KILLED.search(stderr)
    if killed:
        return "limit", f"killed: {killed.group(1)}"
    found = _last_exception(stderr)
    if found is None:
        tail = stderr.strip().splitlines()[-1:] or ["no error output"]
        return "exception", f"exited with an error: {tail[0][:300]}"
    kind, message = found
    short = kind.rsplit(".", 1)[-1]
    if short in ("SyntaxError", "IndentationError", "TabError"):
        return "syntax_error", f"{short}: {message}"[:300]
    if short == "NameError" and f"'{header_name(step.function_header)}'" in message:
        return "missing_function", f"NameError: {message}"[:300]
    if short == "AssertionError":
        return "assertion", f"AssertionError: {message}"[:300] if message else "AssertionError"
    return "exception", f"{short}: {message}"[:300]


def judge(step: Step, plans: list[TestPlan], run: Execution, targets: list[Any]) -> StepVerdict:
    """The verdict for one step from its execution and its (trusted) targets."""
    verdict = StepVerdict(step.step_id, False, seconds=round(run.seconds, 3))
    if run.timed_out:
        verdict.reason_kind, verdict.reason = "timeout", f"timed out after {run.seconds:.0f} s"
        return verdict
    if run.returncode != 0:
        verdict.reason_kind, verdict.reason = _failure_from_stderr(step, run.stderr)
        if run.records is not None:
            running = sorted(run.records.begun - run.records.done)
            if running and verdict.reason_kind != "syntax_error":
                verdict.reason = f"test {running[0] + 1}: {verdict.reason}"
        return verdict
    if run.records is None:
        verdict.reason_kind, verdict.reason = "missing_record", run.record_error
        return verdict
    for plan, target in zip(plans, targets, strict=True):
        if plan.index not in run.records.done:
            verdict.reason_kind = "missing_record"
            verdict.reason = f"test {plan.index + 1} did not run to its end (exited early)"
            return verdict
        problem = check_test(plan, target, run.records)
        if problem is not None:
            kind = "assertion" if problem.startswith(("assertion", "the compared")) else "exception"
            verdict.reason_kind, verdict.reason = kind, f"test {plan.index + 1}: {problem}"[:400]
            return verdict
    verdict.passed = True
    return verdict


def record_path_for(step_id: str) -> str:
    return f"scievals-records-{step_id}-{uuid.uuid4().hex[:10]}.jsonl"


async def run_step(
    env: SandboxEnvironment,
    problem: Problem,
    step: Step,
    codes: dict[str, str],
    targets: list[Any],
    timeout: int = DEFAULT_TIMEOUT,
) -> StepVerdict:
    plans = plans_for(step)
    path = record_path_for(step.step_id)
    program = step_program(problem, step, codes, plans, path)
    return judge(step, plans, await execute(env, program, path, timeout), targets)
