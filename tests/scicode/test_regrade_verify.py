"""``scievals regrade --verify LOG`` on a real scievals log and on copies of it edited by hand.

The log is made once by a real Inspect eval (``scievals/reference``, the gold answers, on three
dev problems: four steps); each edited copy is written back with Inspect's own
``write_eval_log``. An untouched log verifies clean; each edit is caught with one line per
difference and exit status 1; a hostile log fails only what is bad.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log
from verify_cli import differences, edited, sample_of, verify

from scievals import inputs
from scievals.scicode.data.dataset import find_step
from scievals.scicode.solver import STORE_KEY, extract
from scievals.scicode.task import scicode

SAMPLES = ["1", "3", "19"]  # 1 + 1 + 2 dev steps
CLEAN = "verifies clean: 3 samples, 4 steps re-graded"


@pytest.fixture(scope="module")
def real_log(tmp_path_factory, dev_targets_file) -> Path:
    """The reference model's answers to three dev problems, scored: every step passes."""
    log_dir = tmp_path_factory.mktemp("verify-logs")
    [log] = inspect_eval(
        scicode(split="dev"),
        model="scievals/reference",
        sample_id=SAMPLES,
        display="none",
        log_dir=str(log_dir),
    )
    assert log.status == "success", log.error
    assert log.location is not None
    return Path(log.location)


@pytest.mark.slow
def test_an_untouched_log_verifies_clean(real_log, tmp_path, capsys):
    code, lines, err = verify(real_log, capsys, "--out", str(tmp_path / "out"))
    assert code == 0, lines + [err]
    assert lines == [
        f"{real_log} {CLEAN}; every verdict, metric and protocol field is what the log records"
    ]
    assert "note: the eval ran 3 of the 15 problems of split dev (4 steps)" in err
    written = json.loads((tmp_path / "out" / "verify.json").read_text(encoding="utf-8"))
    assert written["clean"] is True and written["differences"] == []
    assert {name: [v["passed"] for v in steps] for name, steps in written["verdicts"].items()} == {
        "sample 1": [True],
        "sample 3": [True],
        "sample 19": [True, True],
    }


@pytest.mark.slow
def test_a_flipped_score(real_log, tmp_path, capsys):
    def flip(log: EvalLog) -> None:
        sample_of(log, "1").scores["scicode_scorer"].value = {"1.1": 0.0}

    assert differences(edited(real_log, tmp_path, flip), capsys) == [
        "sample 1 step 1.1: re-graded pass; the log's score says fail"
    ]


@pytest.mark.slow
def test_a_completion_changed_by_hand(real_log, tmp_path, capsys):
    """The completion is what is graded: its stored code, left alone, no longer matches it."""

    def change(log: EvalLog) -> None:
        kept = sample_of(log, "19").store[STORE_KEY]
        kept["completions"]["19.2"] = "```python\ndef nothing():\n    return None\n```"

    lines = differences(edited(real_log, tmp_path, change), capsys)
    assert lines[:2] == [
        "sample 19: step 19.2: its stored code is not what its completion extracts to "
        "(extraction=inspect): graded from the completion",
        lines[1],
    ]
    assert lines[1].startswith("sample 19 step 19.2: re-graded fail (")
    assert lines[1].endswith("; the log's score and verdict say pass")
    # the log's metrics are those of the gold answer, not of what its completions now earn
    assert [line.split(":")[0] for line in lines[2:]] == [
        f"metric {name}"
        for name in (
            "percentage_main_problems_solved",
            "percentage_subproblems_solved",
            "total_main_problems_solved",
            "total_subproblems_solved",
            "main_problems_stderr",
            "subproblems_stderr",
            "main_pass_at_1",
            "sub_pass_at_1",
        )
    ]
    assert "metric total_subproblems_solved: the log reports 4, re-graded 3" in lines


@pytest.mark.slow
def test_the_data_version_altered(real_log, tmp_path, capsys):
    def alter(log: EvalLog) -> None:
        protocol = log.eval.metadata["protocol"]
        protocol["data_version"] = protocol["data_version"].replace("69a8cfc", "1234567")

    assert differences(edited(real_log, tmp_path, alter), capsys) == [
        "protocol data_version: the log records 'scicode-1234567; targets: dev regenerated from "
        "gold code', this install 'scicode-69a8cfc; targets: dev regenerated from gold code'"
    ]


