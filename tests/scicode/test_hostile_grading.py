"""A hostile corpus for ``scievals grade scicode``: completions written to fool the grader.

Every test goes through the real grader (``scievals.scicode.grade.grade``) and the real sandbox.
A completion is a raw model reply (a fenced python block). In a run, only the attacked step is
hostile: every earlier step of its problem is given its gold code, and a few gold steps of other
problems ride along as bystanders. For every run we require that

* each attacked step fails, with a clear ``reason`` (and, for some classes, a given kind);
* every other step of the run keeps its right verdict (gold steps pass);
* the grade call returns within the hang bound (tests/timing.py: a safety bound, not a benchmark);
* nothing is left behind: no new ``scievals-sample-*`` / ``scievals-zygote-*`` entries in the
  temporary directory (the live zygote of the grading process excepted), no processes left
  under the grading process other than its zygote, no mounts of its own left on the host.

The grader runs in a separate worker process (``Grader``) with its own temporary directory, so
that a grader that hangs (a FIFO in place of a file it reads) or eats memory (an unbounded
decoder) fails its test instead of the whole session, so that its memory can be measured, and so
that other runs on the same machine do not show up as leftovers. Attacks of one class are graded
in batches (one attack per problem in a grade() call); a batch that hangs costs its bound once.

Classes of attack (the section headers below follow them):
 1. values that are not what they claim (zero-size arrays, objects that lie about themselves);
 2. self-checking tests (78.1, 78.2) fooled from inside the program;
 3. fake limit reasons printed by the program;
 4. the program's output channel turned into something that hangs or floods its reader;
 5. machinery robustness (disk, memory, processes, namespaces, kernel keys, files left behind);
 6. signals, rlimits and pidfds aimed at every other process (rlimits-only mode too);
 9. an unbounded trusted side (huge or deep records, a huge completion);
10. small ones: the timeout reason, malformed input files.
Plus: honest code is untouched (all 50 gold dev steps pass). Every class runs in both scoring
runtimes and in ``userns`` mode (a harness that is not root).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from timing import HANG_S, OFFICIAL_TIMEOUT

from scievals.sandbox.limits import Limits
from scievals.scicode.data.dataset import Problem, Step, load_problems
from scievals.scicode.extract import header_name
from scievals.scicode.grade import InputError, read_completions

pytestmark = pytest.mark.slow

RSS_GROWTH_LIMIT = 1.5 * 2**30  # bytes the grading process may grow by while grading
MEMFD_CHUNKS = int((Limits().memory_gib + 1) * 4) + 1
"""250 MiB memfds that together hold more than a program's memory (this machine's share)."""


@pytest.fixture(scope="module", autouse=True)
def _dev_targets(dev_targets_file):
    """Grading dev steps reads the regenerated targets (built once into the cache)."""
    return dev_targets_file


# ---- problems, steps, completions ---------------------------------------------------------------


@cache
def _steps() -> dict[str, tuple[Problem, Step]]:
    return {s.step_id: (p, s) for p in load_problems("dev") for s in p.steps}


def problem_of(step_id: str) -> str:
    return step_id.split(".")[0]


def fence(code: str) -> str:
    """A model reply holding ``code``."""
    return f"Here is the implementation.\n\n```python\n{code}\n```\n"


def gold_code(step_id: str) -> str:
    code = _steps()[step_id][1].gold_code
    assert code, step_id
    return code


def replies(codes: dict[str, str]) -> dict[str, str]:
    """Replies for ``{step: code}``, each code wrapped in a fence."""
    return {step: fence(code) for step, code in codes.items()}


def with_gold_context(attacks: dict[str, str]) -> dict[str, str]:
    """The replies of a run: each attacked step's code, gold code for every earlier step of its
    problem (so only the attacked step is hostile). Later steps are left out (they would run the
    hostile code too)."""
    assert len({problem_of(s) for s in attacks}) == len(attacks), "one attack per problem"
    out: dict[str, str] = {}
    for step_id, code in attacks.items():
        problem, step = _steps()[step_id]
        for earlier in problem.scored_steps[: problem.scored_steps.index(step)]:
            out[earlier.step_id] = fence(gold_code(earlier.step_id))
        out[step_id] = fence(code)
    return out


# Cheap gold steps of problems that a batch does not attack: they must pass whatever else ran.
BYSTANDERS = ("38.1", "4.1", "19.1", "29.1", "1.1", "3.1")


def bystanders(attacked: set[str], count: int = 2) -> dict[str, str]:
    used = {problem_of(s) for s in attacked}
    chosen = [s for s in BYSTANDERS if problem_of(s) not in used][:count]
    return {s: fence(gold_code(s)) for s in chosen}


# ---- the grading worker -----------------------------------------------------------------------

WORKER = r"""
import asyncio, json, os, resource, sys, time, traceback

proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)  # anything the grader prints goes to stderr, never into the protocol

from scievals.scicode.grade import grade

def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


proto.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
proto.flush()
for line in sys.stdin:
    job = json.loads(line)
    before, started = rss(), time.monotonic()
    try:
        verdicts, summary = asyncio.run(grade(job["completions"], split="dev", timeout=job["timeout"], runtimes=job["runtime"]))
        result = {"verdicts": verdicts, "summary": summary}
    except BaseException as exc:
        result = {"error": f"{type(exc).__name__}: {exc}"[:2000], "traceback": traceback.format_exc()[-3000:]}
    result.update(elapsed=time.monotonic() - started, rss_before=before, rss_after=rss())
    proto.write(json.dumps(result, default=str) + "\n")
    proto.flush()
"""


def _proc_table() -> dict[int, int]:
    """pid -> parent pid of every live, non-zombie process."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] not in ("Z", "X"):
            table[int(entry)] = int(fields[1])
    return table


