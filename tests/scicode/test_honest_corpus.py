"""The grader against the official rule on honest, unusual code (``honest_corpus.py``).

Every case runs twice: in the official layout with the original package (``official_runner``),
whose exit status is the official verdict, and through ``scievals.scicode.grade.grade``, the API
behind ``scievals grade scicode``. The verdicts must agree step for step. The only exception is
a case whose records exceed the grader's stated size bound: it may fail, as ``too_large`` with a
reason that names the bound. A completions file holds one completion per step and a step's
program runs the code of the earlier steps, so the cases are graded in batches of at most one
case per problem, each with the gold code of its problem's earlier steps.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from timing import OFFICIAL_TIMEOUT

from scievals.scicode.data.dataset import find_step, load_problems
from scievals.scicode.extract import extract_code, header_name, top_level_names
from scievals.scicode.grade import grade

from .conftest import gold
from .honest_corpus import CASES, KINDS, Case

MIN_OFFICIAL_PASSES = 80
"""The official rule must pass this many cases, or agreement would say little."""
BOUND = re.compile(r"\d[\d,.]*\s*(?:[KMG]i?B|bytes)\b")
"""How a reason names a size bound: a number of bytes."""


def batches(cases: list[Case]) -> list[list[Case]]:
    """The k-th case of every problem goes to batch k: one case per problem in a batch."""
    by_problem: dict[str, list[Case]] = defaultdict(list)
    for item in cases:
        by_problem[item.problem].append(item)
    rounds = max(len(group) for group in by_problem.values())
    return [[g[k] for g in by_problem.values() if k < len(g)] for k in range(rounds)]


def completions(batch: list[Case]) -> dict[str, str]:
    """Each case's completion, and the gold code of every earlier step of its problem."""
    out = {}
    for item in batch:
        problem, step = find_step(item.step, "dev")
        for earlier in problem.earlier(step):
            out[earlier.step_id] = gold(earlier.step_id)
        out[item.step] = item.completion()
    return out


def extracted(replies: dict[str, str]) -> dict[str, str]:
    """The code the official layout runs for each dev step: what our extraction keeps."""
    return {
        s.step_id: extract_code(replies.get(s.step_id, ""), s.function_header)
        for p in load_problems("dev")
        for s in p.steps
    }


# ---- the corpus itself (no sandbox) -------------------------------------------------------------


def test_corpus_covers_every_dev_problem():
    problems = {p.problem_id for p in load_problems("dev")}
    counts = Counter(item.problem for item in CASES)
    assert set(counts) == problems, problems - set(counts)
    assert len(CASES) >= 90
    assert len({item.id for item in CASES}) == len(CASES)
    assert sum(item.over_size_bound for item in CASES) >= 1
    assert {item.kind for item in CASES} == set(KINDS)


@pytest.mark.parametrize("item", CASES, ids=lambda item: item.id)
def test_case_is_its_own_code_for_its_step(item):
    problem, step = find_step(item.step, "dev")
    assert item.id.startswith(f"{item.step}-")
    assert item.why and "```" not in item.code
    code = extract_code(item.completion(), step.function_header)
    assert code == item.code, "the extraction must keep the whole case"
    assert header_name(step.function_header) in (top_level_names(code) or set())
    assert code.strip() != (step.gold_code or "").strip()


def test_batches_hold_one_case_per_problem():
    seen = []
    for batch in batches(CASES):
        assert len({item.problem for item in batch}) == len(batch)
        seen.extend(batch)
    assert sorted(item.id for item in seen) == sorted(item.id for item in CASES)


# ---- the differential run -----------------------------------------------------------------------


def official_batch(official_runner, batch: list[Case], replies: dict[str, str]):
    """The official verdicts of a batch's cases, and the errors of those that fail."""
    errors: dict[str, str] = {}
    return official_runner([c.step for c in batch], extracted(replies), errors), errors


def allowed(item: Case, row: dict[str, Any]) -> bool:
    """Same verdict, or a case over the size bound failing as ``too_large`` naming the bound."""
    if row["ours"] == row["official"]:
        return True
    return (
        item.over_size_bound
        and row["reason_kind"] == "too_large"
        and BOUND.search(row["reason"] or "") is not None
    )


def describe(item: Case, row: dict[str, Any]) -> str:
    official = "pass" if row["official"] else f"fail {row['official_error']}"
    ours = "pass" if row["ours"] else f"fail [{row['reason_kind']}] {row['reason']}"
    return f"{item.id} ({item.why}): official {official}; ours {ours}"


@pytest.mark.slow
def test_verdicts_match_official_rule(official_runner):
    """One test, so that ``-n 2`` does not run the corpus twice (about 3-5 minutes on 2 cores)."""
    started = time.monotonic()
    plan = [(batch, completions(batch)) for batch in batches(CASES)]
    rows: dict[str, dict[str, Any]] = {}
    # The official programs run batch after batch in a worker thread (a step's program file is
    # reused) while the grader grades here.
    with ThreadPoolExecutor(1) as worker:
        futures = [worker.submit(official_batch, official_runner, *job) for job in plan]
        try:
            for (batch, replies), future in zip(plan, futures, strict=True):
                verdicts, _ = asyncio.run(grade(replies, split="dev", timeout=OFFICIAL_TIMEOUT))
                ours = {v["step"]: v for v in verdicts}
                official, errors = future.result()
                for item in batch:
                    rows[item.id] = {
                        "official": official[item.step],
                        "ours": ours[item.step]["passed"],
                        "reason": ours[item.step]["reason"],
                        "reason_kind": ours[item.step]["reason_kind"],
                        "official_error": errors.get(item.step, "").strip().splitlines()[-1:],
                    }
        finally:
            for future in futures:
                future.cancel()
    passed = sum(row["official"] for row in rows.values())
    wrong = [describe(item, rows[item.id]) for item in CASES if not allowed(item, rows[item.id])]
    print(
        f"\nhonest corpus: {len(CASES)} cases in {time.monotonic() - started:.0f} s, "
        f"{passed} pass the official rule, {len(wrong)} disagree",
        *wrong,
        sep="\n  ",
    )
    assert passed >= MIN_OFFICIAL_PASSES, f"only {passed} of {len(CASES)} pass the official rule"
    assert not wrong, "verdicts differ from the official rule:\n" + "\n".join(wrong)
