"""A benchmark audit: which steps' tests accept a trivial answer.

A test that zeros, ones, an empty list, an identity matrix, the inputs returned unchanged or a
number copied from the prompt can pass does not measure the science of its step, and a score
that counts such a step overstates a model. ``audit`` writes each trivial answer as the step's
function (its own header, one ``return``), grades it through the real grader
(``scievals.scicode.grade.grade``) with gold code in the earlier steps (none on the test split,
which has no gold), and reports every step a
trivial answer passes, and every test that accepted one before the first that rejected it
(grading stops there, so later tests are not known). It needs the targets of the steps it
grades: the dev split's are regenerated here; the test split and SciCode-Verified need their
h5 files.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from scievals.artifacts import ArtifactError
from scievals.scicode.data.dataset import Dataset, Problem, Split, Step, load_problems
from scievals.scicode.data.targets_source import TargetSource
from scievals.scicode.grade import grade
from scievals.scicode.reference import gold_reply

FINDINGS = "weak_steps.json"
"""The audit of the dev split, shipped with the package (``scievals audit scicode --out``)."""
_SHAPE = re.compile(r"shape\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE]-?\d+)?(?![\w.])")
MAX_INPUTS = 4
MAX_CONSTANTS = 5


@dataclass(frozen=True)
class Trivial:
    """One trivial answer to a step: its name and the ``return`` expression of its body."""

    name: str
    body: str


@dataclass(frozen=True)
class Finding:
    """How a step's tests took one trivial answer."""

    step: str
    answer: str
    code: str
    tests: int
    passed: bool  # every test accepted it: the step passes with a trivial answer
    accepted: int  # tests that accepted it before the first that rejected it


def _function(step: Step) -> ast.FunctionDef | None:
    """The step's function as its header declares it; None for a class or an unreadable one."""
    try:
        tree = ast.parse(step.function_header + "\n" + (step.return_line or "    pass"))
    except SyntaxError:
        return None
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, ast.FunctionDef) else None


def _shapes(docstring: str, params: set[str]) -> list[str]:
    """Shapes the docstring states in terms of the inputs (``shape (n+1, 2)``)."""
    found = []
    for text in _SHAPE.findall(docstring):
        try:
            expr = ast.parse(f"({text},)" if "," not in text else f"({text})", mode="eval")
        except SyntaxError:
            continue
        names = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
        if names <= params and ast.unparse(expr) not in found:
            found.append(ast.unparse(expr))
    return found


def trivial_answers(step: Step) -> list[Trivial]:
    """The trivial answers tried on ``step`` (none for a class or an unreadable header)."""
    fn = _function(step)
    if fn is None:
        return []
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    docstring = ast.get_docstring(fn) or ""
    answers = [
        Trivial("zero", "0.0"),
        Trivial("one", "1.0"),
        Trivial("empty list", "[]"),
        Trivial("None", "None"),
    ]
    if params:
        # the first input that is an array (at run time), else the first input
        array = f"next((a for a in ({', '.join(params)},) if np.ndim(a) > 0), {params[0]})"
        answers += [
            Trivial("zeros like the first array input", f"np.zeros_like({array}, dtype=float)"),
            Trivial("ones like the first array input", f"np.ones_like({array}, dtype=float)"),
            Trivial(
                "identity of the size of the first array input",
                f"np.eye(np.shape(x)[0] if np.ndim(x := {array}) else int(x))",
            ),
        ]
    answers += [Trivial(f"the input {p} unchanged", p) for p in params[:MAX_INPUTS]]
    answers += [
        Trivial(f"zeros of the stated shape {shape}", f"np.zeros({shape})")
        for shape in _shapes(docstring, set(params))
    ]
    numbers = dict.fromkeys(_NUMBER.findall(step.description + "\n" + docstring))
    constants = [n for n in numbers if float(n) not in (0.0, 1.0)][:MAX_CONSTANTS]
    answers += [Trivial(f"the constant {n} from the prompt", n) for n in constants]
    return answers


def completion(step: Step, answer: Trivial) -> str:
    """A model's reply that is ``answer``: the step's own signature, one return."""
    fn = _function(step)
    assert fn is not None
    return f"```python\ndef {fn.name}({ast.unparse(fn.args)}):\n    return {answer.body}\n```"


