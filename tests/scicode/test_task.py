"""The ``scievals/scicode`` Inspect task end to end, its target sources, and the ``eval`` front door."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from scievals.artifacts import ArtifactError
from scievals.cli import _eval_args, main
from scievals.scicode import regenerate, targets
from scievals.scicode.dataset import find_step
from scievals.scicode.targets import ENV_H5, write_test_target
from scievals.scicode.targets_source import target_lookup
from scievals.scicode.task import scicode


@pytest.fixture(autouse=True)
def _no_official_h5(monkeypatch, tmp_path, dev_targets_file):
    """No official test_data.h5 anywhere (env var unset, cache lookups in an empty folder)."""
    monkeypatch.delenv(ENV_H5, raising=False)
    empty = tmp_path / "empty-cache"
    monkeypatch.setattr(targets, "cache_dir", lambda *parts: empty.joinpath(*parts))


def _metrics(log) -> dict[str, float]:
    return {k: m.value for s in log.results.scores for k, m in s.metrics.items()}


def _run(tmp_path, model: str, **kwargs):
    eval_kwargs = {k: kwargs.pop(k) for k in ("limit", "sample_id") if k in kwargs}
    log = inspect_eval(
        scicode(**kwargs),
        model=model,
        display="none",
        log_dir=str(tmp_path / "logs"),
        **eval_kwargs,
    )[0]
    assert log.status == "success", log.error
    return log


@pytest.mark.slow
def test_reference_full_dev_on_fresh_targets(tmp_path, monkeypatch, fresh_dev_targets):
    """Gold code (the reference model) scores 50/50 against targets regenerated in this session."""
    fresh, _ = fresh_dev_targets
    monkeypatch.setattr(regenerate, "dev_targets_path", lambda: fresh)
    log = _run(tmp_path, "scievals/reference", split="dev")
    assert len(log.samples) == 15
    assert _metrics(log) == {
        "percentage_main_problems_solved": 100.0,
        "percentage_subproblems_solved": 100.0,
        "total_main_problems_solved": 15.0,
        "total_subproblems_solved": 50.0,
        "main_problems_stderr": 0.0,
        "subproblems_stderr": 0.0,
    }
    failed = [
        (s.id, s.scores["scicode_scorer"].explanation)
        for s in log.samples
        if any(v != 1.0 for v in s.scores["scicode_scorer"].value.values())
    ]
    assert failed == []
    protocol = log.eval.metadata["protocol"]
    assert protocol["benchmark"] == "scicode"
    assert protocol["split"] == "dev"
    assert protocol["steps_counted"] == 50
    assert protocol["prompt"] == "single_turn"
    assert protocol["timeout"] == 300
    assert protocol["data_version"] == "scicode-69a8cfc; targets: dev regenerated from gold code"
    assert "extraction=inspect" in protocol["scorer"]
    assert protocol["sandbox"] in {f"scievals ({m})" for m in ("unshare", "userns", "rlimits-only")}
    assert protocol["runtime"]["numpy"]
    sample = next(s for s in log.samples if s.id == "10")
    assert sample.scores["scicode_scorer"].answer == "11/11 steps"
    assert [m["step"] for m in sample.scores["scicode_scorer"].metadata["steps"]] == [
        f"10.{k}" for k in range(1, 12)
    ]


def test_mockllm_scores_zero_without_errors(tmp_path):
    from scievals.offline import seed_tiktoken

    seed_tiktoken()
    log = _run(tmp_path, "mockllm/model", split="dev", limit=3)
    assert len(log.samples) == 3
    assert all(s.error is None for s in log.samples)
    metrics = _metrics(log)
    assert metrics["total_main_problems_solved"] == 0.0
    assert metrics["total_subproblems_solved"] == 0.0
    steps = [m for s in log.samples for m in s.scores["scicode_scorer"].metadata["steps"]]
    assert len(steps) == sum(len(s.metadata["steps"]) for s in log.samples)
    assert {m["reason_kind"] for m in steps} == {"syntax_error"}


def test_chat_protocol_reference(tmp_path):
    log = _run(
        tmp_path, "scievals/reference", split="dev", prompt_protocol="chat", sample_id=["19", "29"]
    )
    assert _metrics(log)["total_subproblems_solved"] == 5.0
    assert _metrics(log)["total_main_problems_solved"] == 2.0
    assert log.eval.metadata["protocol"]["prompt"] == "chat"
    messages = log.samples[0].messages
    assert messages[0].role == "system" and messages[1].text == log.samples[0].id


def test_gold_previous_steps_and_background(tmp_path):
    log = _run(
        tmp_path,
        "scievals/reference",
        split="dev",
        previous_steps="gold",
        provide_scientific_background=True,
        sample_id="38",
    )
    assert _metrics(log)["total_subproblems_solved"] == 3.0
    protocol = log.eval.metadata["protocol"]
    assert protocol["prompt"] == "single_turn + gold previous steps"
    assert protocol["background"] is True
    last_prompt = log.samples[0].messages[0].text
    assert find_step("38.2", "dev")[1].gold_code in last_prompt


def test_sandbox_limits_follow_step_timeout():
    default = scicode(split="dev").sandbox
    parity = scicode(split="dev", timeout=1800).sandbox
    assert default.type == parity.type == "scievals"
    assert (default.config.cpu_seconds, default.config.wall_seconds) == (600.0, 1800.0)
    assert (parity.config.cpu_seconds, parity.config.wall_seconds) == (1800.0, 1800.0)
    assert scicode(split="dev", timeout=1800).metadata["protocol"]["timeout"] == 1800
    assert scicode(split="dev", sandbox="docker").sandbox.type == "docker"


def test_gold_previous_steps_needs_dev():
    with pytest.raises(ValueError, match="previous_steps=gold needs split=dev"):
        scicode(split="test", previous_steps="gold")


def test_test_split_without_h5_is_a_clear_error():
    with pytest.raises(ArtifactError, match="--h5") as info:
        scicode(split="test")
    assert "test_data.h5" in str(info.value) and "--split dev" in str(info.value)
    with pytest.raises(ArtifactError, match="--h5"):
        scicode(include_dev_set=True)
    with pytest.raises(ArtifactError, match="--h5"):
        scicode(split="dev", targets="official")


def test_target_choice_errors(tmp_path):
    with pytest.raises(ArtifactError, match="--h5 .*absent.h5: no such file"):
        target_lookup("dev", "auto", str(tmp_path / "absent.h5"))
    with pytest.raises(ValueError, match="targets='bogus'"):
        target_lookup("dev", "bogus")  # type: ignore[arg-type]
    fake = _fake_official(tmp_path)
    with pytest.raises(ArtifactError, match="dev split only"):
        target_lookup("test", "regenerated", str(fake))


def _fake_official(tmp_path):
    """A stand-in for test_data.h5 holding one test step (77.1) and a dev step (1.1)."""
    path = tmp_path / "test_data.h5"
    _, step = find_step("77.1", "test")
    with h5py.File(path, "w") as h5:
        for number in range(1, len(step.tests) + 1):
            write_test_target(h5, "77.1", number, np.full(2, float(number)))
        for number in range(1, 4):
            write_test_target(h5, "1.1", number, "official")
    return path


def test_auto_targets_official_for_test_regenerated_for_dev(tmp_path, monkeypatch):
    fake = _fake_official(tmp_path)
    monkeypatch.setenv(ENV_H5, str(fake))
    lookup, note = target_lookup("all")
    assert note == "official h5 (test_data.h5) for test steps, dev regenerated from gold code"
    test_targets = lookup(find_step("77.1", "test")[1])
    assert [float(t[0]) for t in test_targets] == [
        float(n) for n in range(1, len(test_targets) + 1)
    ]
    dev_targets = lookup(find_step("1.1", "dev")[1])
    assert all(isinstance(t, np.ndarray) for t in dev_targets)  # regenerated, not "official"
    lookup, note = target_lookup("dev", "official")
    assert note == "official h5 (test_data.h5)"
    assert lookup(find_step("1.1", "dev")[1]) == ["official"] * 3
    task = scicode(include_dev_set=True)
    protocol = task.metadata["protocol"]
    assert (protocol["split"], protocol["steps_counted"]) == ("all", 338)
    assert len(task.dataset) == 80
    assert scicode(split="test", h5=str(fake)).metadata["protocol"]["steps_counted"] == 288


# ---- the front door ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "rest", "expected"),
    [
        (
            "scicode",
            ["--model", "openai/gpt-4o", "--split", "dev", "--limit", "2"],
            [
                "eval",
                "scievals/scicode",
                "--model",
                "openai/gpt-4o",
                "-T",
                "split=dev",
                "--limit",
                "2",
            ],
        ),
        (
            "scicode",
            ["--provide-scientific-background", "--prompt-protocol=chat"],
            [
                "eval",
                "scievals/scicode",
                "-T",
                "provide_scientific_background=true",
                "-T",
                "prompt_protocol=chat",
                "--model",
                "scievals/local",
            ],
        ),
        (
            "scicode",
            ["--h5", "/data/test_data.h5", "--limit=3", "--no-log-samples", "-T", "timeout=600"],
            [
                "eval",
                "scievals/scicode",
                "-T",
                "h5=/data/test_data.h5",
                "--limit",
                "3",
                "--no-log-samples",
                "-T",
                "timeout=600",
                "--model",
                "scievals/local",
            ],
        ),
        (
            "scicode",
            ["--sample-id", "1,3", "--model=scievals/reference", "--epochs", "2"],
            [
                "eval",
                "scievals/scicode",
                "--sample-id",
                "1,3",
                "--model",
                "scievals/reference",
                "--epochs",
                "2",
            ],
        ),
        (
            "inspect_evals/scicode",
            ["--model", "m/x", "--include-dev-set", "true"],
            ["eval", "inspect_evals/scicode", "--model", "m/x", "-T", "include_dev_set=true"],
        ),
    ],
    ids=["split-limit", "flags", "h5-and-T", "sample-id-epochs", "other-task"],
)
def test_eval_args(task, rest, expected):
    assert _eval_args(task, rest) == expected


def test_eval_args_timeout_is_the_step_timeout():
    """``--timeout`` on the front door is our tasks' per-execution timeout, not Inspect's."""
    assert _eval_args("scicode", ["--timeout", "600", "--model", "m/x"])[2:4] == [
        "-T",
        "timeout=600",
    ]


@pytest.mark.parametrize(
    ("rest", "message"),
    [(["--limit"], "--limit needs a value"), (["dev"], "unexpected argument 'dev'")],
)
def test_eval_args_errors(rest, message):
    with pytest.raises(SystemExit, match=message):
        _eval_args("scicode", rest)


def test_data_status(capsys, dev_targets_file):
    assert main(["data", "status"]) == 0
    out = capsys.readouterr().out
    assert "problems: 80 (official files verified, cached)" in out
    assert "official test_data.h5: absent" in out
    assert f"regenerated dev targets: {dev_targets_file}" in out
