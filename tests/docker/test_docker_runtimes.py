"""Several scoring runtimes under Docker: the image of each runtime serves its own compose
service, and ``scievals grade --sandbox docker`` gives each problem containers of its own."""

from __future__ import annotations

import pytest

from scievals.aio import run_sync
from scievals.scicode.grade import grade
from tests.scicode.conftest import gold
from tests.scicode.test_runtimes import NUMPY_2_ONLY, SCIPY_OLD_ONLY, with_line

pytestmark = pytest.mark.slow


def test_a_step_passes_in_the_runtime_that_can_run_it(both_images, dev_targets):
    completions = {"1.1": with_line(NUMPY_2_ONLY), "3.1": gold("3.1")}
    verdicts, summary = run_sync(
        grade(completions, split="dev", runtimes="2024,2025", sandbox="docker", timeout=120)
    )
    by_step = {v["step"]: v for v in verdicts}
    assert by_step["1.1"]["passed"] and by_step["1.1"]["runtime"] == "2025"
    assert by_step["1.1"]["runtimes"]["2024"]["reason_kind"] == "exception"
    assert by_step["3.1"]["passed"] and list(by_step["3.1"]["runtimes"]) == ["2024"]
    assert summary["added_by_later_runtimes"] == {"2025": 1}
    reverse, _ = run_sync(
        grade(
            {"1.1": with_line(SCIPY_OLD_ONLY)}, split="dev", runtimes="2025,2024", sandbox="docker"
        )
    )
    assert reverse[0]["passed"] and reverse[0]["runtime"] == "2024"
    assert "simps" in reverse[0]["runtimes"]["2025"]["reason"]


def test_each_problem_gets_containers_of_its_own(runtime_image, dev_targets):
    """1.1 leaves a marker in its container's /tmp while 3.1 (another problem, graded at the
    same time) watches for it for 15 s: in a container of its own it never sees it."""
    marker = "    open('/tmp/scievals-marker', 'w').write('x')\n    # Initialize residual vector"
    watch = (
        "import os, time\n"
        "for _ in range(150):\n"
        "    assert not os.path.exists('/tmp/scievals-marker'), 'saw the other problem'\n"
        "    time.sleep(0.1)\n"
    )
    probe = gold("3.1").replace("```python\n", "```python\n" + watch, 1)
    verdicts, _ = run_sync(
        grade({"1.1": with_line(marker), "3.1": probe}, split="dev", sandbox="docker", timeout=120)
    )
    assert all(v["passed"] for v in verdicts), verdicts


def test_the_log_names_each_runtimes_image(both_images):
    """Protocol and task metadata say which image served each runtime (by pins hash, which is
    the same on every machine that builds those pins, and by this machine's image id)."""
    from scievals.sandbox.runtime import pins_hash
    from scievals.scicode.task import scicode

    task = scicode(split="dev", sandbox="docker", runtimes="2024,2025")
    assert task.metadata["protocol"]["sandbox"] == (
        f"docker (scievals-runtime:2024 pins {pins_hash('2024')}, "
        f"scievals-runtime:2025 pins {pins_hash('2025')})"
    )
    images = task.metadata["sandbox_images"]
    assert [(i["runtime"], i["image"], i["pins_hash"]) for i in images] == [
        ("2024", "scievals-runtime:2024", pins_hash("2024")),
        ("2025", "scievals-runtime:2025", pins_hash("2025")),
    ]
    assert all(i["id"] for i in images)


def test_eval_level_override_from_the_checkout_runs_our_compose(
    tmp_path, monkeypatch, runtime_image
):
    """``inspect eval scievals/scibench -T setting=python --sandbox docker`` from the checkout's
    root: Inspect finds compose.yaml there (ours), so the model's code runs in our image."""
    from pathlib import Path

    from inspect_ai import eval as inspect_eval

    from scievals.scibench.task import scibench
    from tests.scibench.scibench_helpers import DATA

    if not (DATA / "main" / "dataset").is_dir():
        pytest.skip(f"SciBench data not found at {DATA}")
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    [log] = inspect_eval(
        scibench(setting="python", data_dir=str(DATA / "main")),
        model="scievals/reference",
        sandbox="docker",
        limit=2,
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    assert (log.eval.sandbox.type, log.eval.sandbox.config) == ("docker", "compose.yaml")
    from scievals.sandbox.image import compose_file

    assert Path("compose.yaml").resolve() == Path(compose_file(("2024",))).resolve()
    probes = [
        e
        for s in log.samples
        for e in s.events
        if e.event == "sandbox" and e.action == "exec" and "python3" in (e.cmd or "")
    ]
    assert probes and all(e.result == 0 for e in probes)


def test_no_daemon_is_one_line(tmp_path, monkeypatch, capsys):
    """Without a daemon that answers, ``grade --sandbox docker`` stops with one line, exit 2."""
    from scievals.cli import main

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/absent.sock")
    source = tmp_path / "c.jsonl"
    source.write_text('{"step": "1.1", "completion": "x"}\n')
    assert main(["grade", "scicode", str(source), "--split", "dev", "--sandbox", "docker"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("scievals: error: sandbox docker could not start")
