"""The ``scievals/scicode`` Inspect task end to end, its target sources, and the ``eval`` front door."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from scievals.artifacts import ArtifactError
from scievals.cli import _eval_args, main
from scievals.offline import seed_tiktoken
from scievals.scicode import regenerate
from scievals.scicode.data import targets
from scievals.scicode.data.dataset import find_step
from scievals.scicode.data.targets import ENV_H5, write_test_target
from scievals.scicode.data.targets_source import NO_H5, target_lookup
from scievals.scicode.regenerate import ensure_dev_targets
from scievals.scicode.task import scicode


@pytest.fixture(autouse=True)
def _no_official_h5(monkeypatch, tmp_path, dev_targets_file):
    """No official test_data.h5 anywhere (env var unset, cache lookups in an empty folder)."""
    monkeypatch.delenv(ENV_H5, raising=False)
    empty = tmp_path / "empty-cache"
    monkeypatch.setattr(targets, "cache_dir", lambda *parts: empty.joinpath(*parts))


def _metrics(log) -> dict[str, float]:
    return {k: m.value for s in log.results.scores for k, m in s.metrics.items()}


def _run(tmp_path, model: str, status: str = "success", **kwargs):
    eval_kwargs = {k: kwargs.pop(k) for k in ("limit", "sample_id", "score") if k in kwargs}
    log = inspect_eval(
        scicode(**kwargs),
        model=model,
        display="none",
        log_dir=str(tmp_path / "logs"),
        **eval_kwargs,
    )[0]
    assert log.status == status, log.error
    return log


def _open_h5_files() -> int:
    return h5py.h5f.get_obj_count(h5py.h5f.OBJ_ALL, h5py.h5f.OBJ_FILE)


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
        "main_pass_at_1": 100.0,
        "sub_pass_at_1": 100.0,
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
    assert scicode(split="dev", sandbox="docker").sandbox.type == "scievals-docker"


def test_gold_previous_steps_needs_dev():
    with pytest.raises(ValueError, match="previous_steps=gold needs split=dev"):
        scicode(split="test", previous_steps="gold")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"targets": "bogus"}, "targets"),
        ({"prompt_protocol": "multi_turn"}, "prompt_protocol"),
        ({"extraction": "last"}, "extraction"),
        ({"timeout": 0}, "timeout"),
        ({"split": "test", "targets": "regenerated"}, "dev split only"),
    ],
)
def test_bad_parameters_fail_at_build(params, message):
    with pytest.raises(ValueError, match=message):
        scicode(**{"split": "dev", **params})


def test_building_has_no_side_effects(monkeypatch, tmp_path):
    """No regeneration, no file opened, whatever is missing: only the problem files are read."""
    monkeypatch.setattr(regenerate, "dev_targets_path", lambda: tmp_path / "absent.h5")
    monkeypatch.setattr(regenerate, "ensure_dev_targets", lambda *a: pytest.fail("regenerated"))
    before = _open_h5_files()
    for params, problems in (
        ({"split": "dev"}, 15),
        ({"split": "test"}, 65),
        ({"include_dev_set": True}, 80),
    ):
        assert len(scicode(**params).dataset) == problems
    assert _open_h5_files() == before
    assert not (tmp_path / "absent.h5").exists()


def test_test_split_without_h5_warns_at_build(caplog):
    with caplog.at_level("WARNING"):
        task = scicode(split="test")
    assert len(task.dataset) == 65
    assert NO_H5 in caplog.text and "--no-score" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        scicode(split="dev")
    assert NO_H5 not in caplog.text


def test_no_score_needs_no_targets(tmp_path):
    """Generate here, score later where the targets are (``inspect score``)."""
    seed_tiktoken()
    log = _run(tmp_path, "mockllm/model", split="test", limit=1, score=False)
    assert not log.samples[0].scores
    assert log.samples[0].store["scicode"]["completions"]


def test_scoring_without_targets_stops_with_one_line(tmp_path):
    seed_tiktoken()
    assert "\n" not in NO_H5
    log = _run(tmp_path, "mockllm/model", status="error", split="test", limit=1)
    assert NO_H5 in log.error.message
    log = _run(tmp_path, "mockllm/model", status="error", split="dev", targets="official", limit=1)
    assert NO_H5 in log.error.message
    missing = tmp_path / "absent.h5"
    log = _run(tmp_path, "mockllm/model", status="error", split="test", h5=str(missing), limit=1)
    assert f"--h5 {missing}: no such file" in log.error.message


def test_dev_targets_found_lazily_once_and_closed(tmp_path, monkeypatch, dev_targets_file):
    """The regenerated file is asked for when scoring starts, once, and no file stays open."""
    calls = []

    def ensure(progress=None):
        calls.append(progress)
        return dev_targets_file

    monkeypatch.setattr(regenerate, "ensure_dev_targets", ensure)
    task = scicode(split="dev")
    assert calls == []
    before = _open_h5_files()
    log = inspect_eval(
        task,
        model="scievals/reference",
        sample_id=["19", "29"],
        display="none",
        log_dir=str(tmp_path / "logs"),
    )[0]
    assert log.status == "success", log.error
    assert _metrics(log)["total_subproblems_solved"] == 5.0
    assert len(calls) == 1
    assert _open_h5_files() == before


def test_log_header_holds_small_scorer_options(tmp_path):
    """The scorer is recorded by name with the config it rebuilds itself from (``inspect score``):
    small knobs as plain JSON, the defaults that depend on others resolved."""
    seed_tiktoken()
    log = _run(tmp_path, "mockllm/model", split="dev", limit=1, timeout=1800, score=False)
    [scorer] = log.eval.scorers
    assert scorer.name == "scicode_scorer"
    assert scorer.options == {
        "config": {
            "dataset": "original",
            "split": "dev",
            "provide_scientific_background": False,
            "prompt_protocol": "single_turn",
            "previous_steps": "model",
            "extraction": "inspect",
            "timeout": 1800,
            "h5": None,
            "targets": "auto",
            "source": "package",
            "sandbox": "scievals",
            "step_count": "official",
            "runtimes": ["2024"],
            "all_runtimes": False,
            "agent": None,
            "agent_limits": None,
        }
    }
    assert log.eval.config.epochs_reducer == ["scicode_epochs"]
    assert log.plan.steps[0].solver == "scievals/single_turn_solver"


def test_target_lookup_explicit_h5_missing(tmp_path):
    with pytest.raises(ArtifactError, match="--h5 .*absent.h5: no such file"):
        target_lookup("dev", "official", str(tmp_path / "absent.h5"))


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
    lookup, note = target_lookup("all", regenerate=ensure_dev_targets)
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
