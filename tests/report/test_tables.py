"""Every number of the report's tables, from real Inspect logs with scripted outcomes.

Runs (see conftest): r1 scicode alpha, r2 scicode alpha with background and two epochs,
r3 scicode beta, r4 scibench alpha, r5 scibench beta.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from scievals.report.build import DIFFERS, Section, build_sections, default_pairs, results_table
from scievals.report.load import Run, load_runs
from scievals.report.published import REFERENCES, matches, references_for
from scievals.report.tables import Table, text
from scievals.stats import clopper_pearson, rate_interval

from .conftest import SCICODE_ALPHA, Logs, _epoch, run_task, scicode_task


@pytest.fixture(scope="module")
def loaded(logs: Logs) -> tuple[list[Run], list[str]]:
    return load_runs([logs.root])


@pytest.fixture(scope="module")
def sections(loaded: tuple[list[Run], list[str]]) -> dict[str, Section]:
    return {s.benchmark: s for s in build_sections(loaded[0])}


def table(sections: dict[str, Section], key: str) -> Table:
    return next(t for s in sections.values() for t in s.tables if t.key == key)


def row(t: Table, first: str, second: str | None = None) -> dict[str, str]:
    """The row whose first cell is ``first`` (and second ``second``), as column -> text."""
    for r in t.rows:
        if text(r[0]) == first and (second is None or text(r[1]) == second):
            return dict(zip(t.columns, (text(c) for c in r), strict=True))
    raise KeyError(first)


def pct(sums: list[float], sizes: list[float]) -> str:
    """The cell the report should print for these per-problem sums (stats is tested apart)."""
    p, _, lo, hi, _ = rate_interval(sums, sizes)
    return f"{100 * float(p):.1f} [{100 * float(lo):.1f}, {100 * float(hi):.1f}]"


def cp(k: int, n: int) -> str:
    lo, hi = clopper_pearson(k, n)
    return f"{100 * k / n:.1f} [{100 * float(lo):.1f}, {100 * float(hi):.1f}]"


def test_runs_are_read_from_the_log_api(logs: Logs, loaded: tuple[list[Run], list[str]]) -> None:
    runs, notes = loaded
    got = {r.name: (r.benchmark, r.model, r.epochs, r.temperature, r.path) for r in runs}
    assert got == {
        "r1": ("scicode", "mockllm/alpha", 1, 0.0, str(logs.scicode_alpha)),
        "r2": ("scicode", "mockllm/alpha", 2, 0.0, str(logs.scicode_alpha_bg)),
        "r3": ("scicode", "mockllm/beta", 1, 0.0, str(logs.scicode_beta)),
        "r4": ("scibench", "mockllm/alpha", 1, 0.0, str(logs.scibench_alpha)),
        "r5": ("scibench", "mockllm/beta", 1, 0.0, str(logs.scibench_beta)),
    }
    assert notes == [f"skipped {logs.other}: not a scievals log (no protocol in its metadata)"]
    assert runs[1].protocol["background"] is True
    assert len(runs[1].samples) == 8  # 4 problems x 2 epochs, unreduced


def test_scicode_results_put_scores_first(sections: dict[str, Section]) -> None:
    t = table(sections, "scicode_results")
    assert t.columns == [
        "run",
        "model",
        "main problems %",
        "problems solved",
        "main problems pass@k %",
        "subproblems (steps) %",
        "steps passed",
        "subproblems (steps) pass@k %",
        DIFFERS,
    ]
    r1 = row(t, "r1")
    assert r1["main problems pass@k %"] == "-"  # one epoch: pass@1 only
    assert r1[DIFFERS] == "background no; sandbox local; epochs 1"
    # main: 2 of 4 solved (1, 10); exact interval [6.8, 93.2]
    assert (r1["main problems %"], r1["problems solved"]) == ("50.0 [6.8, 93.2]", "2/4")
    # steps: 4 of 8; clusters (sorted ids 1, 10, 2, 77) passed 2, 1, 1, 0 of 2, 1, 3, 2
    assert r1["subproblems (steps) %"] == pct([2, 1, 1, 0], [2, 1, 3, 2])
    assert r1["steps passed"] == "4/8"

    r2 = row(t, "r2")
    assert r2[DIFFERS] == "background yes; sandbox <local & unsafe>; epochs 2"
    # two epochs: each problem one cluster of its epochs; main solved 1: 1 of 2, 10: 2 of 2
    assert (r2["main problems %"], r2["problems solved"]) == (pct([1, 2, 0, 0], [2] * 4), "1.5/4")
    assert r2["main problems %"].startswith("37.5 [")
    # steps: 1 passed 3 of 4, 10: 2 of 2, 2: 2 of 6, 77: 0 of 4
    assert r2["subproblems (steps) %"] == pct([3, 2, 2, 0], [4, 2, 6, 4])
    assert r2["steps passed"] == "3.5/8"
    # pass@2 (Chen et al.): problem 1 solved in 1 of 2 epochs and 10 in both: 1 - C(2-c, 2)/C(2, 2)
    # is 1 for both, 0 for 2 and 77; steps 1.1, 1.2, 10.1, 2.1 pass in at least one epoch
    assert r2["main problems pass@k %"] == cp(2, 4)
    assert r2["subproblems (steps) pass@k %"] == pct([2, 1, 1, 0], [2, 1, 3, 2])

    r3 = row(t, "r3")
    assert (r3["main problems %"], r3["problems solved"]) == (cp(2, 4), "2/4")
    assert r3["subproblems (steps) %"] == pct([1, 1, 3, 1], [2, 1, 3, 2])
    assert "Every row: one main problem of 4 is worth 25.0 points, one step of 8 12.50 points." in (
        t.notes
    )
    assert (
        "Protocol of every row: data version scicode-69a8cfc; split test; steps in the split 288; "
        "prompt single_turn; scorer sandboxed records; extraction=original; timeout (s) 1800; "
        "runtime numpy 2.4.6, scipy 1.17.1; temperature 0.0; max tokens default "
        "(full record: protocol table)."
    ) in t.notes


def test_scicode_protocol_record(sections: dict[str, Section]) -> None:
    t = table(sections, "scicode_protocol")
    protocol = {
        "data version": "scicode-69a8cfc",
        "split": "test",
        "steps in the split": "288",
        "prompt": "single_turn",
        "scorer": "sandboxed records; extraction=original",
        "timeout (s)": "1800",
        "runtime": "numpy 2.4.6, scipy 1.17.1",
        "temperature": "0.0",
        "max tokens": "default",
    }
    r1, r2 = row(t, "r1"), row(t, "r2")
    assert r1 == r1 | protocol | {"background": "no", "sandbox": "local", "epochs": "1"}
    assert r2 == r2 | protocol | {"background": "yes", "sandbox": "<local & unsafe>", "epochs": "2"}
    assert r1["log"].endswith(".eval")


def test_footnotes_count_what_each_row_scored(loaded: tuple[list[Run], list[str]]) -> None:
    r1, _, r3 = loaded[0][:3]
    slice_ = replace(r1, samples=[s for s in r1.samples if s.id in ("1", "10", "77")])
    notes = results_table("scicode", [slice_, r3]).notes
    assert "r1: one main problem of 3 is worth 33.3 points, one step of 5 20.00 points." in notes
    assert "r3: one main problem of 4 is worth 25.0 points, one step of 8 12.50 points." in notes


def test_main_percentage_agrees_with_the_metric_in_the_log(logs: Logs) -> None:
    for path in (logs.scicode_alpha, logs.scicode_beta):
        metrics = read_eval_log(str(path), header_only=True).results.scores[0].metrics
        assert metrics["percentage_main_problems_solved"].value == pytest.approx(50.0)


def test_scicode_per_problem_and_failures(sections: dict[str, Section]) -> None:
    t = table(sections, "scicode_problems")
    assert [[text(c) for c in r] for r in t.rows] == [
        ["1", "2/2", "1.5/2", "1/2"],
        ["2", "1/3", "1/3", "3/3"],
        ["10", "1/1", "1/1", "1/1"],
        ["77", "0/2", "0/2", "1/2"],
    ]
    f = table(sections, "scicode_failures")
    assert f.columns[2:] == [
        "failed steps",
        "syntax_error",
        "exception",
        "assertion",
        "timeout",
        "missing_function",
    ]
    assert [[text(c) for c in r[2:]] for r in f.rows] == [
        ["4", "1", "0", "1", "1", "1"],
        ["9", "2", "1", "2", "2", "2"],  # both epochs; epoch 2 adds an exception at 1.2
        ["2", "0", "2", "0", "0", "0"],
    ]


def test_scicode_comparisons_and_flips(sections: dict[str, Section]) -> None:
    t = table(sections, "scicode_comparisons")
    by = {
        (text(r[0]), text(r[1]), text(r[2])): dict(zip(t.columns, map(text, r), strict=True))
        for r in t.rows
    }
    assert set(by) == {
        (m, a, b)
        for m in ("main problems", "subproblems (steps)")
        for a, b in (("r1", "r2"), ("r1", "r3"), ("r2", "r3"))
    }
    m13 = by[("main problems", "r1", "r3")]
    assert m13["A and B differ in"] == "model: mockllm/alpha -> mockllm/beta"
    # A solved 1, 10; B solved 2, 10: one flip each way, McNemar p = 1
    assert (m13["pairs"], m13["A %"], m13["B %"]) == ("4", "50.0", "50.0")
    assert (m13["passed only in A"], m13["passed only in B"], m13["McNemar p"]) == ("1", "1", "1")
    assert m13["B - A (points) [95% CI]"].startswith("+0.0 [")
    s13 = by[("subproblems (steps)", "r1", "r3")]
    # steps: lost 1.2; gained 2.2, 2.3, 77.1 -> p = 2 * (1 + 4) / 16
    assert (s13["pairs"], s13["A %"], s13["B %"]) == ("8", "50.0", "75.0")
    assert (s13["passed only in A"], s13["passed only in B"], s13["McNemar p"]) == (
        "1",
        "3",
        "0.625",
    )
    assert s13["B - A (points) [95% CI]"].startswith("+25.0 [")
    # r2 has two epochs; only epoch 1 pairs with r1, and it is identical
    m12 = by[("main problems", "r1", "r2")]
    bound = 100 * float(clopper_pearson(0, 4)[1])  # no flip in 4: neither rate exceeds CP(0, 4)
    assert (m12["pairs"], m12["B - A (points) [95% CI]"], m12["McNemar p"]) == (
        "4",
        f"+0.0 [{-bound:+.1f}, {bound:+.1f}]",
        "1",
    )
    assert m12["A and B differ in"] == (
        "background: no -> yes; sandbox: local -> <local & unsafe>; epochs: 1 -> 2"
    )

    flips = table(sections, "scicode_flips")
    got = {(text(r[0]), text(r[1]), text(r[2])): (text(r[3]), text(r[4])) for r in flips.rows}
    assert got[("main problems", "r1", "r3")] == ("1", "2")
    assert got[("subproblems (steps)", "r1", "r3")] == ("1.2", "2.2, 2.3, 77.1")
    assert got[("subproblems (steps)", "r1", "r2")] == ("-", "-")


def test_paired_interval_brackets_the_difference(sections: dict[str, Section]) -> None:
    for c in sections["scicode"].comparisons + sections["scibench"].comparisons:
        assert c.result.lo <= c.result.diff <= c.result.hi


def test_scibench_results(sections: dict[str, Section]) -> None:
    t = table(sections, "scibench_results")
    assert t.columns == [
        "run",
        "model",
        "faithful accuracy %",
        "faithful correct",
        "robust accuracy %",
        "robust correct",
        "faithful no answer",
        "robust no answer",
    ]  # the two runs share their protocol: no column for it, and nothing of SciCode's
    assert "Every row: one problem of 6 is worth 16.7 points." in t.notes
    assert (
        "Protocol of every row: data version old; split textbook; dataset problems 583; setting "
        "zero; scorer both; temperature 0.0; max tokens default; epochs 1 (full record: protocol "
        "table)."
    ) in t.notes
    record = table(sections, "scibench_protocol")
    assert not {"background", "timeout (s)", "runtime", "sandbox", "steps counted"} & set(
        record.columns
    )
    r4, r5 = row(t, "r4"), row(t, "r5")
    # faithful 4/6, robust 5/6 (exact intervals); fund-1 had no answer
    assert (r4["faithful accuracy %"], r4["faithful correct"], r4["faithful no answer"]) == (
        cp(4, 6),
        "4/6",
        "1",
    )
    assert (r4["robust accuracy %"], r4["robust correct"], r4["robust no answer"]) == (
        cp(5, 6),
        "5/6",
        "1",
    )
    # beta's C/I values: 3/6
    assert (r5["faithful accuracy %"], r5["faithful correct"], r5["faithful no answer"]) == (
        cp(3, 6),
        "3/6",
        "0",
    )
    assert r5["robust accuracy %"] == cp(3, 6)


def test_scibench_books_and_subjects(sections: dict[str, Section]) -> None:
    books = table(sections, "scibench_by_book")
    assert books.columns[:6] == [
        "book",
        "problems",
        "r4 faithful %",
        "r4 robust %",
        "r5 faithful %",
        "r5 robust %",
    ]
    got = {text(r[0]): [text(c) for c in r[1:6]] for r in books.rows}
    assert got == {
        "atkins": ["3", cp(2, 3), cp(3, 3), cp(1, 3), cp(1, 3)],
        "fund": ["2", cp(1, 2), cp(1, 2), cp(2, 2), cp(2, 2)],
        "stat": ["1", cp(1, 1), cp(1, 1), cp(0, 1), cp(0, 1)],
        # mean of the book rates: (66.7 + 50 + 100) / 3, (100 + 50 + 100) / 3, ...
        "macro average": ["-", "72.2", "83.3", "44.4", "44.4"],
    }
    # published GPT-4 zero-shot per book (paper Table 3), beside the matching runs
    assert books.columns[6] == "published GPT-4 (zero, beside r4) %"
    assert [text(r[6]) for r in books.rows] == ["45.8", "23.3", "49.3", "-"]

    subjects = table(sections, "scibench_by_subject")
    got = {text(r[0]): [text(c) for c in r[1:]] for r in subjects.rows}
    assert got == {
        "chemistry": ["3", cp(2, 3), cp(3, 3), cp(1, 3), cp(1, 3)],
        "math": ["1", cp(1, 1), cp(1, 1), cp(0, 1), cp(0, 1)],
        "physics": ["2", cp(1, 2), cp(1, 2), cp(2, 2), cp(2, 2)],
    }


def test_scibench_comparison(sections: dict[str, Section]) -> None:
    t = table(sections, "scibench_comparisons")
    faithful = row(t, "faithful accuracy", "r4")
    # alpha passes atkins-1, atkins-2, fund-2, stat-1; beta atkins-1, fund-1, fund-2
    assert (faithful["pairs"], faithful["A %"], faithful["B %"]) == ("6", "66.7", "50.0")
    assert faithful["B - A (points) [95% CI]"].startswith("-16.7 [")
    assert (faithful["passed only in A"], faithful["passed only in B"]) == ("2", "1")
    assert faithful["McNemar p"] == "1"  # 2 * (1 + 3) / 8, capped
    robust = row(t, "robust accuracy", "r4")
    assert (robust["passed only in A"], robust["passed only in B"], robust["McNemar p"]) == (
        "3",
        "1",
        "0.625",
    )
    flips = table(sections, "scibench_flips")
    assert [[text(c) for c in r] for r in flips.rows] == [
        ["faithful accuracy", "r4", "r5", "atkins-2, stat-1", "fund-1"],
        ["robust accuracy", "r4", "r5", "atkins-2, atkins-3, stat-1", "fund-1"],
    ]


def test_published_rows_only_beside_matching_runs(sections: dict[str, Section]) -> None:
    sc = table(sections, "scicode_published")
    leaderboard = [r for r in sc.rows if r[0] == "SciCode leaderboard"]
    paper = [r for r in sc.rows if r[0] == "SciCode paper, Table 3"]
    assert len(leaderboard) == 19 and all(r[-1] == "r1, r3" for r in leaderboard)
    assert len(paper) == 10 and all(r[-1] == "r2" for r in paper)
    gpt4o = row(sc, "SciCode leaderboard", "GPT-4o")
    assert (gpt4o["main problems %"], gpt4o["subproblems (steps) %"]) == ("1.5", "25.0")
    sonnet = row(sc, "SciCode paper, Table 3", "Claude 3.5 Sonnet")
    assert (sonnet["main problems %"], sonnet["subproblems (steps) %"]) == ("12.3", "35.4")
    assert "r1 scored 8 of 288 steps: a partial run" in sc.notes
    sb = table(sections, "scibench_published")
    assert [text(r[3]) for r in sb.rows] == ["1.0", "2.4", "6.2", "14.9", "9.6", "33.8", "41.0"]
    assert {r[2] for r in sb.rows} == {"zero"}
    assert all(r[-1] == "r4, r5" for r in sb.rows)


def _scicode(**kw: object) -> dict[str, object]:
    base = {
        "benchmark": "scicode",
        "split": "test",
        "steps_counted": 288,
        "prompt": "single_turn",
        "background": False,
        "data_version": "scicode-69a8cfc",
        "timeout": 1800,
        "scorer": "sandboxed records; extraction=original",
    }
    return base | kw


def _scibench(**kw: object) -> dict[str, object]:
    base = {
        "benchmark": "scibench",
        "data_version": "old",
        "split": "textbook",
        "steps_counted": 583,
        "prompt": "zero",
        "scorer": "faithful",
    }
    return base | kw


LEADERBOARD, SCICODE_PAPER, SCIBENCH_PAPER = (
    {"SciCode leaderboard"},
    {"SciCode paper, Table 3"},
    {"SciBench paper, Table 3"},
)


@pytest.mark.parametrize(
    ("protocol", "sources"),
    [
        (_scicode(), LEADERBOARD),
        (_scicode(background=True), SCICODE_PAPER),
        (_scicode(steps_counted=291), set()),
        (_scicode(steps_counted="288"), LEADERBOARD),
        (_scicode(prompt="chat"), set()),
        (_scicode(timeout=300), set()),
        (_scicode(scorer="sandboxed records; extraction=inspect"), set()),
        (_scicode(split="dev", steps_counted=50), set()),
        (_scicode(background=None), set()),
        (_scibench(), SCIBENCH_PAPER),
        (_scibench(prompt="zeroCot"), SCIBENCH_PAPER),
        (_scibench(data_version="main"), set()),
        (_scibench(data_version="oldest"), set()),
        (
            _scibench(
                data_version="old (local /data/sb)",
                prompt="few_cot (5 shots)",
                scorer="both + errata",
            ),
            SCIBENCH_PAPER,
        ),
        (_scibench(prompt="few_cot (3 shots)"), set()),
        (_scibench(prompt="python (4 examples, thermo 3)"), SCIBENCH_PAPER),
        (_scibench(prompt="few"), set()),
        (_scibench(steps_counted=182), set()),  # two books only
        (_scibench(scorer="robust"), set()),
        (_scibench(split="multimodal"), set()),
    ],
)
def test_published_matching(protocol: dict[str, object], sources: set[str]) -> None:
    assert {r.source for r in REFERENCES if matches(r, protocol)} == sources


def test_published_setting_picks_its_column() -> None:
    refs = references_for(_scibench(prompt="python (4 examples, thermo 3)", scorer="both"))
    by_model = {r.model: r for r in refs}
    assert len(refs) == 7
    assert by_model["GPT-4"].metrics == {"faithful": 43.22}
    gpt4_books = by_model["GPT-4"].books
    assert (gpt4_books["atkins"], gpt4_books["calculus"]) == (57.01, 38.10)
    assert by_model["GPT-4-Turbo"].books == {}


def test_per_book_figures_hold_for_a_subset_of_books() -> None:
    protocol = _scibench(steps_counted=182)
    assert references_for(protocol) == []
    assert {r.model for r in references_for(protocol, ("steps_counted",)) if r.books} == {"GPT-4"}


def test_default_pairs_stay_within_a_benchmark(loaded: tuple[list[Run], list[str]]) -> None:
    pairs = [(a.name, b.name) for a, b in default_pairs(loaded[0])]
    assert pairs == [("r1", "r2"), ("r1", "r3"), ("r2", "r3"), ("r4", "r5")]


def test_runs_differing_in_any_protocol_key_stay_apart(tmp_path: Path) -> None:
    """Every protocol key, the new runtimes and step_count included, splits runs and shows."""
    for runtimes in (["2024"], ["2024", "2025"]):
        run_task(
            scicode_task(_epoch(SCICODE_ALPHA), runtimes=runtimes, step_count="official"),
            "alpha",
            tmp_path,
        )
    runs, _ = load_runs([tmp_path])
    t = results_table("scicode", runs)
    assert sorted(text(r[-1]) for r in t.rows) == ["runtimes 2024", "runtimes 2024, 2025"]
    assert any("step count official" in note for note in t.notes)
