"""Logs of one experiment: reruns are superseded, shards over disjoint problems are combined,
and a change of generation settings makes another run."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.model import get_model

from scievals.report.build import DIFFERS, build_sections
from scievals.report.load import load_runs
from scievals.report.tables import text
from scievals.report.write import resolve_pairs

from .conftest import SCIBENCH_ALPHA, SCIBENCH_BETA, _epoch, scibench_task
from .test_real_tasks import DATA, _reply


def _run(log_dir: Path, ids: list[str] | None, script: dict = SCIBENCH_ALPHA, **kw: object) -> Path:
    """The scripted SciBench task over some of its problems (Inspect's --sample-id)."""
    overrides = kw.pop("overrides", {})
    [log] = eval(
        scibench_task(_epoch(script), **overrides),
        model="mockllm/alpha",
        display="none",
        log_dir=str(log_dir),
        sample_id=ids,
        temperature=0.0,
        **kw,
    )
    assert log.status == "success"
    return Path(log.location)


def _results(runs: list) -> list[dict[str, str]]:
    [section] = build_sections(runs)
    [t] = [t for t in section.tables if t.key == "scibench_results"]
    return [{c: text(v) for c, v in zip(t.columns, row, strict=True)} for row in t.rows]


def test_shards_of_one_selection_combine_into_one_run(tmp_path: Path) -> None:
    a = _run(tmp_path, ["atkins-1", "atkins-2", "fund-1"])
    b = _run(tmp_path, ["atkins-3", "fund-2", "stat-1"])
    [run], notes = load_runs([tmp_path])
    assert notes == []
    assert run.parts == tuple(sorted((str(a), str(b))))
    assert len(run.samples) == 6 and run.protocol["steps_counted"] == 583  # one dataset: once
    assert run.notes == ["combined from 2 logs over disjoint problems"]
    [row] = _results([run])
    assert (row["faithful correct"], row["robust correct"]) == ("4/6", "5/6")
    assert resolve_pairs([run], [[a.name, str(b)]]) == [(run, run)]


def test_shards_of_different_selections_add_their_counts(tmp_path: Path) -> None:
    _run(tmp_path, ["atkins-1", "atkins-2", "atkins-3"], overrides={"steps_counted": 3})
    _run(tmp_path, ["fund-1", "fund-2", "stat-1"], overrides={"steps_counted": 2})
    [run], _ = load_runs([tmp_path])
    assert run.protocol["steps_counted"] == 5


def test_overlapping_runs_stay_apart_and_reruns_are_superseded(tmp_path: Path) -> None:
    _run(tmp_path, ["atkins-1", "atkins-2"])
    rerun = {str(_run(tmp_path, ["atkins-2", "atkins-3"]))}
    rerun.add(str(_run(tmp_path, ["atkins-2", "atkins-3"], script=SCIBENCH_BETA)))
    runs, notes = load_runs([tmp_path])
    runs.sort(key=lambda r: sorted(r.sample_ids()))
    assert [sorted(r.sample_ids()) for r in runs] == [
        ["atkins-1", "atkins-2"],
        ["atkins-2", "atkins-3"],
    ]
    # logs created within one second are equally new: either may be kept, the other is noted
    [other] = rerun - {runs[1].path}
    assert notes == [f"superseded {other} by {runs[1].path} (same model and protocol)"]


def test_max_tokens_is_part_of_the_protocol(tmp_path: Path) -> None:
    _run(tmp_path, None)
    _run(tmp_path, None, max_tokens=512)
    runs, notes = load_runs([tmp_path])
    assert notes == [] and sorted(r.max_tokens or 0 for r in runs) == [0, 512]
    rows = _results(runs)
    assert sorted(row[DIFFERS] for row in rows) == ["max tokens 512", "max tokens default"]
    [section] = build_sections(runs)
    [cmp] = [t for t in section.tables if t.key == "scibench_comparisons"]
    differ = {
        text(dict(zip(cmp.columns, row, strict=True))["A and B differ in"]) for row in cmp.rows
    }
    assert differ in ({"max tokens: default -> 512"}, {"max tokens: 512 -> default"})


@pytest.mark.skipif(not (DATA / "main" / "dataset").is_dir(), reason=f"no SciBench data at {DATA}")
def test_real_task_split_by_books_combines(tmp_path: Path) -> None:
    task_module = pytest.importorskip("scievals.scibench.task")
    model = get_model("mockllm/constant", custom_outputs=_reply)
    for books in ("quan", "chemmc"):
        task = task_module.scibench(books=books, setting="zero", data_dir=str(DATA / "main"))
        [log] = eval(task, model=model, display="none", log_dir=str(tmp_path), limit=2)
        assert log.status == "success"
    [run], _ = load_runs([tmp_path])
    assert run.protocol["steps_counted"] == 33 + 38  # both books' problems, though 4 were run
    assert {s.metadata["book"] for s in run.samples} == {"quan", "chemmc"}


def test_a_mixed_fleet_is_one_run_with_each_shards_sandbox(tmp_path: Path) -> None:
    """Shards graded in our sandbox on one machine and in containers on another: one run, whose
    protocol names both sandboxes and whose notes say how many samples each graded."""
    _run(tmp_path, ["atkins-1", "atkins-2", "fund-1"], overrides={"sandbox": "scievals (unshare)"})
    _run(tmp_path, ["atkins-3", "fund-2", "stat-1"], overrides={"sandbox": "docker"})
    [run], notes = load_runs([tmp_path])
    assert notes == [] and len(run.samples) == 6
    assert run.protocol["sandbox"] == "docker + scievals (unshare)"
    assert run.protocol["steps_counted"] == 583  # one dataset, counted once
    assert "graded in 2 sandboxes (docker: 3 samples; scievals (unshare): 3 samples)" in run.notes
    assert "verdict parity across sandboxes: no sample was graded in more than one" in run.notes
    [row] = _results([run])
    assert (row["faithful correct"], row["robust correct"]) == ("4/6", "5/6")


def test_samples_graded_in_two_sandboxes_are_compared_and_counted_once(tmp_path: Path) -> None:
    _run(tmp_path, ["atkins-1", "atkins-2", "fund-1"], overrides={"sandbox": "scievals (unshare)"})
    _run(tmp_path, ["atkins-2", "fund-1", "stat-1"], overrides={"sandbox": "docker"})
    [run], notes = load_runs([tmp_path])
    assert notes == [] and sorted(run.sample_ids()) == ["atkins-1", "atkins-2", "fund-1", "stat-1"]
    assert "verdict parity across sandboxes: 2 samples graded in two, all agree" in run.notes


def test_a_verdict_that_differs_across_sandboxes_is_named(tmp_path: Path) -> None:
    _run(tmp_path, ["atkins-1", "atkins-2"], overrides={"sandbox": "scievals (unshare)"})
    _run(tmp_path, ["atkins-2", "fund-2"], script=SCIBENCH_BETA, overrides={"sandbox": "docker"})
    [run], _ = load_runs([tmp_path])
    [parity] = [n for n in run.notes if n.startswith("verdict parity")]
    assert "1 DISAGREE: atkins-2 (" in parity
