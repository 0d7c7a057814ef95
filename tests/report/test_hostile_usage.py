"""The report's readers of what a log says about usage and names, on hostile logs.

A log may claim 10**400 tokens, negative ones, NaN or a fraction of one, and name its model
``=HYPERLINK(...)``: the report is still made for every other log, the bad one is flagged in one
line, no cost is made of counts that are not counts, and no CSV cell is a formula a spreadsheet
would run. Any JSON a log can hold in those places gives a report or a one-line refusal.
"""

from __future__ import annotations

import csv
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from inspect_ai.log import read_eval_log, write_eval_log

from scievals import cli
from scievals.inputs import InputError
from scievals.report.load import load_runs
from scievals.report.tables import FORMULA_START
from scievals.report.usage import Price
from scievals.report.write import write_report

from .conftest import SCIBENCH_ALPHA, _epoch, run_task, scibench_task

PRICES = ["--price", "good=1000000,2000000"]  # $1 per input, $2 per output token
PRICES += ["--price", "huge=1,1", "--price", "negative=1000000,1000000"]
GOOD_PRICE = {"good": Price(1_000_000, 2_000_000)}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real log of a scripted SciBench run, as the JSON a .json log holds."""
    folder = tmp_path_factory.mktemp("base")
    log = read_eval_log(str(run_task(scibench_task(_epoch(SCIBENCH_ALPHA)), "base", folder)))
    write_eval_log(log, str(folder / "base.json"))
    return json.loads((folder / "base.json").read_text(encoding="utf-8"))


def usage(**counts: Any) -> dict[str, Any]:
    return {"input_tokens": 6, "output_tokens": 6, "total_tokens": 12, **counts}


def write_log(base: dict[str, Any], folder: Path, name: str, model: Any, usage: Any) -> Path:
    """A .json log like ``base``: its model named ``model``, its usage ``usage`` (any JSON)."""
    data = json.loads(json.dumps(base))
    data["eval"]["model"] = model
    data["stats"]["model_usage"] = usage
    path = folder / f"2024-01-01T00-00-00_{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def csv_cells(folder: Path) -> list[str]:
    cells = []
    for path in folder.glob("*.csv"):
        with open(path, newline="", encoding="utf-8") as fh:
            cells += [cell for row in csv.reader(fh) for cell in row]
    return cells


def assert_no_formula(cells: list[str]) -> None:
    """No cell a spreadsheet would run: a formula start only as a number (-2.5) or '-'."""
    for cell in cells:
        if cell.startswith(FORMULA_START):
            try:
                assert cell == "-" or math.isfinite(float(cell)), cell
            except ValueError:
                raise AssertionError(f"a formula in a CSV cell: {cell!r}") from None


HOSTILE_USAGE = {
    "huge": ("10**400", usage(input_tokens=10**400)),
    "negative": ("-5", usage(output_tokens=-5)),
    "nan": ("NaN", usage(input_tokens=math.nan)),
    "fraction": ("1.5", usage(input_tokens=1.5)),
    "not-a-mapping": ("[]", [1, 2]),
}


def test_hostile_usage_is_flagged_and_every_other_log_reported(
    base: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    write_log(base, logs, "good", "mockllm/good", {"mockllm/good": usage()})
    for kind, (_, counts) in HOSTILE_USAGE.items():
        write_log(base, logs, kind, f"mockllm/{kind}", {f"mockllm/{kind}": counts})
    out = tmp_path / "out"
    assert cli.main(["report", str(logs), "--out", str(out), "--format", "csv", *PRICES]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    # Counts pydantic cannot read as integers make the log unreadable: skipped, one line each.
    for kind in ("nan", "fraction", "not-a-mapping"):
        [line] = [x for x in err.splitlines() if f"_{kind}.json" in x]
        assert line.startswith("scievals report: skipped ") and "not a readable Inspect log" in line
    with open(out / "scibench_usage.csv", newline="", encoding="utf-8") as fh:
        rows = {row["model"]: row for row in csv.DictReader(fh)}
    assert set(rows) == {"mockllm/good", "mockllm/huge", "mockllm/negative"}
    assert rows["mockllm/good"]["cost"] == "$18.00"  # 6 x $1 + 6 x $2
    for kind in ("huge", "negative"):
        assert (rows[f"mockllm/{kind}"]["input tokens"], rows[f"mockllm/{kind}"]["cost"]) == (
            "-",
            "-",
        )
    runs, _ = load_runs([logs])
    [huge] = [r for r in runs if r.model == "mockllm/huge"]
    assert huge.usage == {} and huge.usage_notes == [
        "2024-01-01T00-00-00_huge.json: the token counts of 'mockllm/huge' are left out "
        "(input_tokens is 10000000000000000000… (401 characters): not a count from 0 to 10**15)"
    ]
    [negative] = [r for r in runs if r.model == "mockllm/negative"]
    assert negative.usage_notes == [
        "2024-01-01T00-00-00_negative.json: the token counts of 'mockllm/negative' are left out "
        "(output_tokens is -5: not a count from 0 to 10**15)"
    ]


NAMES = ['=HYPERLINK("http://x.invalid","y")', "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"]


def test_model_names_that_are_formulas_are_text_in_every_csv_cell(
    base: dict[str, Any], tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for i, name in enumerate(NAMES):
        write_log(base, logs, f"n{i}", name, {name: usage()})
    written = write_report([logs], tmp_path / "out", "csv")
    assert len(written.sections[0].runs) == len(NAMES)
    cells = csv_cells(tmp_path / "out")
    assert_no_formula(cells)
    shown = {"'" + name.replace("\r", "\n") for name in NAMES}  # a CR inside a cell: a LF
    assert shown <= set(cells)  # shown as written, read as text


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**500), max_value=10**500)
    | st.floats()
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
COUNT_FIELDS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "reasoning_tokens",
    "input_tokens_cache_read",
    "input_tokens_cache_write",
    "total_cost",
)
USAGE = (
    st.dictionaries(
        st.text(max_size=30),
        st.fixed_dictionaries({}, optional=dict.fromkeys(COUNT_FIELDS, JSON)) | JSON,
        max_size=3,
    )
    | JSON
)
NAME = st.text() | st.sampled_from(NAMES) | JSON


@settings(max_examples=40)
@given(model=NAME, counts=USAGE)
@example(model="=cmd|' /C calc'!A0", counts={"m": usage(input_tokens=10**400)})
@example(model="-1", counts={"m": usage(input_tokens=-(10**15) - 1, reasoning_tokens=10**16)})
@example(model="x", counts={"m": usage(input_tokens=math.inf)})
def test_any_usage_and_name_a_log_holds_give_a_report_or_one_line(
    base: dict[str, Any], model: Any, counts: Any
) -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "logs").mkdir()
        write_log(base, folder / "logs", "good", "mockllm/good", {"mockllm/good": usage()})
        write_log(base, folder / "logs", "hostile", model, counts)
        try:
            priced = {model: Price(1, 1)} if isinstance(model, str) else {}
            prices = GOOD_PRICE | priced  # a cost is made of every count the log claims
            written = write_report([folder / "logs"], folder / "out", "csv", prices=prices)
        except InputError as exc:  # only when no log is usable: never here, the good one is
            raise AssertionError(f"the good log was not reported: {exc}") from None
        runs = [run for section in written.sections for run in section.runs]
        assert "mockllm/good" in {run.model for run in runs}
        left = sum(note.startswith(("skipped", "superseded")) for note in written.notes)
        assert len(runs) + left == 2  # each log reported, or said in a line why not
        assert all(len(note.splitlines()) == 1 for note in written.notes)
        assert_no_formula(csv_cells(folder / "out"))