@pytest.mark.slow
def test_a_sample_removed(real_log, tmp_path, capsys):
    def remove(log: EvalLog) -> None:
        log.samples = [s for s in log.samples or [] if str(s.id) != "3"]

    assert differences(edited(real_log, tmp_path, remove), capsys) == [
        "sample 3: missing from the log (the eval ran it)",
        "metric total_main_problems_solved: the log reports 3, re-graded 2",
        "metric total_subproblems_solved: the log reports 4, re-graded 3",
    ]


@pytest.mark.slow
def test_runtime_versions_and_extraction_edited(real_log, tmp_path, capsys):
    def edit(log: EvalLog) -> None:
        log.eval.metadata["runtime_versions"]["2024"]["numpy"] = "2.0.0"
        for scorer in log.eval.scorers:
            scorer.options["config"]["extraction"] = "original"

    lines = differences(edited(real_log, tmp_path, edit), capsys)
    assert "runtime_versions.2024.numpy: the log records '2.0.0', this install '1.26.4'" in lines
    assert (
        "scorer config.extraction: the metrics of scicode_scorer were computed under 'inspect', "
        "the scorer records 'original'" in lines
    )
    assert any(
        line.startswith("protocol scorer: the log records 'sandboxed records; extraction=inspect")
        for line in lines
    )
    # re-extracted under the edited rule, every stored code differs from its completion's
    assert (
        sum("its stored code is not what its completion extracts to" in line for line in lines) == 4
    )


@pytest.mark.slow
def test_a_hostile_sandbox_attack_fails_its_step(real_log, tmp_path, capsys):
    """Answers that write outside their directory, or exit 0 before the tests run, fail their
    step and nothing else; the host is untouched."""
    outside = tmp_path / "escaped"
    writes = (
        "```python\nimport os\n"
        f"open({str(outside)!r}, 'w').write('out')\n"
        "open(os.path.join('..', '..', 'escaped'), 'w').write('out')\n"
        "def cg(A, b, x, tol):\n    return x\n```"
    )
    gold_then_exit = (
        sample_of(read_eval_log(str(real_log)), "3")
        .store[STORE_KEY]["completions"]["3.1"]
        .replace("```\n", "import sys\nsys.exit(0)\n```\n")
    )

    def attack(log: EvalLog) -> None:
        for sample_id, step, completion in (("1", "1.1", writes), ("3", "3.1", gold_then_exit)):
            kept = sample_of(log, sample_id).store[STORE_KEY]
            kept["completions"][step] = completion
            kept["codes"][step] = extract(
                completion, find_step(step, "dev")[1].function_header, "inspect"
            )

    lines = differences(edited(real_log, tmp_path, attack), capsys)
    steps = [line for line in lines if not line.startswith("metric ")]
    assert [line.split(": re-graded")[0] for line in steps] == [
        "sample 1 step 1.1",
        "sample 3 step 3.1",
    ]
    assert all(line.endswith("; the log's score and verdict say pass") for line in steps)
    assert not outside.exists()


@pytest.mark.slow
def test_foreign_and_malformed_samples_fail_alone(real_log, tmp_path, capsys):
    def splice(log: EvalLog) -> None:
        samples = log.samples or []
        foreign = sample_of(log, "3").model_copy(deep=True)
        foreign.id, foreign.metadata = "atkins-1", {"question": "What is 2+2?", "unit": "1"}
        sample_of(log, "3").metadata = {"question": "What is 2+2?"}
        sample_of(log, "1").store[STORE_KEY] = "not answers"
        log.samples = [*samples, foreign]

    assert differences(edited(real_log, tmp_path, splice), capsys) == [
        "sample 1: its store holds no SciCode answers (store['scicode']): not re-graded",
        "sample 3: not a SciCode sample: its metadata has no problem_id: not re-graded",
        "sample atkins-1: not one of the samples the eval ran (its dataset's ids and epochs): not "
        "re-graded",
        "metrics: not recomputed: 2 of the run's samples were not re-graded (above)",
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("task", "says"),
    [
        (
            "inspect_evals/gpqa_diamond",
            "is a log of task 'inspect_evals/gpqa_diamond': --verify checks logs of "
            "scievals/scicode, scievals/scicode_verified and scievals/scibench",
        ),
        ("scievals/scibench", "records task parameters ['split'], not of scievals/scibench"),
    ],
)
def test_a_log_of_another_task_is_refused(real_log, tmp_path, capsys, task, says):
    def retask(log: EvalLog) -> None:
        log.eval.task = task

    path = edited(real_log, tmp_path, retask)
    code, lines, err = verify(path, capsys)
    assert (code, lines) == (2, [])
    assert err.splitlines() == [err.splitlines()[0]] and says in err


