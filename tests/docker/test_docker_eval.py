"""Verdict parity across providers: the same completions, the same verdicts, in ``--sandbox
scievals`` and under ``--sandbox docker`` (our compose file, the fleet of ``docker_pool.py``).

- the reference model (gold code) over the dev split as an eval: 15/15 and 50/50, and every
  step's verdict equal to our sandbox's grading of the same code;
- the official-parity cases and the cheats of ``tests/scicode/test_grade.py`` (their tables,
  imported): the verdict and its reason kind as in our sandbox;
- SciBench's python setting runs the model's code in the container.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from tests.scicode import test_grade as official
from tests.scicode import test_hostile_grading as hostile

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("runtime_image", "dev_targets")]


def _grade(completions: dict[str, str], sandbox: str) -> dict[str, dict]:
    from scievals.scicode.grade import grade

    verdicts, _ = asyncio.run(grade(completions, timeout=120, sandbox=sandbox))
    return {v["step"]: v for v in verdicts}


def _brief(verdicts: dict[str, dict]) -> dict[str, tuple[bool, str | None]]:
    return {s: (v["passed"], v["reason_kind"]) for s, v in verdicts.items()}


def test_reference_dev_in_docker_matches_our_sandbox(tmp_path):
    from scievals.sandbox.image import compose_file
    from scievals.scicode.data.dataset import load_problems
    from scievals.scicode.task import scicode

    log = inspect_eval(
        scicode(split="dev", sandbox="docker"),
        model="scievals/reference",
        display="none",
        log_dir=str(tmp_path),
    )[0]
    assert log.status == "success", log.error
    metrics = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert metrics["total_main_problems_solved"] == 15.0
    assert metrics["total_subproblems_solved"] == 50.0
    assert log.eval.sandbox.type == "scievals-docker"  # our fleet of Inspect's containers
    assert Path(log.eval.sandbox.config).resolve() == compose_file(("2024",))  # ours
    assert log.eval.metadata["protocol"]["sandbox"].startswith("docker")
    in_docker = {
        v["step"]: v for s in log.samples for v in s.scores["scicode_scorer"].metadata["steps"]
    }
    gold = {
        s.step_id: hostile.fence(s.gold_code)
        for p in load_problems("dev")
        for s in p.scored_steps
        if s.gold_code
    }
    assert set(in_docker) == set(gold)
    assert _brief(in_docker) == _brief(_grade(gold, "scievals"))


@pytest.fixture(scope="module")
def docker_official():
    honest = {s: c for s, (c, _, _) in official.HONEST.items()}
    cheats = {s: c for s, (c, _) in official.CHEATS.items()}
    return _grade(honest, "docker"), _grade(cheats, "docker")


@pytest.mark.parametrize("step", list(official.HONEST))
def test_official_parity_cases_in_docker(docker_official, step):
    _, passed, kind = official.HONEST[step]
    verdict = docker_official[0][step]
    assert (verdict["passed"], verdict["reason_kind"]) == (passed, kind), verdict


@pytest.mark.parametrize("step", list(official.CHEATS))
def test_cheats_fail_in_docker(docker_official, step):
    hostile.assert_fails_clearly(docker_official[1][step])


def test_scibench_python_runs_in_the_container(tmp_path):
    from tests.scibench.scibench_helpers import DATA

    if not (DATA / "main" / "dataset").is_dir():
        pytest.skip(f"SciBench data not found at {DATA}")
    from scievals.scibench.task import scibench

    log = inspect_eval(
        scibench(setting="python", sandbox="docker", data_dir=str(DATA / "main")),
        model="scievals/reference",
        limit=3,
        display="none",
        log_dir=str(tmp_path),
    )[0]
    assert log.status == "success", log.error
    assert log.eval.sandbox.type == "scievals-docker"
    execs = [
        e
        for s in log.samples
        for e in s.events
        if e.event == "sandbox" and e.action == "exec" and "python3" in (e.cmd or "")
    ]
    assert len(execs) >= 3, "the model's code did not run in the sandbox"
    assert all(e.result == 0 for e in execs), [e.output for e in execs]
    accuracy = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert accuracy["accuracy"] == 1.0