def _accepted(verdict: dict[str, Any], tests: int) -> int:
    """Tests that accepted the answer: all when it passed, else those before the failing one."""
    if verdict["passed"]:
        return tests
    reason = str(verdict.get("reason") or "")
    if reason.startswith("after its tests"):
        return tests
    found = re.match(r"test (\d+):", reason) or re.search(r"\btest (\d+) did not run", reason)
    return int(found[1]) - 1 if found else 0


@dataclass(frozen=True)
class _Job:
    problem: Problem
    step: Step
    answer: Trivial


def _rounds(problems: Sequence[Problem], steps: set[str] | None) -> list[list[_Job]]:
    """Jobs grouped so that each grading call holds at most one audited step per problem (its
    earlier steps carry gold code, its later ones are not graded)."""
    queues = []
    for problem in problems:
        queue = [
            _Job(problem, step, answer)
            for step in problem.scored_steps
            if steps is None or step.step_id in steps
            for answer in trivial_answers(step)
        ]
        if queue:
            queues.append(queue)
    depth = max((len(q) for q in queues), default=0)
    return [[q[i] for q in queues if i < len(q)] for i in range(depth)]


async def audit(
    split: Split = "dev",
    dataset: Dataset = "original",
    steps: Iterable[str] | None = None,
    h5: str | None = None,
    timeout: int | None = None,
    source: str = "package",
    progress: Callable[[int, int], None] | None = None,
) -> list[Finding]:
    """Every trivial answer on every scored step of ``split`` (or ``steps``), graded.

    Raises ``ArtifactError`` (one line) when the split's targets are not here.
    """
    if missing := TargetSource(split, "auto", h5, dataset).missing():
        raise ArtifactError(missing)
    problems = load_problems(split, source, dataset)
    wanted = set(steps) if steps is not None else None
    rounds = _rounds(problems, wanted)
    findings: list[Finding] = []
    for number, jobs in enumerate(rounds, 1):
        completions: dict[str, str] = {}
        decided: dict[str, dict[str, Any]] = {}
        for job in jobs:
            for earlier in job.problem.earlier(job.step):
                if earlier.scored:  # pre-supplied steps get their official code from grade()
                    completions[earlier.step_id] = gold_reply(earlier) or ""
                    decided[earlier.step_id] = {"step": earlier.step_id, "passed": True}
            completions[job.step.step_id] = completion(job.step, job.answer)
        verdicts, _ = await grade(
            completions,
            split=split,
            h5=h5,
            timeout=timeout,
            dataset=dataset,
            source=source,
            decided=decided,
        )
        by_step = {v["step"]: v for v in verdicts}
        for job in jobs:
            verdict = by_step[job.step.step_id]
            tests = len(job.step.tests)
            findings.append(
                Finding(
                    job.step.step_id,
                    job.answer.name,
                    f"return {job.answer.body}",
                    tests,
                    bool(verdict["passed"]),
                    _accepted(verdict, tests),
                )
            )
        if progress is not None:
            progress(number, len(rounds))
    return findings


def weak(findings: Sequence[Finding]) -> dict[str, list[Finding]]:
    """Step -> the trivial answers its tests accepted (whole step or some tests), by step."""
    out: dict[str, list[Finding]] = {}
    for f in findings:
        if f.passed or f.accepted:
            out.setdefault(f.step, []).append(f)
    return dict(sorted(out.items(), key=lambda item: [int(n) for n in item[0].split(".")]))


def describe(finding: Finding) -> str:
    """One line: what the trivial answer is and how far the tests took it."""
    if finding.passed:
        how = f"passes all {finding.tests} tests"
    else:
        first = "test 1" if finding.accepted == 1 else f"tests 1-{finding.accepted}"
        verb = "accepts" if finding.accepted == 1 else "accept"
        how = f"{first} of {finding.tests} {verb} it (then one rejects it)"
    return f"{finding.step}: {finding.answer} ({finding.code}) {how}"


def to_json(findings: Sequence[Finding], about: dict[str, Any]) -> str:
    """The audit as the report reads it: what was audited, and the weak steps' findings."""
    flagged = weak(findings)
    record = {
        **about,
        "answers_graded": len(findings),
        "steps_audited": len({f.step for f in findings}),
        "weak": {step: [asdict(f) for f in found] for step, found in flagged.items()},
    }
    return json.dumps(record, indent=1) + "\n"


@cache
def shipped_audit() -> dict[str, list[dict[str, Any]]]:
    """The weak steps of the audit shipped with the package (step -> findings)."""
    text = files("scievals.scicode").joinpath(FINDINGS).read_text(encoding="utf-8")
    return json.loads(text)["weak"]