@pytest.mark.slow
def test_a_log_without_scores_is_refused(real_log, tmp_path, capsys):
    def unscore(log: EvalLog) -> None:
        log.results = None
        for sample in log.samples or []:
            sample.scores = None

    path = edited(real_log, tmp_path, unscore)
    assert verify(path, capsys) == (
        2,
        [],
        f"scievals: error: {path} holds no scores to verify (generated with --no-score?): score "
        "it with `inspect score` first\n",
    )


PROTOCOLS = {
    "chat": ({"prompt_protocol": "chat"}, "scievals/reference", {}),
    "whole problem": ({"prompt_protocol": "whole_problem"}, "scievals/reference", {}),
    "gold earlier steps": ({"previous_steps": "gold"}, "mockllm/model", {}),
    "two epochs": ({}, "scievals/reference", {"epochs": 2}),
    "a preset": ({"preset": "paper"}, "scievals/reference", {}),
    "an agent": ({"agent": "react", "agent_message_limit": 4}, "scievals/reference", {}),
}


@pytest.mark.slow
@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_each_protocol_verifies_clean(protocol, tmp_path, capsys, dev_targets_file):
    """The protocol this install records, and the re-grade, are the run's for every protocol."""
    params, model, settings = PROTOCOLS[protocol]
    [log] = inspect_eval(
        scicode(split="dev", **params),
        model=model,
        sample_id=["19"],
        display="none",
        log_dir=str(tmp_path),
        **settings,
    )
    assert log.status == "success", log.error
    code, lines, err = verify(Path(log.location or ""), capsys)
    assert (code, len(lines)) == (0, 1), lines + [err]
    assert " verifies clean: " in lines[0]


@pytest.mark.slow
def test_a_log_too_large_unpacked(real_log, capsys, monkeypatch):
    """A small archive that unpacks past the bound (a zip bomb) is refused before Inspect reads it."""
    with zipfile.ZipFile(real_log) as archive:
        unpacked = sum(entry.file_size for entry in archive.infolist())
    bound = real_log.stat().st_size + 1
    assert unpacked > bound
    monkeypatch.setattr(inputs, "MAX_LOG_BYTES", bound)
    code, lines, err = verify(real_log, capsys)
    assert (code, lines) == (2, [])
    assert err == (
        f"scievals: error: {real_log}: {unpacked:,} bytes uncompressed, over the {bound:,}-byte "
        "bound of a log read\n"
    )


def test_a_huge_file_is_refused_unread(tmp_path, capsys):
    huge = tmp_path / "huge.eval"
    with huge.open("wb") as fh:  # sparse: no disk used, and never opened by the check
        fh.truncate(inputs.MAX_LOG_BYTES + 1)
    code, lines, err = verify(huge, capsys)
    assert (code, lines) == (2, [])
    assert err == (
        f"scievals: error: {huge}: {inputs.MAX_LOG_BYTES + 1:,} bytes, over the "
        f"{inputs.MAX_LOG_BYTES:,}-byte bound of a log read\n"
    )


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        (
            "bytes.eval",
            b"PK\x03\x04 not a zip",
            "not an Inspect log (a damaged or truncated .eval archive)",
        ),
        ("log.json", b'{"version": ', "is not a readable Inspect log: "),
        ("log.txt", b"", "not an Inspect log (a .eval or .json file)"),
    ],
)
def test_not_a_log(tmp_path, capsys, name, content, says):
    path = tmp_path / name
    path.write_bytes(content)
    code, lines, err = verify(path, capsys)
    assert (code, lines) == (2, [])
    assert len(err.splitlines()) == 1 and says in err


def test_a_folder_and_a_missing_file(tmp_path, capsys):
    for path, says in (
        (tmp_path, "not a regular file (an Inspect log is one .eval or .json file)"),
        (tmp_path / "absent.eval", "no such file"),
    ):
        code, lines, err = verify(path, capsys)
        assert (code, lines, err) == (2, [], f"scievals: error: {path}: {says}\n")


def test_the_log_sets_split_and_timeout(tmp_path, capsys):
    code, _, err = verify(tmp_path / "any.eval", capsys, "--split", "dev", "--timeout", "5")
    assert code == 2
    assert (
        err
        == "scievals: error: --verify grades under the log's own protocol: drop --split and --timeout\n"
    )
