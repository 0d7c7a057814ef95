"""A log's ``regrade`` entry is untrusted: any JSON under that name reads as an entry of the
documented shape, or as none, and what reaches the report is bounded and escaped."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inspect_ai.scorer import Score

from scievals.regrade_out import log_entry
from scievals.report.html import table_html
from scievals.report.load import Run, SampleResult
from scievals.report.regrade_entry import MAX_DIFFERENCES, MAX_TEXT, regrade_of
from scievals.report.regrades import regrade_differences_table, regrade_table
from scievals.report.tables import Table
from scievals.report.terminal import WIDTH, render

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=300),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=30,
)
ENTRY_KEYS = st.sampled_from(["run", "model", "source", "source_scores", "differing", "x"])


@settings(max_examples=300, deadline=None)
@given(st.one_of(JSON, st.dictionaries(ENTRY_KEYS, JSON)))
def test_any_json_reads_as_an_entry_or_none(value):
    entry = regrade_of({"regrade": value})
    if entry is None:
        return
    texts = [entry.source, entry.run, entry.model]
    texts += [t for d in entry.differences for t in vars(d).values()]
    assert all(isinstance(t, str) and len(t) <= MAX_TEXT and "\n" not in t for t in texts)
    for score in entry.scores.values():
        assert score is None or (math.isfinite(score) and 0 <= score <= 100)


WRITTEN = log_entry(
    {"source": "/data/eval_results"},
    "model-a sample 0",
    "model-a",
    {"steps_passed": 3},
    {"sub": 12.5, "main": None},
    [("1.1", "pass", "fail", {"cause": "extraction", "detail": "no code block"})],
)


def test_what_regrade_writes_is_read_back_whole():
    entry = regrade_of({"regrade": WRITTEN})
    assert entry is not None
    assert (entry.source, entry.run, entry.model) == (
        "/data/eval_results",
        "model-a sample 0",
        "model-a",
    )
    assert entry.scores == {"sub": 12.5, "main": None}
    [difference] = entry.differences
    assert vars(difference) == {
        "unit": "1.1",
        "source": "pass",
        "official": "fail",
        "cause": "extraction",
        "detail": "no code block",
    }


@pytest.mark.parametrize(
    "change, expect",
    [
        ({"run": 3}, None),
        ({"source_scores": {"sub": 250, "main": -1}}, {"sub": None, "main": None}),
        ({"source_scores": {"sub": True, "main": "50"}}, {"sub": None, "main": None}),
        ({"source_scores": {"sub": float("nan")}}, {"sub": None}),
        ({"source_scores": [1, 2]}, {}),
    ],
)
def test_entries_of_the_wrong_shape(change, expect):
    entry = regrade_of({"regrade": {**WRITTEN, **change}})
    assert (entry if entry is None else entry.scores) == expect


def _run(entry: dict, passed: int) -> Run:
    samples = [SampleResult(str(i), 1, {}, {"faithful": _score(i < passed)}) for i in range(4)]
    return Run(
        path="x.eval",
        task="scievals/scibench",
        model="regrade/m",
        protocol={"benchmark": "scibench"},
        temperature=None,
        epochs=1,
        created="",
        status="success",
        samples=samples,
        errors=0,
        name="r1",
        regrade=regrade_of({"regrade": entry}),
    )


def _score(passed: bool) -> Score:
    return Score(value=1.0 if passed else 0.0)


def test_hostile_text_is_escaped_and_long_lists_are_cut():
    rows = [
        (f"<b>{i}</b>", "<script>x</script>", "fail", {"cause": "c", "detail": "d"})
        for i in range(MAX_DIFFERENCES + 5)
    ]
    entry = log_entry({"source": "<img src=x>"}, "r", "m", None, {"faithful": 75.0}, rows)
    run = _run(entry, passed=2)
    table = regrade_table("scibench", [run])
    differences = regrade_differences_table("scibench", [run])
    assert table is not None and differences is not None
    assert len(differences.rows) == MAX_DIFFERENCES
    assert differences.notes == ["r1: 5 more differences in its log, not shown"]
    page = table_html(table) + table_html(differences)
    assert "<script>" not in page and "<img" not in page and "<b>" not in page
    faithful = table.columns.index("faithful accuracy: diff")
    assert table.rows[0][faithful].value == pytest.approx(50.0 - 75.0)


def test_a_live_run_has_no_regrade_tables():
    run = _run({}, passed=1)
    assert run.regrade is None
    assert regrade_table("scibench", [run]) is None
    assert regrade_differences_table("scibench", [run]) is None


def test_the_terminal_gives_way_on_wide_columns_and_never_widens_narrow_ones():
    narrow = Table("k", "t", ["run", "model", "source"], [["r1", "m", "pass"]])
    assert render(narrow).splitlines()[-1] == "r1   m      pass"
    wide = Table("k", "t", ["run", "detail"], [["r1", "x" * 300]])
    assert max(len(line) for line in render(wide).splitlines()) <= WIDTH