def _descendants(root: int, table: dict[int, int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, ppid in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def _describe(pid: int) -> str:
    try:
        cmd = (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        cmd = "?"
    return f"{pid}: {cmd.strip()[:160]}"


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def _mounts(pid: int) -> set[str]:
    try:
        lines = Path(f"/proc/{pid}/mountinfo").read_text().splitlines()
    except OSError:
        return set()
    return {" ".join(line.split()[3:5]) for line in lines}  # root and mount point


_ENTRY = re.compile(r"^scievals-(sample|zygote)-")


@dataclass
class Outcome:
    """What one grade() call did, seen from outside the grading process."""

    finished: bool
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    elapsed: float = 0.0
    rss_growth: int = 0
    leftover_entries: list[str] = field(default_factory=list)
    stray_processes: list[str] = field(default_factory=list)
    new_mounts: list[str] = field(default_factory=list)
    submitted: tuple[str, ...] = ()

    def brief(self) -> str:
        if not self.finished:
            return f"grade() did not return within the bound ({self.error})"
        return self.error or f"{len(self.verdicts)} verdicts in {self.elapsed:.1f} s"


class Grader:
    """A worker process running ``grade()`` on request, watched from here."""

    def __init__(self, runtime: str = "2024", mode: str | None = None) -> None:
        self.runtime = runtime
        self.mode = mode
        self.tmp = tempfile.mkdtemp(prefix="hostile-grading-")
        os.chmod(self.tmp, 0o755)
        self.proc: subprocess.Popen[bytes] | None = None
        self._buf = b""

    # -- lifecycle

    def start(self) -> None:
        env = {**os.environ, "TMPDIR": self.tmp}
        if self.mode:
            env["SCIEVALS_SANDBOX_MODE"] = self.mode
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        self._buf = b""
        line = self._line(time.monotonic() + HANG_S)
        assert line is not None and json.loads(line).get("ready"), "grading worker did not start"

    def stop(self) -> None:
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        table = _proc_table()
        family = _descendants(proc.pid, table)
        with contextlib.suppress(OSError):
            proc.stdin.close()  # type: ignore[union-attr]
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and family & set(_proc_table()):
            time.sleep(0.1)
        for pid in family & set(_proc_table()):  # only our own worker's processes
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def close(self) -> None:
        self.stop()
        subprocess.run(["rm", "-rf", "--one-file-system", self.tmp], check=False)

    def _line(self, deadline: float) -> bytes | None:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return None
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line

    # -- inspection

    def _zygotes(self) -> set[int]:
        assert self.proc is not None
        table = _proc_table()
        return {
            pid
            for pid, ppid in table.items()
            if ppid == self.proc.pid
            and (Path(_cwd(pid)).name.startswith("scievals-zygote-") or "zygote" in _describe(pid))
        }

    def _entries(self) -> set[str]:
        names = {n for n in os.listdir(self.tmp) if _ENTRY.match(n)}
        if self.proc is not None:  # sample dirs made in the host's /tmp despite TMPDIR
            host = tempfile.gettempdir()
            prefix = f"scievals-sample-{self.proc.pid}-"
            names |= {f"{host}/{n}" for n in os.listdir(host) if n.startswith(prefix)}
        return names

    def _ours(self, path: str) -> bool:
        """Whether a path belongs to this worker's grading (other processes on the machine may
        be mounting things of their own)."""
        assert self.proc is not None
        host_prefix = os.path.join(tempfile.gettempdir(), f"scievals-sample-{self.proc.pid}-")
        return path.startswith((self.tmp + "/", host_prefix)) or path == self.tmp

    def _family(self) -> set[int]:
        assert self.proc is not None
        return _descendants(self.proc.pid, _proc_table())

    def _standby(self, zygotes: set[int]) -> set[int]:
        """The zygote's idle standby: a supervisor whose only child (its init) has none yet."""
        table = _proc_table()
        idle: set[int] = set()
        for zygote in zygotes:
            for pid in (p for p, parent in table.items() if parent == zygote):
                kids = [p for p, parent in table.items() if parent == pid]
                if len(kids) == 1 and not any(parent == kids[0] for parent in table.values()):
                    idle |= {pid, kids[0]}
        return idle

    def _trusted_workers(self) -> set[int]:
        """The grading process's trusted workers (``scievals.trusted``): they stay up between
        runs by design, and are replaced when one is killed."""
        assert self.proc is not None
        return {
            pid
            for pid, ppid in _proc_table().items()
            if ppid == self.proc.pid and b"scievals.trusted.worker" in _cmdline(pid)
        }

    def _strays(self, before: set[int] | frozenset[int] = frozenset()) -> list[str]:
        """Processes under the worker that this job left (its zygote and standby, and its
        trusted workers, excepted)."""
        zygotes = self._zygotes()
        family = self._family() - zygotes - self._standby(zygotes) - self._trusted_workers()
        return sorted(_describe(p) for p in family - before)

    # -- grading

    def grade(
        self,
        completions: dict[str, str],
        timeout: int = 60,
        fresh: bool = False,
    ) -> Outcome:
        if fresh:
            self.stop()
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        entries_before = self._entries()
        mounts_before = _mounts(self.proc.pid)
        family_before = self._family()
        job = {"completions": completions, "timeout": timeout, "runtime": self.runtime}
        job = json.dumps(job) + "\n"
        started = time.monotonic()
        try:
            self.proc.stdin.write(job.encode())
            self.proc.stdin.flush()
            line = self._line(started + HANG_S)
        except BrokenPipeError:
            line = None
        wall = time.monotonic() - started
        outcome = Outcome(finished=line is not None, submitted=tuple(completions))
        if line is None:
            outcome.error = f"no result after {wall:.0f} s (the hang bound)"
            outcome.elapsed = wall
            outcome.stray_processes = self._strays() if self.proc.poll() is None else []
            self.stop()  # the worker is killed; the next call starts a fresh one
            outcome.leftover_entries = sorted(self._entries() - entries_before)
            for name in outcome.leftover_entries:  # so later tests start clean
                path = name if name.startswith("/") else os.path.join(self.tmp, name)
                subprocess.run(["rm", "-rf", "--one-file-system", path], check=False)
            return outcome
        result = json.loads(line)
        outcome.elapsed = result["elapsed"]
        outcome.rss_growth = result["rss_after"] - result["rss_before"]
        outcome.error = result.get("error")
        if outcome.error:
            outcome.error += "\n" + result.get("traceback", "")
        outcome.verdicts = {v["step"]: v for v in result.get("verdicts", [])}
        outcome.summary = result.get("summary", {})
        deadline = time.monotonic() + HANG_S  # supervisors may take a moment to exit
        while self._strays(family_before) and time.monotonic() < deadline:
            time.sleep(0.05)
        outcome.stray_processes = self._strays(family_before)
        zygotes = self._zygotes()
        live = {Path(_cwd(p)).name for p in zygotes}
        left = self._entries() - entries_before - live
        if zygotes and not live:  # a zygote whose directory is not its cwd: allow one
            left -= set(sorted(n for n in left if n.startswith("scievals-zygote-"))[:1])
        outcome.leftover_entries = sorted(left)
        outcome.new_mounts = sorted(
            m for m in _mounts(self.proc.pid) - mounts_before if self._ours(m.split()[-1])
        )
        return outcome


@pytest.fixture(scope="module", params=["2024", "2025", "2024/userns"])
def grader(request):
    """A grading worker for each scoring runtime: every attack is tried in both (the recorder
    and the wire format run on NumPy 1 and on NumPy 2), and in the isolation mode a harness
    that is not root gets (``userns``: the program shares its uid with the machinery)."""
    runtime, _, mode = request.param.partition("/")
    g = Grader(runtime, mode=mode or None)
    yield g
    g.close()


# ---- assertions -----------------------------------------------------------------------------


def assert_clean(outcome: Outcome) -> None:
    """The run finished in bounded time, every submitted step got a verdict, nothing is left."""
    assert outcome.finished, outcome.brief()
    assert outcome.error is None, f"grade() raised: {outcome.error}"
    assert outcome.elapsed < HANG_S, f"grade() took {outcome.elapsed:.0f} s (the hang bound)"
    assert set(outcome.verdicts) == set(outcome.submitted), "a submitted step got no verdict"
    assert outcome.leftover_entries == [], f"left behind: {outcome.leftover_entries}"
    assert outcome.stray_processes == [], f"processes left: {outcome.stray_processes}"
    assert outcome.new_mounts == [], f"new mounts on the host: {outcome.new_mounts}"


def assert_others_pass(outcome: Outcome, attacked: set[str]) -> None:
    """Every step of the run except the attacked ones is gold code and must pass."""
    wrong = {
        s: (v["reason_kind"], v["reason"])
        for s, v in outcome.verdicts.items()
        if s not in attacked and not v["passed"]
    }
    assert wrong == {}, f"gold steps failed next to an attack: {wrong}"


def assert_fails_clearly(verdict: dict[str, Any]) -> None:
    assert verdict["passed"] is False, f"the attack passed: {verdict}"
    reason = verdict["reason"]
    assert isinstance(reason, str) and reason.strip(), f"no clear reason: {verdict}"
    assert len(reason) < 1000, f"reason too long: {reason[:200]}..."


# ---- attacks, batches -------------------------------------------------------------------------


@dataclass(frozen=True)
class Attack:
    """One hostile completion: ``code`` for ``step`` (gold code for the problem's earlier steps)."""

    name: str
    step: str
    code: str
    kind: str | None = None  # the reason_kind it must fail with (None: any)
    not_kinds: tuple[str, ...] = ()  # kinds it must not be given
    passes: bool = False  # honest code that must still pass (the control of a class)
    alone: bool = False  # graded in a run of its own (it may hang today's grader)


def pack(attacks: list[Attack], size: int = 8) -> list[list[Attack]]:
    """Batches of attacks on distinct problems."""
    batches: list[list[Attack]] = []
    for attack in attacks:
        if not attack.alone:
            for batch in batches:
                if (
                    len(batch) < size
                    and not batch[0].alone
                    and problem_of(attack.step) not in {problem_of(a.step) for a in batch}
                ):
                    batch.append(attack)
                    break
            else:
                batches.append([attack])
        else:
            batches.append([attack])
    return batches


@dataclass
class ClassRun:
    """All batches of one class: each attack's verdict and its batch's outcome."""

    batches: list[tuple[list[Attack], Outcome]]

    def verdict(self, wanted: Attack) -> tuple[dict[str, Any], Outcome]:
        for attacks, outcome in self.batches:
            if wanted in attacks:
                assert outcome.finished, outcome.brief()
                assert wanted.step in outcome.verdicts, outcome.brief()
                return outcome.verdicts[wanted.step], outcome
        raise KeyError(wanted.name)


def run_class(
    grader: Grader,
    attacks: list[Attack],
    timeout: int = 60,
    extra: int = 2,
    size: int = 8,
    fresh: bool = False,
) -> ClassRun:
    """Grade the attacks in batches (``fresh``: each in a new grading process)."""
    runs = []
    for batch in pack(attacks, size):
        completions = with_gold_context({a.step: a.code for a in batch})
        completions.update(bystanders({a.step for a in batch}, extra))
        runs.append((batch, grader.grade(completions, timeout, fresh)))
    return ClassRun(runs)


def check_attack(run: ClassRun, attack: Attack) -> None:
    verdict, outcome = run.verdict(attack)
    if attack.passes:
        assert verdict["passed"] is True, f"honest code failed: {verdict}"
    else:
        assert_fails_clearly(verdict)
    if attack.kind is not None:
        assert verdict["reason_kind"] == attack.kind, verdict
    assert verdict["reason_kind"] not in attack.not_kinds, verdict


def check_class(run: ClassRun) -> None:
    for batch, outcome in run.batches:
        names = ", ".join(a.name for a in batch)
        try:
            assert_clean(outcome)
            assert_others_pass(outcome, {a.step for a in batch if not a.passes})
        except AssertionError as exc:
            raise AssertionError(f"batch [{names}]: {exc}") from None


@dataclass(frozen=True)
class AttackClass:
    """One class of attacks, graded in batches beside gold bystanders: each attack must fail its
    own step (a control must pass), and each batch must finish clean with every other verdict
    right. ``check`` and ``after`` add what one class must also show, per attack and per run."""

    name: str
    attacks: list[Attack]
    what: str
    timeout: int = 60
    extra: int = 2
    size: int = 8
    fresh: bool = False
    check: Callable[[dict[str, Any], Outcome, Attack], None] | None = None
    after: Callable[[ClassRun], None] | None = None


@pytest.fixture(scope="module")
def class_runs(grader) -> Callable[[AttackClass], ClassRun]:
    """Each class graded once per grader, when a test first asks for it."""
    runs: dict[str, ClassRun] = {}

    def run(cls: AttackClass) -> ClassRun:
        if cls.name not in runs:
            runs[cls.name] = run_class(
                grader, cls.attacks, cls.timeout, cls.extra, cls.size, cls.fresh
            )
        return runs[cls.name]

    return run


def class_tests(classes: list[AttackClass]) -> tuple[Callable, Callable]:
    """The two tests of a table of attack classes, for a module to bind to ``test_*`` names."""
    cases = [(cls, attack) for cls in classes for attack in cls.attacks]

    @pytest.mark.parametrize(
        ("cls", "attack"), cases, ids=[f"{c.name}:{a.name}@{a.step}" for c, a in cases]
    )
    def test_attack_fails_its_own_step(class_runs, cls: AttackClass, attack: Attack) -> None:
        run = class_runs(cls)
        try:
            check_attack(run, attack)
            if cls.check is not None:
                cls.check(*run.verdict(attack), attack)
        except AssertionError as exc:
            raise AssertionError(f"{cls.what}\n{exc}") from None

    @pytest.mark.parametrize("cls", classes, ids=[c.name for c in classes])
    def test_class_runs_clean(class_runs, cls: AttackClass) -> None:
        run = class_runs(cls)
        check_class(run)
        if cls.after is not None:
            cls.after(run)

    return test_attack_fails_its_own_step, test_class_runs_clean


def ids(attacks: list[Attack]) -> list[str]:
    return [f"{a.name}@{a.step}" for a in attacks]


def code(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


# Wrong answers for the steps under attack (each fails its step's tests).
WRONG = {
    "1.1": "def cg(A, b, x, tol):\n    return x",
    "3.1": "def GS(A, b, eps, x_true, x0):\n    return 1.0, 1.0",
    "4.1": "def ichol(A):\n    return A",
    "10.1": "def get_alpha(recvec, alpha_scaling=5):\n    return 1.0",
    "19.1": "def tensor(*args):\n    return args[0]",
    "19.2": "def n_tangle(psi):\n    return 0.5",
    "29.1": "def normalize(v):\n    return v",
    "29.2": "def inner_product(u, v):\n    return 0",
    "29.3": "def orthogonalize(A):\n    return A",
    "38.1": "def cross(a, b):\n    return a",
    "38.2": "def reciprocal_3D(a1, a2, a3):\n    return [a1, a2, a3]",
    "44.1": "def GetComp(d):\n    return d",
    "47.1": "def U_ij(r, sigma, epsilon):\n    return 0.5",
    "49.1": "def Nbody_Fij(xin, mass):\n    return xin",
    "51.1": "def f_ij(sigma, epsilon, r):\n    return r",
    "70.1": "def pmns_mixing_matrix(s12, s23, s13, dCP):\n    return np.eye(3)",
    "78.1": "def pendulum_derivs(state, t, g, L, beta, A, alpha):\n    return state",
    "78.2": (
        "def runge_kutta_4th_order(f, state, t0, dt, n, g, L, beta, A, alpha):\n"
        "    return np.tile(state, (n + 1, 1))"
    ),
}


def returning(step_id: str, body: str, prelude: str = "") -> str:
    """A definition of the step's function (any arguments) whose body is ``body``."""
    name = header_name(_steps()[step_id][1].function_header)
    inner = textwrap.indent(code(body), "    ")
    return f"{code(prelude)}\ndef {name}(*args, **kwargs):\n{inner}".strip("\n")


def returns(name: str, step_id: str, body: str, prelude: str = "", **fields: Any) -> Attack:
    """The attack ``name`` on ``step_id``: the step's function, returning by ``body``."""
    return Attack(name, step_id, returning(step_id, body, prelude), **fields)


def test_wrong_answers_fail_plainly(grader):
    """Control: every wrong answer the attacks below build on fails its step without any trick
    (so an attack that passes, passes by its trick), next to passing gold steps."""
    attacks = [Attack(f"wrong-{step}", step, wrong) for step, wrong in WRONG.items()]
    run = run_class(grader, attacks, extra=1)
    check_class(run)
    for attack in attacks:
        check_attack(run, attack)


# =============================================================================================
# Class 1: values that are not what they claim
# =============================================================================================

ZERO8 = "np.zeros((0, 1, 1, 1, 1, 1, 1, 1))"

LYING_CLASSES = code(
    """
    import numpy as np

    class ArrayOfNothing:
        '''Converts to a zero-size array that broadcasts against any target.'''
        def __array__(self, dtype=None, copy=None):
            return np.zeros((0, 1, 1, 1, 1, 1, 1, 1))

    class SecondCallLies:
        '''First conversion: a right-shaped (wrong) array; later ones: zero-size.'''
        calls = 0
        def __init__(self, shape):
            self.shape_ = shape
        def __array__(self, dtype=None, copy=None):
            SecondCallLies.calls += 1
            if SecondCallLies.calls == 1:
                return np.zeros(self.shape_)
            return np.zeros((0,) + (1,) * 7)

    class SecondCallRightShape:
        '''First conversion: zero-size; later ones: a right-shaped (wrong) array.'''
        calls = 0
        def __init__(self, shape):
            self.shape_ = shape
        def __array__(self, dtype=None, copy=None):
            SecondCallRightShape.calls += 1
            if SecondCallRightShape.calls == 1:
                return np.zeros((0,) + (1,) * 7)
            return np.ones(self.shape_)

    class AlwaysEqual:
        '''Equal to, close to, and bigger and smaller than anything.'''
        def __eq__(self, other): return True
        def __ne__(self, other): return False
        def __lt__(self, other): return True
        def __le__(self, other): return True
        def __gt__(self, other): return True
        def __ge__(self, other): return True
        def __bool__(self): return True
        def __hash__(self): return 0
        def _self(self, *args): return self
        __sub__ = __rsub__ = __add__ = __radd__ = __mul__ = __rmul__ = _self
        __truediv__ = __rtruediv__ = __matmul__ = __rmatmul__ = __abs__ = __neg__ = _self
        __getitem__ = _self
        T = property(_self)

    class AgreesWithNumpy:
        '''Answers True to every numpy function and ufunc called on it.'''
        def __array_function__(self, func, types, args, kwargs): return True
        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs): return True
        def __bool__(self): return True
        def __eq__(self, other): return True
        def __hash__(self): return 0

    class Truthy:
        '''Comparisons give itself, and it is true.'''
        def __eq__(self, other): return self
        def __ne__(self, other): return self
        def __bool__(self): return True
        def __hash__(self): return 0
        def __getitem__(self, key): return self
        def __matmul__(self, other): return self
        def __rmatmul__(self, other): return self
        T = property(lambda self: self)

    class Sequence:
        '''Claims the target's length; each item is a zero-size array.'''
        def __init__(self, n): self.n = n
        def __len__(self): return self.n
        def __getitem__(self, i):
            if not 0 <= i < self.n: raise IndexError(i)
            return np.zeros((0, 1, 1, 1, 1, 1, 1))

    class LyingList(list):
        '''An empty list that says it has three items.'''
        def __len__(self): return 3
        def __getitem__(self, i): return np.zeros((0,) + (1,) * 6)

    class FloatEqualsAll(float):
        def __eq__(self, other): return True
        def __ne__(self, other): return False
        __hash__ = float.__hash__

    class ArrayEqualsAll(np.ndarray):
        __array_priority__ = 1e9
        def __eq__(self, other): return np.ones(np.shape(other), bool)
        def __ne__(self, other): return np.zeros(np.shape(other), bool)
        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs): return np.True_
        def __array_function__(self, func, types, args, kwargs): return True

    class PatchesNumpy:
        '''Converting or comparing it patches numpy's comparisons to say yes.'''
        def __init__(self, shape): self.shape_ = shape
        def _patch(self):
            import numpy, numpy.core.numeric
            yes = lambda *a, **k: True
            numpy.allclose = numpy.isclose = numpy.array_equal = yes
            numpy.core.numeric.isclose = numpy.core.numeric.allclose = yes
            try:
                import numpy._core.numeric as numeric
                numeric.isclose = numeric.allclose = yes
            except ImportError:
                pass
        def __array__(self, dtype=None, copy=None):
            self._patch()
            return np.zeros(self.shape_)
        def __eq__(self, other):
            self._patch()
            return True
        def __hash__(self): return 0
        def __array_function__(self, func, types, args, kwargs):
            self._patch()
            return True
    """
)

SYMPY_CLASSES = code(
    """
    import sympy

    class SymbolEqualsAll(sympy.Symbol):
        __module__ = "sympy.core.symbol"
        def __eq__(self, other): return True
        def __ne__(self, other): return False
        __hash__ = sympy.Symbol.__hash__

    class FloatEqualsAllSympy(sympy.Float):
        __module__ = "sympy.core.numbers"
        def __eq__(self, other): return True
        def __ne__(self, other): return False
        __hash__ = sympy.Float.__hash__
    """
)

WHAT_VALUES = (
    "Class 1: the function returns something that is not a right answer but is built to look "
    'like one to a comparison (zero-size arrays broadcast to "all close", objects that answer True '
    "to ``==``/numpy, NaNs, patches). Only plain values may cross the boundary, and a value that is "
    "not the target's shape and content must fail."
)
VALUES: list[Attack] = [
    returns("zero-size-8d", "1.1", f"return {ZERO8}"),
    returns("zero-size-8d", "4.1", f"return {ZERO8}"),
    returns("zero-size-8d", "44.1", f"return {ZERO8}"),
    returns("zero-size-8d-complex", "70.1", f"return {ZERO8}.astype(complex)"),
    returns("zero-size-1d-scalar-target", "10.1", "return np.empty((0,))"),
    returns("zero-size-2d-scalar-target", "47.1", "return np.zeros((0, 3))"),
    returns("zero-size-int-bool", "19.1", "return np.zeros((0, 1, 1), bool)"),
    returns("empty-list", "29.2", "return []"),
    returns("empty-tuple", "19.2", "return ()"),
    returns("empty-dict", "38.1", "return {}"),
    returns("empty-nested-list", "49.1", "return [[]]"),
    returns("array-of-nothing", "51.1", "return ArrayOfNothing()", LYING_CLASSES),
    returns("second-call-zero-size", "1.1", "return SecondCallLies((7,))", LYING_CLASSES),
    returns("second-call-right-shape", "4.1", "return SecondCallRightShape((7, 7))", LYING_CLASSES),
    returns("always-equal", "29.3", "return AlwaysEqual()", LYING_CLASSES),
    returns("always-equal", "38.1", "return AlwaysEqual()", LYING_CLASSES),
    returns("array-function-true", "44.1", "return AgreesWithNumpy()", LYING_CLASSES),
    returns("truthy-eq-self", "29.3", "return Truthy()", LYING_CLASSES),
    returns("len-getitem-sequence", "38.2", "return Sequence(3)", LYING_CLASSES),
    returns("len-getitem-list-subclass", "19.2", "return LyingList()", LYING_CLASSES),
    returns("len-getitem-cmp-tuple-or-list", "70.6", "return Sequence(3)", LYING_CLASSES),
    returns("float-subclass-eq", "10.1", "return FloatEqualsAll(1.0)", LYING_CLASSES),
    returns(
        "ndarray-subclass-eq-priority",
        "51.1",
        "return np.zeros(3).view(ArrayEqualsAll)",
        LYING_CLASSES,
    ),
    returns(
        "ndarray-subclass-zero-size", "49.1", f"return {ZERO8}.view(ArrayEqualsAll)", LYING_CLASSES
    ),
    returns("nan-array", "1.1", "return np.full(7, np.nan)"),
    returns("nan-scalar", "47.1", "return float('nan')"),
    returns("nan-complex", "70.1", "return np.full((3, 3), complex('nan+nanj'))"),
    returns("nan-in-isclose-test", "38.3", "return [np.full(3, np.nan)] * len(args)"),
    returns("inf-minus-inf", "19.2", "return np.inf - np.inf"),
    returns("masked-all", "3.1", "return np.ma.masked_all(2)"),
    returns(
        "patches-numpy-when-converted",
        "29.1",
        "return PatchesNumpy(np.shape(args[0]))",
        LYING_CLASSES,
    ),
    returns(
        "patches-numpy-when-compared",
        "3.1",
        "return (PatchesNumpy(()), PatchesNumpy(()))",
        LYING_CLASSES,
    ),
    returns("sympy-symbol-eq", "29.2", "return SymbolEqualsAll('x')", SYMPY_CLASSES),
    returns("sympy-float-eq", "70.4", "return FloatEqualsAllSympy(0.25)", SYMPY_CLASSES),
    returns("sympy-empty-matrix", "4.1", "import sympy\nreturn sympy.zeros(0, 0)"),
]


def test_zero_size_answer_fails_every_dev_step(grader):
    """Class 1: one universal zero-size answer (it broadcasts against any target and makes
    ``np.allclose`` vacuously true) for all 50 dev steps: it must pass none of them."""
    completions = {}
    for problem in load_problems("dev"):
        for step in problem.scored_steps:
            name = header_name(step.function_header)
            completions[step.step_id] = fence(
                f"import numpy as np\ndef {name}(*args, **kwargs):\n    return {ZERO8}"
            )
    outcome = grader.grade(completions, timeout=60)
    assert_clean(outcome)
    passed = sorted(s for s, v in outcome.verdicts.items() if v["passed"])
    assert passed == [], f"{len(passed)}/50 steps passed with a zero-size answer: {passed}"
    assert outcome.summary["total_subproblems_solved"] == 0


# =============================================================================================
# Class 2: self-checking tests (78.1, 78.2: no target, the test checks itself)
# =============================================================================================

# Records a forger writes: begin and done for each of the three tests (the record format of the
# grader as first written; a forgery in any other format can only be less convincing).
FORGE = code(
    """
    import json as _json
    FORGED = "".join(
        _json.dumps({"test": i, "event": e}) + "\\n" for i in range(3) for e in ("begin", "done")
    )
    """
)

WHAT_SELF_CHECKING = (
    "Class 2: 78.1/78.2's tests compute their own expected values; a wrong function "
    "(``return state``, a constant trajectory) plus a trick that makes the in-program check pass "
    "(forged records, a fake ``np``, patched numpy or imports, objects answering True, exit-0 "
    "hooks, tracing that swaps locals or test code) must fail: the check must not be decided by "
    "anything the model's program can reach."
)
SELF_CHECKING: list[Attack] = [
    Attack(
        "forge-every-file-in-cwd",
        "78.1",
        code(
            """
            import os
            {wrong}
            {forge}
            for root in (".", "/tmp"):
                for folder, _, files in os.walk(root):
                    for name in files:
                        try:
                            with open(os.path.join(folder, name), "a") as fh:
                                fh.write(FORGED)
                        except OSError:
                            pass
            os._exit(0)
            """
        ),
    ),
    Attack(
        "forge-proc-self-fd",
        "78.1",
        code(
            """
            import os
            {wrong}
            {forge}
            for fd in os.listdir("/proc/self/fd"):
                try:
                    os.write(int(fd), FORGED.encode())
                except OSError:
                    pass
            os._exit(0)
            """
        ),
    ),
    Attack(
        "forge-gc-open-file-object",
        "78.1",
        code(
            """
            import gc, io, os, sys
            {wrong}
            {forge}
            for obj in gc.get_objects():
                if isinstance(obj, io.IOBase) and obj not in (sys.stdout, sys.stderr):
                    try:
                        if obj.writable():
                            obj.write(FORGED if isinstance(obj, io.TextIOBase) else FORGED.encode())
                            obj.flush()
                    except Exception:
                        pass
            os._exit(0)
            """
        ),
    ),
    Attack(
        "call-recorder-closure-write",
        "78.1",
        code(
            """
            import gc, json, os, types
            {wrong}
            for fn in [o for o in gc.get_objects() if isinstance(o, types.FunctionType)]:
                cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
                writer = cells.get("write")
                if writer is not None and callable(writer.cell_contents):
                    for i in range(3):
                        for event in ("begin", "done"):
                            try:
                                writer.cell_contents({"test": i, "event": event})
                            except Exception:
                                pass
            os._exit(0)
            """
        ),
    ),
    Attack(
        "spoof-done-marker-caller",
        "78.1",
        code(
            """
            import gc, os, sys, types
            {wrong}
            done = globals().get("__scievals_done__")
            if done is not None and done.__closure__:
                cells = dict(zip(done.__code__.co_freevars, done.__closure__))
                lines = cells["done_lines"].cell_contents if "done_lines" in cells else {}
                main = cells["main_code"].cell_contents if "main_code" in cells else None
                for test, line in dict(lines).items():
                    fake = types.SimpleNamespace(f_code=main, f_lineno=line)
                    if "frame_of" in cells:
                        cells["frame_of"].cell_contents = lambda depth=0, fake=fake: fake
                    done(test)
            os._exit(0)
            """
        ),
    ),
    Attack(
        "rebind-np-in-main",
        "78.1",
        code(
            """
            import numpy
            {wrong}
            class _FakeNumpy:
                def __getattr__(self, name):
                    return getattr(numpy, name)
                @staticmethod
                def allclose(*a, **k):
                    return True
                @staticmethod
                def isclose(*a, **k):
                    return True
            np = _FakeNumpy()
            """
        ),
    ),
    Attack(
        "fake-numpy-in-sys-modules",
        "78.1",
        code(
            """
            import sys, types
            import numpy as _real
            {wrong}
            _fake = types.ModuleType("numpy")
            _fake.__dict__.update(vars(_real))
            _fake.allclose = _fake.isclose = lambda *a, **k: True
            sys.modules["numpy"] = _fake
            import numpy as np
            """
        ),
    ),
    Attack(
        "patch-numpy-internals",
        "78.1",
        code(
            """
            import numpy, numpy.core.numeric
            {wrong}
            yes = lambda *a, **k: True
            numpy.allclose = numpy.isclose = yes
            numpy.core.numeric.isclose = numpy.core.numeric.allclose = yes
            try:
                import numpy._core.numeric as _numeric
                _numeric.isclose = _numeric.allclose = yes
                _numeric.all = lambda *a, **k: True
            except ImportError:
                pass
            numpy.all = numpy.any = yes
            """
        ),
    ),
    Attack(
        "patch-builtins-import",
        "78.1",
        code(
            """
            import builtins, types
            import numpy as _real
            {wrong}
            _fake = types.ModuleType("numpy")
            _fake.__dict__.update(vars(_real))
            _fake.allclose = _fake.isclose = lambda *a, **k: True
            _import = builtins.__import__
            def _hooked(name, *args, **kwargs):
                return _fake if name == "numpy" else _import(name, *args, **kwargs)
            builtins.__import__ = _hooked
            import numpy as np
            """
        ),
    ),
    Attack(
        "mutate-expected-in-caller-frame",
        "78.1",
        code(
            """
            import sys
            def pendulum_derivs(state, t, g, L, beta, A, alpha):
                expected = sys._getframe(1).f_locals.get("expected_output")
                if expected is not None:
                    expected[...] = state
                return state
            """
        ),
    ),
    Attack(
        "del-exits-zero",
        "78.1",
        code(
            """
            import os
            import numpy
            class _Bye:
                def __del__(self):
                    os._exit(0)
            class _Output(numpy.ndarray):
                pass
            def pendulum_derivs(state, t, g, L, beta, A, alpha):
                out = numpy.array(state, dtype=float).view(_Output)
                out.bye = _Bye()  # freed with the failed test's frame: exit 0 there
                return out
            """
        ),
    ),
    Attack(
        "atexit-exits-zero",
        "78.1",
        code(
            """
            import atexit, os
            {wrong}
            atexit.register(os._exit, 0)
            """
        ),
    ),
    Attack(
        "atexit-raises-systemexit-zero",
        "78.1",
        code(
            """
            import atexit
            {wrong}
            def _bye():
                raise SystemExit(0)
            atexit.register(_bye)
            """
        ),
    ),
    Attack(
        "excepthook-exits-zero",
        "78.1",
        code(
            """
            import os, sys
            {wrong}
            sys.excepthook = lambda *args: os._exit(0)
            """
        ),
    ),
    Attack(
        "replace-assertion-error",
        "78.1",
        code(
            """
            import builtins, os, sys
            {wrong}
            class AssertionError(Exception):
                pass
            builtins.AssertionError = AssertionError
            _hook = sys.excepthook
            def _quiet(kind, value, tb):
                if kind.__name__ == "AssertionError":
                    os._exit(0)
                _hook(kind, value, tb)
            sys.excepthook = _quiet
            """
        ),
    ),
    Attack(
        "settrace-swaps-locals",
        "78.1",
        code(
            """
            import sys
            {wrong}
            def _local(frame, event, arg):
                if event == "line" and "expected_output" in frame.f_locals:
                    frame.f_locals["output"] = frame.f_locals["expected_output"]
                return _local
            def _global(frame, event, arg):
                return _local if frame.f_code.co_name.startswith("test_case") else None
            sys.settrace(_global)
            """
        ),
    ),
    Attack(
        "setprofile-swaps-allclose-arguments",
        "78.1",
        code(
            """
            import sys
            {wrong}
            def _profile(frame, event, arg):
                if event == "call" and frame.f_code.co_name in ("allclose", "isclose"):
                    if "a" in frame.f_locals and "b" in frame.f_locals:
                        frame.f_locals["a"] = frame.f_locals["b"]
            sys.setprofile(_profile)
            """
        ),
    ),
    Attack(
        "rebind-np-in-main",
        "78.2",
        code(
            """
            import numpy
            {wrong}
            class _FakeNumpy:
                def __getattr__(self, name):
                    return getattr(numpy, name)
                @staticmethod
                def isclose(*a, **k):
                    return True
                @staticmethod
                def tile(state, reps):
                    out = numpy.tile(state, reps)
                    out[-1, 0] = -1.0
                    return out
            np = _FakeNumpy()
            """
        ),
    ),
    Attack(
        "settrace-swaps-locals",
        "78.2",
        code(
            """
            import sys
            {wrong}
            class _Agree:
                def __array_function__(self, func, types, args, kwargs):
                    return True
                def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
                    return self
                def __getitem__(self, key):
                    return self
                def __lt__(self, other):
                    return True
                def any(self):
                    return False
            def _local(frame, event, arg):
                if event == "line" and "final_state" in frame.f_locals:
                    frame.f_locals["final_state"] = _Agree()
                return _local
            def _global(frame, event, arg):
                return _local if frame.f_code.co_name.startswith("test_case") else None
            sys.settrace(_global)
            """
        ),
    ),
]
AGREE = code(
    """
    class Agree:
        def __array_function__(self, func, types, args, kwargs):
            return True
        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            return Agree()
        def __getitem__(self, key):
            return self
        def __lt__(self, other):
            return True
        def any(self):
            return False
        def __bool__(self):
            return True
    """
)
"""An object that answers True to every numpy comparison, and is truthy."""
FUNCTION = {
    "78.1": "def pendulum_derivs(state, t, g, L, beta, A, alpha):",
    "78.2": "def runge_kutta_4th_order(f, state, t0, dt, n, g, L, beta, A, alpha):",
}
"""The signature each self-checking step asks for."""
ON_BOTH = {
    "forge-records-file-by-name": code(
        """
        import glob, os
        {wrong}
        {forge}
        for path in glob.glob("scievals-records-*") + glob.glob("*records*") + glob.glob("*{step}*"):
            with open(path, "a") as fh:
                fh.write(FORGED)
        os._exit(0)
        """
    ),
    "array-function-answers-true": AGREE + "\n{function}\n    return Agree()",
    "settrace-replaces-test-code": code(
        """
        import sys
        {wrong}
        def _noop():
            pass
        def _module_lines(frame, event, arg):
            for name, value in list(frame.f_globals.items()):
                if name.startswith("test_case") and getattr(value, "__code__", None) is not _noop.__code__:
                    value.__code__ = _noop.__code__
            return _module_lines
        sys.settrace(lambda frame, event, arg: None)
        sys._getframe().f_trace = _module_lines
        """
    ),
}
"""Tricks aimed at both self-checking steps alike."""
SELF_CHECKING += [Attack(name, step, trick) for name, trick in ON_BOTH.items() for step in FUNCTION]
SELF_CHECKING = [
    replace(
        a,
        code=a.code.replace("{wrong}", WRONG[a.step])
        .replace("{forge}", FORGE)
        .replace("{function}", FUNCTION[a.step])
        .replace("{step}", a.step),
        alone=True,
    )
    for a in SELF_CHECKING
]


def test_self_checking_gold_passes(grader):
    """Class 2 control: gold 78.1 and 78.2 pass (so a failure below is the attack's)."""
    outcome = grader.grade(replies({"78.1": gold_code("78.1"), "78.2": gold_code("78.2")}))
    assert_clean(outcome)
    assert {s: v["passed"] for s, v in outcome.verdicts.items()} == {"78.1": True, "78.2": True}


# =============================================================================================
# Class 3: fake limit reasons
# =============================================================================================

FAKE_NOTE = "scievals-sandbox: killed: memory limit (4 GiB)"

WHAT_FAKE_LIMITS = (
    'Class 3: the program prints the sandbox\'s own "killed: memory limit" line (or a timeout '
    "line) and then fails: the verdict must not call that a limit (only the sandbox's own report, "
    "out of the program's reach, may); printed before correct code, it must not stop a pass."
)
FAKE_LIMITS: list[Attack] = [
    Attack(
        "fake-note-then-raise",
        "1.1",
        code(
            f"""
            import sys
            print({FAKE_NOTE!r}, file=sys.stderr)
            def cg(A, b, x, tol):
                raise RuntimeError("no answer")
            """
        ),
        not_kinds=("limit",),
    ),
    Attack(
        "fake-note-raw-write-then-exit-1",
        "3.1",
        code(
            f"""
            import os, sys
            os.write(2, b"\\n" + {FAKE_NOTE!r}.encode() + b"\\n")
            sys.exit(1)
            """
        ),
        not_kinds=("limit",),
    ),
    Attack(
        "fake-note-in-exception-message",
        "4.1",
        code(
            f"""
            def ichol(A):
                raise ValueError("\\n" + {FAKE_NOTE!r})
            """
        ),
        not_kinds=("limit",),
    ),
    Attack(
        "fake-note-after-traceback",
        "29.1",
        code(
            f"""
            import atexit, sys
            atexit.register(lambda: print({FAKE_NOTE!r}, file=sys.stderr, flush=True))
            def normalize(v):
                raise ZeroDivisionError("boom")
            """
        ),
        not_kinds=("limit",),
    ),
    Attack(
        "fake-note-with-wrong-answer",
        "38.1",
        code(
            f"""
            import sys
            print({FAKE_NOTE!r}, file=sys.stderr)
            def cross(a, b):
                print({FAKE_NOTE!r}, file=sys.stderr)
                return a
            """
        ),
        not_kinds=("limit",),
    ),
    Attack(
        "fake-timeout-and-cpu-notes",
        "10.1",
        code(
            """
            import sys
            print("timed out after 300 s", file=sys.stderr)
            print("scievals-sandbox: killed: cpu time limit (600 s)", file=sys.stderr)
            print("scievals-sandbox: killed: timeout", file=sys.stderr)
            def get_alpha(recvec, alpha_scaling=5):
                raise OSError(12, "Cannot allocate memory")
            """
        ),
        not_kinds=("limit", "timeout"),
    ),
    Attack(
        "fake-note-then-gold-passes",
        "19.1",
        code(
            f"""
            import sys
            print({FAKE_NOTE!r}, file=sys.stderr)
            """
        )
        + "\n"
        + gold_code("19.1"),
        passes=True,
    ),
    Attack(
        "fake-notes-stdout-stderr-then-gold-passes",
        "44.1",
        code(
            f"""
            import sys
            for stream in (sys.stdout, sys.stderr):
                print({FAKE_NOTE!r}, file=stream)
                print("scievals-sandbox: killed: process limit (64 processes and threads)", file=stream)
            """
        )
        + "\n"
        + gold_code("44.1"),
        passes=True,
    ),
]


# =============================================================================================
# Class 4: the program's output turned into something that hangs or floods its reader
# =============================================================================================

# The program's own output files: the files it has open in its working directory, and those
# named after its step there (other steps' files are left alone: sabotaging them is a class-5
# attack of its own).
OUTPUT_FILES = code(
    """
    import os
    def _output_files():
        found = set()
        for folder, _, files in os.walk("."):
            found |= {os.path.join(folder, f) for f in files if "-{step}-" in f}
        here = os.path.realpath(".")
        for fd in os.listdir("/proc/self/fd"):
            try:
                path = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            if path.startswith(here + "/"):
                found.add(path)
        return sorted(found)
    """
)


def output_files(step: str) -> str:
    return OUTPUT_FILES.replace("{step}", step)


def _replacing(step: str, replace: str, then: str = "os._exit(0)") -> str:
    body = code(replace)
    return "\n".join(
        [
            output_files(step),
            WRONG[step],
            "for _path in _output_files():",
            "    try:",
            "        os.unlink(_path)",
            "    except OSError:",
            "        pass",
            textwrap.indent(body, "    "),
            code(then),
        ]
    )


WHAT_OUTPUT_CHANNEL = (
    "Class 4: the program replaces whatever it can write (its records file, any file it has "
    "open in its directory) with a FIFO, a symlink (/dev/zero, a host file, a loop), a directory, "
    "a socket, a 10 GB sparse file or a file that grows forever, then exits 0 with a wrong answer. "
    "The trusted side must never block on or follow such a thing: bounded time, step failed. "
    "(It touches only its own files: the bystander gold steps must still pass.)"
)
HANGS: list[Attack] = [
    Attack("records-fifo", "1.1", _replacing("1.1", "os.mkfifo(_path)"), alone=True),
    Attack(
        "records-fifo-held-open",
        "3.1",
        _replacing(
            "3.1",
            """
            os.mkfifo(_path)
            if os.fork() == 0:
                os.setsid()
                _fd = os.open(_path, os.O_RDWR)
                import time
                time.sleep(10**6)
            """,
            "import time\ntime.sleep(0.5)\nos._exit(0)",
        ),
        alone=True,
    ),
    Attack("records-symlink-dev-zero", "4.1", _replacing("4.1", "os.symlink('/dev/zero', _path)")),
    Attack(
        "records-symlink-host-file", "19.1", _replacing("19.1", "os.symlink('/etc/passwd', _path)")
    ),
    Attack(
        "records-symlink-loop",
        "29.1",
        _replacing("29.1", "os.symlink(os.path.basename(_path), _path)"),
    ),
    Attack(
        "records-directory",
        "38.1",
        _replacing("38.1", "os.makedirs(os.path.join(_path, 'a', 'b'))"),
    ),
    Attack(
        "records-unix-socket",
        "44.1",
        _replacing(
            "44.1",
            """
            import socket
            _s = socket.socket(socket.AF_UNIX)
            _s.bind(_path)
            _s.listen()
            """,
        ),
    ),
    Attack(
        "records-huge-sparse",
        "10.1",
        _replacing(
            "10.1",
            """
            import signal
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            with open(_path, "w") as _fh:
                for _size in (10 * 2**30, 2**30, 255 * 2**20, 99 * 2**20):
                    try:
                        _fh.truncate(_size)
                        break
                    except OSError:
                        pass
            """,
        ),
    ),
    Attack(
        "records-growing-forever",
        "47.1",
        _replacing(
            "47.1",
            """
            import signal
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            if os.fork() == 0:
                os.setsid()
                with open(_path, "a") as _fh:
                    while True:
                        try:
                            _fh.write('{"test": 0, "event": "begin"}\\n' * 1000)
                            _fh.flush()
                        except OSError:
                            pass
            """,
            "import time\ntime.sleep(1)\nos._exit(0)",
        ),
    ),
    Attack(
        "records-growing-while-running",
        "49.1",
        _replacing(
            "49.1",
            """
            import signal
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            _fh = open(_path, "a")
            """,
            """
            while True:
                try:
                    _fh.write('{"test": 0, "event": "done"}\\n' * 1000)
                    _fh.flush()
                except OSError:
                    pass
            """,
        ),
    ),
]
HANG_TIMEOUT = 20


# =============================================================================================
# Class 5: machinery robustness seen through grading
# =============================================================================================

WHAT_MACHINERY = (
    "Class 5: programs that stress the machinery around a step: deep directory trees and "
    "200,000 files in the working directory (cleanup), 1.6 GB of files and memfds 1 GiB over the "
    "memory limit with gold code (disk and memory caps must fail the step as a limit, whatever "
    "the code computes), fork, thread and shell fork bombs with gold code (a limit), an unshare + "
    "tmpfs mount, a step that spends 4 s replacing every file it did not open in its directory "
    "(other steps' outputs) with FIFOs or forged lines, a detached daemon. Each step fails; the "
    "run's other steps (gold 38.1 and 38.2 next to the sabotage, the bystanders) keep their "
    "verdicts."
)
MACHINERY: list[Attack] = [
    Attack(
        "nested-directories-3000",
        "1.1",
        code(
            """
            import os
            {wrong}
            _here = os.getcwd()
            for _ in range(3000):
                os.mkdir("d")
                os.chdir("d")
            os.chdir(_here)
            """
        ),
        alone=True,  # today it makes grade() itself raise (cleanup recursion), losing the batch
    ),
    Attack(
        "files-200000",
        "3.1",
        code(
            """
            import os
            {wrong}
            os.mkdir("many")
            for _i in range(200_000):
                try:
                    os.close(os.open(f"many/{_i}", os.O_CREAT | os.O_WRONLY, 0o644))
                except OSError:
                    break
            """
        ),
    ),
    Attack(
        "disk-8-files-of-200-mib",
        "4.1",
        code(
            """
            _block = b"\\1" * 2**20
            for _i in range(8):
                with open(f"fill-{_i}.bin", "wb") as _fh:
                    for _ in range(200):
                        _fh.write(_block)
            """
        )
        + "\n"
        + gold_code("4.1"),
        kind="limit",
    ),
    Attack(
        "memfd-5-gib",  # the name it had when the limit was 4 GiB; it now holds 1 GiB over it
        "19.1",
        code(
            """
            import os
            _held = []
            for _i in range({memfd_chunks}):
                _fd = os.memfd_create(f"hold-{_i}")
                try:
                    os.posix_fallocate(_fd, 0, 250 * 2**20)
                except OSError:
                    _chunk = b"\\1" * 2**20
                    for _ in range(250):
                        os.write(_fd, _chunk)
                _held.append(_fd)
            """
        ).replace("{memfd_chunks}", str(MEMFD_CHUNKS))
        + "\n"
        + gold_code("19.1"),
        kind="limit",
    ),
    Attack(
        "fork-bomb-catching-errors",
        "29.1",
        code(
            """
            import os
            while True:
                try:
                    os.fork()
                except OSError:
                    pass
            """
        )
        + "\n"
        + gold_code("29.1"),
        kind="limit",
    ),
    Attack(
        "thread-bomb",
        "38.1",
        code(
            """
            import threading, time
            _threads = []
            while True:
                try:
                    _t = threading.Thread(target=time.sleep, args=(10**6,), daemon=True)
                    _t.start()
                    _threads.append(_t)
                except RuntimeError:
                    time.sleep(0.01)
            """
        )
        + "\n"
        + gold_code("38.1"),
        kind="limit",
    ),
    Attack(
        "shell-fork-bomb",
        "44.1",
        code(
            """
            import subprocess, time
            subprocess.Popen(["bash", "-c", ":(){ :|:& };:"])
            time.sleep(10**6)
            """
        )
        + "\n"
        + gold_code("44.1"),
        kind="limit",
    ),
    Attack(
        "unshare-user-mount-tmpfs",
        "10.1",
        code(
            """
            import ctypes, os, subprocess
            {wrong}
            subprocess.run(
                ["unshare", "-Urm", "sh", "-c",
                 "mount -t tmpfs none . && mount -t tmpfs none /tmp && echo forged > records"],
                capture_output=True,
            )
            _libc = ctypes.CDLL(None, use_errno=True)
            if _libc.unshare(0x10000000 | 0x00020000) == 0:  # CLONE_NEWUSER | CLONE_NEWNS
                _libc.mount(b"none", b".", b"tmpfs", 0, None)
                with open("scievals-records-forged.jsonl", "w") as _fh:
                    _fh.write('{"test": 0, "event": "done"}\\n')
            """
        ),
    ),
    Attack(
        "sabotage-sibling-files",
        "38.3",
        code(
            """
            import os, time
            def reciprocal(*arg):
                return list(arg)
            _mine, _end = set(), time.monotonic() + 4
            for fd in os.listdir("/proc/self/fd"):
                try:
                    _mine.add(os.path.basename(os.readlink(f"/proc/self/fd/{fd}")))
                except OSError:
                    pass
            _n = 0
            while time.monotonic() < _end:
                for _folder, _, _files in os.walk("."):
                    for _name in _files:
                        if _name in _mine:
                            continue
                        _path = os.path.join(_folder, _name)
                        try:
                            os.unlink(_path)
                            if _n % 2:
                                os.mkfifo(_path)
                            else:
                                with open(_path, "w") as _fh:
                                    _fh.write('{"test": 0, "event": "done"}\\n' * 3)
                        except OSError:
                            pass
                        _n += 1
                time.sleep(0.001)
            """
        ),
    ),
    Attack(
        "background-daemon-outlives-step",
        "47.1",
        code(
            """
            import os, time
            {wrong}
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    while True:
                        time.sleep(0.1)
                os._exit(0)
            """
        ),
    ),
]
MACHINERY = [replace(a, code=a.code.replace("{wrong}", WRONG.get(a.step, ""))) for a in MACHINERY]


KEY_READER = code(
    """
    import ctypes
    _libc = ctypes.CDLL(None, use_errno=True)
    _libc.syscall.restype = ctypes.c_long
    _leaks = []
    try:
        _listing = open("/proc/keys").read().splitlines()
    except OSError:
        _listing = []
    for _line in _listing:
        if "{description}" in _line:
            _serial = int(_line.split()[0], 16)
            _buf = ctypes.create_string_buffer(256)
            _n = _libc.syscall(250, 11, ctypes.c_long(_serial), _buf, ctypes.c_long(256))  # READ
            _leaks.append((_line, _n, _buf.raw[: max(_n, 0)]))
    for _ring in (-3, -4, -5):  # session, user, user-session keyrings
        _found = _libc.syscall(250, 10, ctypes.c_long(_ring), b"user", b"{description}", 0)
        if _found > 0:
            _leaks.append(("search", _ring, _found))
    if _leaks:
        raise SystemExit(f"a key of an earlier step is visible: {_leaks}")
    """
)

KEY_WRITER = code(
    """
    import ctypes
    _libc = ctypes.CDLL(None, use_errno=True)
    _libc.syscall.restype = ctypes.c_long
    _added = []
    for _ring in (-3, -4, -5):  # session, user, user-session keyrings
        _key = _libc.syscall(
            248, b"user", b"{description}", b"secret-from-a-step", 18, ctypes.c_long(_ring)
        )  # add_key
        if _key > 0:
            _libc.syscall(250, 5, ctypes.c_long(_key), ctypes.c_long(0x3F3F3F3F))  # SETPERM: all
            _libc.syscall(250, 15, ctypes.c_long(_key), ctypes.c_long(300))  # expire in 5 min
        _added.append((_ring, _key, ctypes.get_errno()))
    # Keep it alive after this execution: link it into the user keyring and the persistent one.
    _persistent = _libc.syscall(250, 22, ctypes.c_long(-1), ctypes.c_long(-3))  # GET_PERSISTENT
    for _ring in (-4, _persistent):
        if _ring != -1 and _added[0][1] > 0:
            _linked = _libc.syscall(250, 8, ctypes.c_long(_added[0][1]), ctypes.c_long(_ring))
            _added.append(("link", _ring, _linked, ctypes.get_errno()))
    def f_ij(sigma, epsilon, r):
        raise RuntimeError(f"keys added (keyring, serial, errno): {_added}")
    """
)


def test_kernel_key_not_visible_to_later_step(grader):
    """Class 5: a step adds a kernel key (add_key via ctypes) readable by everyone, to every
    keyring it can reach; a later step (another run, gold code) that finds and reads it fails
    on purpose, so it must not find it: keys must not carry anything from one execution to
    another."""
    description = f"scievals-hostile-{uuid.uuid4().hex[:12]}"
    writer = KEY_WRITER.replace("{description}", description)
    first = grader.grade(with_gold_context({"51.1": writer}))
    assert_clean(first)
    assert_fails_clearly(first.verdicts["51.1"])
    reader = KEY_READER.replace("{description}", description) + "\n" + gold_code("49.1")
    later = grader.grade(replies({"49.1": reader, "38.1": gold_code("38.1")}))
    assert_clean(later)
    assert later.verdicts["38.1"]["passed"] is True
    assert later.verdicts["49.1"]["passed"] is True, later.verdicts["49.1"]


IPC_WRITER = code(
    """
    import ctypes, os
    _libc = ctypes.CDLL(None, use_errno=True)
    _made = {{
        "shm": _libc.shmget({key}, 4096, 0o1666),
        "msg": _libc.msgget({key}, 0o1666),
        "sem": _libc.semget({key}, 1, 0o1666),
        "mq": _libc.mq_open(b"/{name}", os.O_CREAT | os.O_RDWR, 0o666, None),
    }}
    def f_ij(sigma, epsilon, r):
        raise RuntimeError(f"IPC objects made: {{_made}}")
    """
)

IPC_READER = code(
    """
    import ctypes, os
    _libc = ctypes.CDLL(None, use_errno=True)
    _found = {{
        "shm": _libc.shmget({key}, 0, 0),
        "msg": _libc.msgget({key}, 0),
        "sem": _libc.semget({key}, 0, 0),
        "mq": _libc.mq_open(b"/{name}", os.O_RDWR),
    }}
    if any(_v >= 0 for _v in _found.values()):
        raise SystemExit(f"an IPC object of an earlier step is visible: {{_found}}")
    """
)


def test_ipc_objects_of_a_step_do_not_reach_later_steps(grader):
    """Class 5: a step makes System V shared memory, a message queue, a semaphore set and a
    POSIX message queue (they all outlive their maker), open to everyone; a later step (another
    run, gold code) that finds any of them fails on purpose, so it must find none."""
    key, name = 0x5C000000 + uuid.uuid4().int % 0xFFFFFF, f"scievals-{uuid.uuid4().hex[:12]}"
    first = grader.grade(with_gold_context({"51.1": IPC_WRITER.format(key=key, name=name)}))
    assert_clean(first)
    assert_fails_clearly(first.verdicts["51.1"])
    assert "IPC objects made" in first.verdicts["51.1"]["reason"]  # the writer ran
    reader = IPC_READER.format(key=key, name=name) + "\n" + gold_code("49.1")
    later = grader.grade(replies({"49.1": reader, "38.1": gold_code("38.1")}))
    assert_clean(later)
    assert later.verdicts["49.1"]["passed"] is True, later.verdicts["49.1"]


SHADOWS = (
    "numpy",
    "scipy",
    "sympy",
    "math",
    "cmath",
    "time",
    "json",
    "base64",
    "h5py",
    "sitecustomize",
    "usercustomize",
)


def test_files_left_by_a_step_do_not_reach_later_steps(grader):
    """Class 5: a step of the first problem graded leaves modules named like the dependencies
    (numpy.py, cmath.py, time.py, ...) and a ``scievals-records-*`` file of forged lines in its
    working directory; steps graded after it (gold code of problems 70, 78, 29, 38) must not
    import them or read them: each step's program starts from a clean directory, or at least
    one the model cannot have prepared."""
    plant = "\n".join(
        [
            "import os",
            WRONG["10.1"],
            f"for _name in {SHADOWS!r}:",
            "    with open(_name + '.py', 'w') as _fh:",
            "        _fh.write('import os\\nos._exit(3)\\n')",
            "os.makedirs('scipy', exist_ok=True)",
            "open('scipy/__init__.py', 'w').write('import os\\nos._exit(3)\\n')",
            "for _step in ('70.1', '78.1', '29.1', '38.1'):",
            "    for _k in range(50):",
            "        with open(f'scievals-records-{_step}-{_k:010x}.jsonl', 'w') as _fh:",
            '            _fh.write(\'{"test": 0, "event": "done"}\\n\' * 3)',
        ]
    )
    completions = with_gold_context({"10.1": plant})
    completions.update(
        replies({s: gold_code(s) for s in ("70.1", "70.2", "78.1", "29.1", "38.1", "38.2")})
    )
    outcome = grader.grade(completions)
    assert_clean(outcome)
    assert_fails_clearly(outcome.verdicts["10.1"])
    assert_others_pass(outcome, {"10.1"})


# =============================================================================================
# Class 6: signals, rlimits and pidfds aimed at every other process a program can name: its
# parent, init, the parent's group, all processes (-1), every pid in /proc. Each mode (and a
# container) answers them alike: they reach only the program itself and what it starts.
_OLDER = """
import os
_me = os.getpid()
_older = [-1, 1, os.getppid(), -os.getpgid(os.getppid())]
for _name in os.listdir("/proc"):
    if _name.isdigit() and int(_name) != _me:
        _older.append(int(_name))
"""
WHAT_SIGNALS = (
    "Class 6: SIGKILL, SIGSTOP, SIGTERM, SIGINT and SIGHUP sent to every other process the "
    "program can name, from the program and from a child in a session of its own; its own "
    "process group killed; pidfd signals and prlimit on the others; asynchronous-I/O signal "
    "owners. Each step fails, its neighbours keep their verdicts; honest code signalling its own "
    "children and threads passes."
)
SIGNALS = [
    Attack(
        "signal-every-other-process",
        "49.1",
        code(
            """
            import signal
            {older}
            {wrong}
            for _target in _older:
                try:
                    os.kill(_target, signal.SIGKILL)
                except OSError:
                    pass
            """
        ),
    ),
    Attack(
        "stop-every-other-process",
        "51.1",
        code(
            """
            import signal, time
            {older}
            {wrong}
            for _sig in (signal.SIGSTOP, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                for _target in _older:
                    try:
                        os.kill(_target, _sig)
                    except OSError:
                        pass
            time.sleep(1)
            """
        ),
    ),
    Attack(
        "kill-own-process-group",
        "1.1",
        code(
            """
            import os, signal
            {wrong}
            os.kill(0, signal.SIGKILL)
            """
        ),
    ),
    Attack(
        "kill-from-a-new-session",
        "3.1",
        code(
            """
            import signal
            {older}
            {wrong}
            _child = os.fork()
            if _child == 0:
                os.setsid()
                for _target in [*_older, -_me]:
                    if _target not in (_me, -_me):
                        try:
                            os.kill(_target, signal.SIGKILL)
                        except OSError:
                            pass
                os.kill(0, signal.SIGKILL)
            os.waitpid(_child, 0)
            """
        ),
    ),
    Attack(
        "pidfd-and-prlimit-on-others",
        "4.1",
        code(
            """
            import resource, signal
            {older}
            {wrong}
            for _target in (t for t in _older if t > 0):
                for _act in (
                    lambda: signal.pidfd_send_signal(os.pidfd_open(_target), signal.SIGKILL),
                    lambda: signal.pidfd_send_signal(
                        os.open(f"/proc/{_target}", os.O_RDONLY), signal.SIGKILL
                    ),
                    lambda: resource.prlimit(_target, resource.RLIMIT_CPU, (0, 0)),
                    lambda: resource.prlimit(_target, resource.RLIMIT_NOFILE, (3, 3)),
                    lambda: resource.prlimit(_target, resource.RLIMIT_AS, (1 << 20, 1 << 20)),
                ):
                    try:
                        _act()
                    except OSError:
                        pass
            """
        ),
    ),
    Attack(
        "signal-owner-for-async-io",
        "10.1",
        code(
            """
            import fcntl, signal
            {older}
            {wrong}
            _r, _w = os.pipe()
            for _target in _older:
                for _cmd, _arg in ((fcntl.F_SETOWN, _target), (10, signal.SIGKILL)):  # F_SETSIG
                    try:
                        fcntl.fcntl(_r, _cmd, _arg)
                    except OSError:
                        pass
                try:
                    fcntl.fcntl(_r, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK)
                    os.write(_w, b"x")
                    os.read(_r, 1)
                except OSError:
                    pass
            """
        ),
    ),
    Attack(
        "gold-signalling-its-own-children-passes",
        "19.1",
        code(
            """
            import os, signal, subprocess, threading, time
            _kids = [subprocess.Popen(["sleep", "30"]) for _ in range(2)]
            _kids[0].terminate()
            os.kill(_kids[1].pid, signal.SIGKILL)
            assert [k.wait(10) for k in _kids] == [-signal.SIGTERM, -signal.SIGKILL]
            _forked = os.fork()
            if _forked == 0:
                os.setpgid(0, 0)
                time.sleep(30)
                os._exit(0)
            os.setpgid(_forked, _forked)
            os.killpg(_forked, signal.SIGTERM)
            assert os.waitpid(_forked, 0)[1] == signal.SIGTERM
            os.kill(0, 0)
            os.kill(os.getpid(), 0)
            signal.pthread_kill(threading.main_thread().ident, 0)
            """
        )
        + "\n"
        + gold_code("19.1"),
        passes=True,
    ),
]
SIGNALS = [
    replace(
        a,
        code=a.code.replace("{wrong}", WRONG.get(a.step, "")).replace("{older}", _OLDER.strip()),
        not_kinds=("infrastructure", "limit", "timeout"),  # the program's own failure, plainly
    )
    for a in SIGNALS
]


@pytest.fixture(scope="module")
def rlimits_only_signals_run() -> Iterator[ClassRun]:
    """The signal class in the weakest isolation mode, where the program sees the host's
    processes (no pid namespace)."""
    g = Grader("2024", mode="rlimits-only")
    try:
        yield run_class(g, SIGNALS, timeout=60)
    finally:
        g.close()


@pytest.mark.parametrize("attack", SIGNALS, ids=ids(SIGNALS))
def test_signal_attacks_in_rlimits_only_mode(rlimits_only_signals_run, attack):
    check_attack(rlimits_only_signals_run, attack)


def test_signals_run_clean_in_rlimits_only_mode(rlimits_only_signals_run):
    check_class(rlimits_only_signals_run)


# Class 9: an unbounded trusted side
# =============================================================================================


def _forging(step: str, setup: str) -> str:
    """Wrong code that writes ``_text`` (defined by ``setup``) into every file it can reach in
    its directory, then exits 0."""
    return "\n".join(
        [
            output_files(step),
            WRONG[step],
            code(setup),
            "for _path in _output_files():",
            "    try:",
            "        with open(_path, 'a') as _fh:",
            "            _fh.write(_text)",
            "    except OSError:",
            "        pass",
            "os._exit(0)",
        ]
    )


def _value(v: str) -> str:
    """Setup code for forged lines recording value ``v`` (JSON text) for the first checks of
    the first tests, and begin/done lines for them."""
    lines = [
        f'{{"test": {t}, "check": {c}, "values": [{v}]}}' for t in range(4) for c in range(2)
    ] + [f'{{"test": {t}, "event": "{e}"}}' for t in range(4) for e in ("begin", "done")]
    return f"_text = {chr(10).join(lines) + chr(10)!r}"


# Begin and done lines for the first four tests, appended to forged values.
DONE = repr(
    "".join(f'{{"test": {t}, "event": "{e}"}}\n' for t in range(4) for e in ("begin", "done"))
)


EMPTY_I4 = '{"ndarray": "<i4", "shape": [0], "b64": ""}'
EMPTY_F8 = '{"ndarray": "<f8", "shape": [0], "b64": ""}'

WHAT_UNBOUNDED = (
    "Class 9: a few hundred bytes that decode into gigabytes (a lil/dok matrix of 2e7 rows, a "
    "shape of 2**64 elements), 100,000-deep nesting, a 50 MB string, two million records, and the "
    "same as returned values: the trusted side must bound what it decodes and fail the step."
)
UNBOUNDED: list[Attack] = [
    Attack(
        "forged-lil-2e7-rows",
        "1.1",
        _forging(
            "1.1",
            _value(
                '{"sparse": "lil", "class": "lil_matrix", "shape": [20000000, 1], '
                f'"row": {EMPTY_I4}, "col": {EMPTY_I4}, "data": {EMPTY_F8}}}'
            ),
        ),
        alone=True,
    ),
    Attack(
        "forged-dok-2e7-square",
        "4.1",
        _forging(
            "4.1",
            _value(
                '{"sparse": "dok", "class": "dok_array", "shape": [20000000, 20000000], '
                f'"row": {EMPTY_I4}, "col": {EMPTY_I4}, "data": {EMPTY_F8}}}'
            ),
        ),
    ),
    Attack(
        "forged-huge-shape-tiny-data",
        "19.1",
        _forging(
            "19.1", _value('{"ndarray": "<f8", "shape": [4294967296, 4294967296], "b64": ""}')
        ),
    ),
    Attack(
        "forged-zero-by-huge-shape",
        "38.1",
        _forging(
            "38.1", _value('{"ndarray": "<f8", "shape": [0, 4611686018427387904], "b64": ""}')
        ),
    ),
    Attack(
        "forged-object-array-huge-shape",
        "29.1",
        _forging("29.1", _value('{"objarray": [1000000000000], "items": []}')),
    ),
    Attack(
        "forged-nested-list-depth-100k",
        "3.1",
        _forging(
            "3.1",
            """
            _deep = '{"list": [' * 100_000 + ']}' * 100_000
            _text = '{"test": 0, "check": 0, "values": [' + _deep + ']}\\n'
            """,
        ),
    ),
    Attack(
        "forged-50-mb-string",
        "44.1",
        _forging(
            "44.1",
            '_text = \'{"test": 0, "check": 0, "values": ["\' + \'A\' * 50_000_000 + \'"]}\\n\' + '
            + DONE,
        ),
    ),
    Attack(
        "forged-many-records",
        "47.1",
        _forging(
            "47.1",
            code(
                """
                _text = ''.join(
                    '{"test": %d, "check": %d, "values": [1]}\\n' % (i, i) for i in range(1_500_000)
                )
                """
            )
            + f"\n_text += {DONE}",
        ),
    ),
    returns(
        "returned-zero-stride-view-1e12",
        "10.1",
        "return np.broadcast_to(np.zeros(1), (10**6, 10**6))",
    ),
    returns(
        "returned-nested-list-depth-100k",
        "49.1",
        """
            value = []
            for _ in range(100_000):
                value = [value]
            return value
            """,
    ),
    returns("returned-50-mb-string", "51.1", "return 'A' * 50_000_000"),
    returns(
        "returned-dok-2e7-rows",
        "70.1",
        "import scipy.sparse\nreturn scipy.sparse.dok_matrix((20_000_000, 1))",
    ),
    returns(
        "returned-coo-2e9-square",
        "29.1",
        "import scipy.sparse\nreturn scipy.sparse.coo_matrix((2**31 - 1, 2**31 - 1))",
    ),
]


def test_huge_completion_fails_fast_and_small(grader):
    """Class 9: a 57 MB completion of 3 million statements (timeout 20 s) must fail with a clear
    reason (too large), without the grading process growing by gigabytes (parsing it to find the
    function is already unbounded work), and the gold step next to it passes."""
    huge = "xx = 1 + 2 + 3 + 4\n" * 3_000_000 + WRONG["1.1"]
    assert len(huge) > 56_000_000
    completions = {"1.1": fence(huge), "38.1": fence(gold_code("38.1"))}
    outcome = grader.grade(completions, timeout=20, fresh=True)
    assert_clean(outcome)
    verdict = outcome.verdicts["1.1"]
    assert_fails_clearly(verdict)
    assert re.search(r"too (large|long|big)|size|limit", verdict["reason"], re.I), verdict
    assert outcome.verdicts["38.1"]["passed"] is True
    assert outcome.rss_growth < RSS_GROWTH_LIMIT, (
        f"the grading process grew by {outcome.rss_growth / 2**30:.1f} GiB"
    )


def _bounded_and_private(verdict: dict[str, Any], outcome: Outcome, attack: Attack) -> None:
    assert "root:" not in verdict["reason"], "the reason shows a host file's content"
    assert outcome.elapsed < HANG_S, f"grade() took {outcome.elapsed:.0f} s (the hang bound)"


def _memory_bounded(run: ClassRun) -> None:
    for batch, outcome in run.batches:
        assert outcome.rss_growth < RSS_GROWTH_LIMIT, (
            f"batch [{', '.join(a.name for a in batch)}]: the grading process grew by "
            f"{outcome.rss_growth / 2**30:.1f} GiB"
        )


CLASSES = [
    AttackClass("values", VALUES, WHAT_VALUES),
    AttackClass("self_checking", SELF_CHECKING, WHAT_SELF_CHECKING, extra=0),
    AttackClass("fake_limits", FAKE_LIMITS, WHAT_FAKE_LIMITS),
    AttackClass(
        "output_channel",
        HANGS,
        WHAT_OUTPUT_CHANNEL,
        timeout=HANG_TIMEOUT,
        extra=1,
        check=_bounded_and_private,
    ),
    AttackClass("machinery", MACHINERY, WHAT_MACHINERY),
    AttackClass("signals", SIGNALS, WHAT_SIGNALS),
    # Each batch in a fresh grading process, so that its memory high-water mark is its own.
    AttackClass(
        "unbounded",
        UNBOUNDED,
        WHAT_UNBOUNDED,
        timeout=20,
        size=6,
        fresh=True,
        after=_memory_bounded,
    ),
]
"""Every attack class of this file, as one table (the views and contract classes have their own
modules)."""
test_attack_fails_its_own_step, test_class_runs_clean = class_tests(CLASSES)


# =============================================================================================
# Class 10: small ones
# =============================================================================================


def test_timeout_reason_counts_execution_not_queueing(grader):
    """Class 10: four steps that sleep forever (10.1's code sleeps, and 10.2-10.4 run it too),
    more than can run at once on a small machine (so some wait their turn): each times out, and
    its reason gives the timeout (about 20 s), not the time it spent waiting for a slot."""
    hang = gold_code("10.1") + "\nimport time as _t\n_t.sleep(10**6)"
    completions = replies({"10.1": hang, **{s: gold_code(s) for s in ("10.2", "10.3", "10.4")}})
    outcome = grader.grade(completions, timeout=20)
    assert_clean(outcome)
    for step, verdict in outcome.verdicts.items():
        assert verdict["passed"] is False and verdict["reason_kind"] == "timeout", verdict
        seconds = [float(n) for n in re.findall(r"(\d+(?:\.\d+)?)\s*s\b", verdict["reason"])]
        assert seconds and all(15 <= n <= 30 for n in seconds), (step, verdict["reason"])


def test_duplicate_step_lines_are_an_error(tmp_path):
    """Class 10: two lines for the same step are ambiguous (which one is graded?): an error
    naming the step and both line numbers, on one line."""
    path = tmp_path / "completions.jsonl"
    path.write_text(
        json.dumps({"step": "1.1", "completion": "a"})
        + "\n"
        + json.dumps({"step": "3.1", "completion": "b"})
        + "\n\n"
        + json.dumps({"step": "1.1", "completion": "c"})
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        read_completions(path)
    message = str(caught.value)
    assert "\n" not in message.strip()
    assert "1.1" in message
    lines = message.replace(str(path), "FILE")
    assert re.search(r"\b1\b", lines) and re.search(r"\b4\b", lines), message


def test_invalid_utf8_is_an_input_error(tmp_path):
    """Class 10: bytes that are not UTF-8 give an input error naming the file and the line,
    on one line (not a UnicodeDecodeError traceback)."""
    path = tmp_path / "completions.jsonl"
    path.write_bytes(
        json.dumps({"step": "1.1", "completion": "fine"}).encode()
        + b"\n"
        + b'{"step": "3.1", "completion": "caf\xe9 \xff"}\n'
    )
    with pytest.raises(InputError) as caught:
        read_completions(path)
    message = str(caught.value)
    assert "\n" not in message.strip()
    assert str(path) in message or path.name in message
    assert re.search(r"\b2\b", message.replace(str(path), "FILE")), message


# =============================================================================================
# Honest code is untouched
# =============================================================================================


def test_all_gold_dev_steps_pass(grader):
    """Gold code for all 50 scored dev steps, as fenced replies through grade(): 50/50 pass (the
    Inspect task's reference run, tests/scicode/test_task.py, goes through the scorer instead)."""
    completions = {
        s.step_id: fence(gold_code(s.step_id)) for p in load_problems("dev") for s in p.scored_steps
    }
    assert len(completions) == 50
    outcome = grader.grade(completions, timeout=OFFICIAL_TIMEOUT)  # gold 51.4 takes 40-60 s alone
    assert_clean(outcome)
    failed = {s: v["reason"] for s, v in outcome.verdicts.items() if not v["passed"]}
    assert failed == {}
    assert outcome.summary["total_subproblems_solved"] == 50
    assert outcome.summary["total_main_problems_solved"] == 15
