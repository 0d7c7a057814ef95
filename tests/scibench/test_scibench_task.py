"""End-to-end Inspect runs of ``scievals/scibench`` with scripted models (no network)."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage, ContentImage
from inspect_ai.util import store

from scievals.inputs import InputError
from scievals.models.reference import REPLY_KEY
from scievals.scibench import prompts
from scievals.scibench.task import scibench

from .scibench_helpers import DATA, last_user_text, needs_data, scripted

pytestmark = needs_data


def _reference_reply(messages: list[ChatMessage]) -> str:
    """What ``scievals/reference`` answers: the reply the task left in the sample's store."""
    return store().get(REPLY_KEY)


def _run(tmp_path, model=None, limit: int | None = None, **params):
    task = scibench(data_dir=str(DATA), **params)
    model = model or "scievals/reference"
    log = inspect_eval(task, model=model, display="none", log_dir=str(tmp_path), limit=limit)[0]
    assert log.status == "success", log.error
    return log


def _wrong(log, scorer: str) -> list[str]:
    return sorted(str(s.id) for s in log.samples if s.scores[scorer].value != 1)


def test_reference_zero_shot_two_books(tmp_path):
    log = _run(tmp_path, setting="zero", books="diff,thermo")
    assert len(log.samples) == 116
    assert _wrong(log, "robust") == []
    assert _wrong(log, "faithful") == ["diff-18", "diff-26", "diff-33", "diff-38"]
    sample = log.samples[0]
    assert sample.id == "diff-0"
    assert {"book", "subject", "index", "has_solution"} <= set(sample.metadata)
    assert sample.metadata["has_solution"] is False
    score = sample.scores["robust"]
    assert score.answer is not None and {"rule", "extracted"} <= set(score.metadata)
    protocol = log.eval.metadata["protocol"]
    assert protocol["benchmark"] == "scibench"
    assert (protocol["split"], protocol["steps_counted"], protocol["prompt"]) == (
        "textbook",
        116,
        "zero",
    )
    assert protocol["data_version"].startswith("main")
    metrics = {s.name: {k: m.value for k, m in s.metrics.items()} for s in log.results.scores}
    assert metrics["faithful"]["diff"] == pytest.approx(46 / 50)
    assert metrics["faithful"]["accuracy"] == pytest.approx(112 / 116)
    assert metrics["faithful"]["macro"] == pytest.approx((46 / 50 + 1) / 2)
    assert metrics["robust"]["math"] == 1.0
    assert metrics["robust"]["upper"] == pytest.approx(1.0) and metrics["robust"]["lower"] < 1
    assert metrics["faithful"]["unextracted"] == pytest.approx(2 / 116)  # the U+2212 golds


@pytest.mark.slow
def test_reference_all_580_main(tmp_path):
    log = _run(tmp_path, setting="zero")
    assert len(log.samples) == 580
    assert _wrong(log, "robust") == []
    assert _wrong(log, "faithful") == ["diff-18", "diff-26", "diff-33", "diff-38"]


@pytest.mark.slow
def test_reference_all_583_old(tmp_path):
    """old: fund[24] has an empty gold (a data error); three texts repeat with other golds
    (chemmc-19, stat-20, stat-66), and the reference answers each with its own."""
    log = _run(tmp_path, setting="zero", version="old")
    assert len(log.samples) == 583
    assert _wrong(log, "robust") == ["fund-24"]
    diff = ["diff-18", "diff-26", "diff-33", "diff-38"]
    assert _wrong(log, "faithful") == sorted(["fund-24", *diff])


def test_zero_cot_sends_stage_two(tmp_path):
    seen: list[list[ChatMessage]] = []

    def reply(messages: list[ChatMessage]) -> str:
        seen.append(messages)
        text = last_user_text(messages)
        if text.endswith("step by step."):
            return "  First, we compute things.  "
        return _reference_reply(messages)

    log = _run(tmp_path, model=scripted(reply), setting="zero_cot", books="quan")
    assert _wrong(log, "robust") == []
    stage2 = [m for m in seen if last_user_text(m).endswith("Therefore, the answer is")]
    assert len(stage2) == 33
    assert [m.role for m in stage2[0]] == ["system", "user"]
    assert "A: Let's think step by step.First, we compute things.Therefore, the answer is" in (
        last_user_text(stage2[0])
    )


