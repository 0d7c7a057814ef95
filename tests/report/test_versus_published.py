"""Ours beside published values (inspect_evals' evaluation-report form), and tokens, time and cost.

A scripted SciCode run named ``gpt-4o`` under the leaderboard's protocol meets the published
GPT-4o row (1.5% main, 25.0% steps); a real SciBench run answered by a mock model that reports
its tokens gives the usage and, with prices, the cost.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.model import get_model

from scievals import cli
from scievals.inputs import InputError
from scievals.report.build import build_sections
from scievals.report.load import load_runs
from scievals.report.published import REFERENCES, same_model
from scievals.report.tables import text
from scievals.report.usage import Price, parse_price, price_for, read_prices
from scievals.report.write import write_report

from .conftest import SCICODE_ALPHA, run_task, scicode_task
from .test_real_tasks import DATA, _reply


@pytest.fixture(scope="module")
def gpt4o_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    script = {(pid, 1): steps for pid, steps in SCICODE_ALPHA.items()}
    return run_task(scicode_task(script), "gpt-4o", tmp_path_factory.mktemp("gpt4o"))


def _rows(table) -> list[dict[str, str]]:  # noqa: ANN001
    return [dict(zip(table.columns, map(text, row), strict=True)) for row in table.rows]


def test_the_published_value_sits_beside_ours_with_the_difference(gpt4o_log: Path) -> None:
    runs, _ = load_runs([gpt4o_log])
    [section] = build_sections(runs)
    table = next(t for t in section.tables if t.key == "scicode_versus_published")
    main, sub = _rows(table)
    assert (main["model"], main["metric"], main["reference %"]) == (
        "mockllm/gpt-4o",
        "main problems",
        "1.5",
    )
    # 2 of 4 problems solved: 50.0 [6.8, 93.2], 48.5 points above 1.5, which is outside it
    assert (main["ours % [95% CI]"], main["delta (points)"]) == ("50.0 [6.8, 93.2]", "+48.5")
    assert main["published vs our CI"] == "outside"
    assert (sub["reference %"], sub["delta (points)"]) == ("25.0", "+25.0")
    assert sub["published vs our CI"] == "inside"  # 4 of 8 steps in 4 problems: a wide interval
    assert main["samples"] == "4" and main["source"].startswith(
        "SciCode leaderboard (https://scicode-bench.github.io/leaderboard/)"
    )
    [_, repro] = table.notes
    # a scripted task is no package's: only Inspect's version is recorded (real tasks: below)
    assert "scievals not recorded, inspect_ai 0.3.285 (as the logs record)" in repro
    assert "4 samples (problems x epochs)" in repro
    assert "cost unknown (a log records no token counts)" in repro  # a scripted run calls no model


def test_only_the_same_model_is_compared() -> None:
    assert same_model("openai/gpt-4o", "GPT-4o")
    assert same_model("anthropic/claude-3-5-sonnet-20240620", "Claude 3.5 Sonnet")
    assert not same_model("openai/gpt-4o", "GPT-4")
    assert not same_model("openai/gpt-4-turbo", "GPT-4")
    assert not same_model("openai/o3-mini", "o3-mini-high")


def test_published_rows_cite_their_source_with_a_link() -> None:
    assert REFERENCES and all(r.url.startswith("https://") and r.source for r in REFERENCES)
    verified = {r.model: r.metrics for r in REFERENCES if r.protocol == "verified"}
    # published as counts: 273 of 287 steps, 58 of 64 problems
    assert verified["GPT-5.5"] == pytest.approx({"sub": 100 * 273 / 287, "main": 100 * 58 / 64})


@pytest.mark.skipif(not (DATA / "old" / "dataset").is_dir(), reason=f"no SciBench data at {DATA}")
def test_tokens_time_and_cost_per_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from scievals.scibench.task import scibench

    task = scibench(version="old", books="quan", setting="zero", data_dir=str(DATA))
    model = get_model("mockllm/constant", custom_outputs=_reply)  # 1 input, 1 output token
    [log] = eval(task, model=model, limit=6, display="none", log_dir=str(tmp_path / "logs"))
    assert log.status == "success"
    prices = tmp_path / "prices.txt"
    prices.write_text("# dollars per million tokens\nconstant=1000000,2000000\n")
    out = tmp_path / "report"
    assert (
        cli.main(["report", str(tmp_path / "logs"), "--out", str(out), "--prices", str(prices)])
        == 0
    )
    printed = capsys.readouterr().out
    assert "scibench: tokens, time and cost" in printed
    runs, _ = load_runs([tmp_path / "logs"])
    [section] = build_sections(runs, prices=read_prices(prices))
    [row] = _rows(next(t for t in section.tables if t.key == "scibench_usage"))
    assert (row["input tokens"], row["output tokens"], row["reasoning tokens"]) == ("6", "6", "0")
    assert row["cost"] == "$18.00"  # 6 x $1 + 6 x $2
    assert row["wall time"].endswith(" s")
    # a --price wins over the file's
    assert (
        cli.main(
            [
                "report",
                str(tmp_path / "logs"),
                "--out",
                str(out),
                "--prices",
                str(prices),
                "--price",
                "mockllm/constant=0,1000000",
            ]
        )
        == 0
    )
    assert "$6.00" in capsys.readouterr().out
    board = (out / "report.md").read_text()
    assert "| r1 | mockllm/constant | 6 | 6 | 0 |" in board
    [run] = runs
    assert run.versions["scievals"] and run.usage == {
        "mockllm/constant": {"input": 6, "output": 6, "reasoning": 0, "cache": 0}
    }


def test_prices_are_checked() -> None:
    assert parse_price("openai/gpt-4o=2.5,10") == ("openai/gpt-4o", Price(2.5, 10.0))
    assert price_for("openai/gpt-4o", {"gpt-4o": Price(1, 2)}) == Price(1, 2)
    for bad in ("gpt-4o", "gpt-4o=1", "gpt-4o=a,b", "=1,2", "gpt-4o=-1,2", "gpt-4o=inf,1"):
        with pytest.raises(InputError, match="--price"):
            parse_price(bad)


def test_a_bad_prices_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "prices.txt"
    path.write_text("gpt-4o=1,2\n\ngpt-4o-mini=cheap\n")
    with pytest.raises(InputError, match=r"prices.txt:3: expected MODEL=INPUT,OUTPUT"):
        read_prices(path)
    assert write_report  # the report takes prices as a mapping (see the test above)