@pytest.mark.parametrize(
    ("params", "roles", "last_prefix"),
    [
        ({"setting": "zero_nosys"}, ["user"], "Q: "),
        ({"setting": "zero"}, ["system", "user"], "Q: "),
        ({"setting": "few"}, ["system"] + ["user", "assistant"] * 3 + ["user"], "Problem 4.   "),
        ({"setting": "few", "version": "old"}, ["system"] + ["user", "assistant"] * 5 + ["user"],
         "Problem 6.   "),
        ({"setting": "few_cot", "shots": 2}, ["system"] + ["user", "assistant"] * 2 + ["user"],
         "Problem 3.   "),
        ({"setting": "python"}, ["system"] + ["user", "assistant"] * 4 + ["user"], "Problem 6.   "),
    ],
)  # fmt: skip
def test_sample_messages_follow_the_official_layout(params, roles, last_prefix):
    task = scibench(data_dir=str(DATA), books="atkins", sandbox="local", **params)
    sample = task.dataset[3]
    assert [m.role for m in sample.input] == roles
    assert sample.input[-1].text.startswith(last_prefix)
    if params["setting"] == "python":
        assert sample.input[0].text == prompts.SYS_TOOL_PYTHON
        assert "python language for Problem 1: ```" in sample.input[2].text


def test_thermo_tool_prompt_has_three_examples():
    task = scibench(data_dir=str(DATA), books="thermo", setting="python", sandbox="local")
    assert [m.role for m in task.dataset[0].input].count("assistant") == 3


def test_wolfram_without_kernel_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("WOLFRAM_KERNEL", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(InputError, match="setting=wolfram needs"):
        scibench(data_dir=str(DATA), setting="wolfram")


def test_python_runs_in_the_sandbox_faithful_and_robust(tmp_path):
    def reply(messages: list[ChatMessage]) -> str:
        # a tagged fence: NameError in the official exec, fine once the tag is stripped
        value = _reference_reply(messages).split("print(")[1].split(")")[0]
        return f"Solution.\n```python\nprint('step 1')\nprint({value})\n```\n"

    log = _run(
        tmp_path, model=scripted(reply), setting="python", books="quan", sandbox="local", limit=4
    )
    for sample in log.samples:
        assert sample.scores["faithful"].value == 0
        assert sample.scores["faithful"].metadata["rule"] == "program-failed"
        assert sample.scores["robust"].value == 1
    assert log.eval.metadata["protocol"]["sandbox"] == "local"


def test_python_reference_program(tmp_path):
    log = _run(tmp_path, setting="python", books="thermo", sandbox="local", limit=4)
    assert _wrong(log, "faithful") == [] and _wrong(log, "robust") == []


def test_errata_overlay_is_explicit(tmp_path):
    log = _run(tmp_path, setting="zero", books="atkins", errata=True, scorer="robust")
    assert _wrong(log, "robust") == ["atkins-51"]  # the reference states the published gold
    score = next(s for s in log.samples if s.id == "atkins-51").scores["robust"]
    assert "P1.27(a)" in score.metadata["errata"] and score.metadata["published_gold"] == "0.00017"
    assert log.eval.metadata["protocol"]["scorer"] == "robust + errata"


def test_multimodal_sends_images(tmp_path):
    def reply(messages: list[ChatMessage]) -> str:
        assert any(isinstance(c, ContentImage) for c in messages[-1].content)
        return _reference_reply(messages)

    log = _run(tmp_path, model=scripted(reply), subset="multimodal", books="stat,matter,atkins")
    assert len(log.samples) == 4
    assert _wrong(log, "robust") == []
    assert log.eval.metadata["protocol"]["prompt"] == "zero + image (native vision)"


@pytest.mark.slow
def test_multimodal_all_177(tmp_path):
    log = _run(tmp_path, subset="multimodal", setting="zero_cot")
    assert len(log.samples) == 177
    assert _wrong(log, "robust") == []
    assert _wrong(log, "faithful") == ["img-30", "img-31", "img-42", "img-61"]  # fraction golds


def test_solutions_subset_skips_the_examples():
    task = scibench(data_dir=str(DATA), books="diff", setting="few", subset="solutions")
    assert [s.id for s in task.dataset] == ["sol-diff-3", "sol-diff-4"]
    assert all(s.metadata["has_solution"] for s in task.dataset)


def test_epochs_that_disagree_are_averaged(tmp_path):
    """Two epochs, the gold then no number: accuracy and unextracted (``scibench_epochs``) are
    1/2 on every problem, not epoch 1's values (Inspect's reducers keep epoch 1's metadata)."""
    calls: dict[str, int] = {}

    def reply(messages: list[ChatMessage]) -> str:
        text = last_user_text(messages)
        calls[text] = calls.get(text, 0) + 1
        return _reference_reply(messages) if calls[text] == 1 else "I do not know."

    task = scibench(data_dir=str(DATA), books="quan", scorer="robust")
    log = inspect_eval(
        task, model=scripted(reply), epochs=2, limit=3, display="none", log_dir=str(tmp_path)
    )[0]
    assert log.status == "success", log.error
    assert log.eval.config.epochs_reducer == ["scibench_epochs"]
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    assert metrics["accuracy"] == pytest.approx(0.5)
    assert metrics["unextracted"] == pytest.approx(0.5)
