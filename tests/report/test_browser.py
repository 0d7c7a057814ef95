"""The HTML report and leaderboard as a person sees them: rendered by headless Chromium at
1,400 x 900 px, read from the laid-out page (positions, decoded images, console), not the source.

Logs: the scripted runs of conftest (three SciCode, two SciBench), a scripted SciCode run of a
model named ``gpt-4o`` under the leaderboard's protocol (so a published row sits beside it), plus
the real SciBench task answered by a mock model when the data copy is there; and the main job's
own report and leaderboard (``scievals run`` with a mock model). Skipped, with the reason, where
Chromium is missing or cannot start (scripts/setup_chromium.sh installs it).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai import eval

from scievals.quickstart import run_main_job
from scievals.report import write_report

from .browser import Browser, executable
from .conftest import SCICODE_ALPHA, Logs, run_task, scicode_task
from .test_real_tasks import DATA, _reply

WIDTH, HEIGHT = 1400, 900

HEADLINES = """
Array.from(document.querySelectorAll("table[id$='_results']")).flatMap((table) => {
  const heads = Array.from(table.tHead.rows[0].cells).map((th) => th.textContent);
  const wanted = heads.flatMap((h, i) => (h.endsWith(" %") || h.includes("solved") ||
    h.includes("passed") || h.includes("correct")) ? [i] : []);
  return Array.from(table.tBodies[0].rows).flatMap((row) => wanted.map((i) => {
    const r = row.cells[i].getBoundingClientRect();
    return {text: row.cells[i].textContent, right: r.right, bottom: r.bottom, w: r.width};
  }));
})
"""
IMAGES = """
Array.from(document.images).map((img) => ({src: img.getAttribute("src"),
  ok: img.complete && img.naturalWidth > 0}))
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if executable() is None:
        pytest.skip("no chromium on PATH (scripts/setup_chromium.sh installs it)")
    try:
        b = Browser(WIDTH, HEIGHT)
    except (RuntimeError, OSError) as exc:
        pytest.skip(f"chromium cannot run here: {exc}")
    yield b
    b.close()


@pytest.fixture(scope="module")
def report(logs: Logs, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report over the scripted runs and, when its data is here, a real SciBench run."""
    root = tmp_path_factory.mktemp("browser-logs")
    for path in (
        logs.scicode_alpha,
        logs.scicode_alpha_bg,
        logs.scicode_beta,
        logs.scibench_alpha,
        logs.scibench_beta,
    ):
        shutil.copy(path, root)
    run_task(scicode_task({(p, 1): s for p, s in SCICODE_ALPHA.items()}), "gpt-4o", root)
    if (DATA / "old" / "dataset").is_dir():
        from inspect_ai.model import get_model

        from scievals.scibench.task import scibench

        task = scibench(version="old", books="atkins", setting="zero", data_dir=str(DATA))
        model = get_model("mockllm/constant", custom_outputs=_reply)
        [log] = eval(task, model=model, limit=10, display="none", log_dir=str(root))
        assert log.status == "success"
    out = tmp_path_factory.mktemp("browser-report")
    write_report([root], out, "html")
    return out


@pytest.mark.parametrize("page", ["report.html", "leaderboard.html"])
def test_page_loads_clean_with_its_images(browser: Browser, report: Path, page: str) -> None:
    problems = browser.open(report / page)
    assert problems == []
    images = browser.evaluate(IMAGES)
    assert images and all(i["ok"] for i in images), images
    assert browser.evaluate("document.documentElement.scrollWidth") <= WIDTH  # no sideways scroll


def test_headline_scores_are_in_the_first_screen(browser: Browser, report: Path) -> None:
    assert browser.open(report / "report.html") == []
    cells = browser.evaluate(HEADLINES)
    # three SciCode runs x 4 cells, two or three SciBench runs x 4 (faithful and robust)
    assert len(cells) >= 20
    off = [c for c in cells if c["right"] > WIDTH or c["bottom"] > HEIGHT or c["w"] == 0]
    assert off == []
    assert any(c["text"] == "50.0 [6.8, 93.2]" for c in cells)


def test_leaderboard_draws_intervals_and_sorts(browser: Browser, report: Path) -> None:
    assert browser.open(report / "leaderboard.html") == []
    bars = browser.evaluate("document.querySelectorAll('svg.ci').length")
    assert bars >= 5  # one per run and metric
    column = """
    Array.from(document.querySelector("table.board").tBodies[0].rows)
      .map((r) => parseFloat(r.cells[2].dataset.v))
    """
    before = browser.evaluate(column)  # best first: runs and published rows by main problems %
    assert before == sorted(before, reverse=True) and len(set(before)) > 2
    browser.evaluate("document.querySelectorAll('table.board th')[2].click()")
    assert browser.evaluate(column) == sorted(before)
    browser.evaluate("document.querySelectorAll('table.board th')[2].click()")
    assert browser.evaluate(column) == sorted(before, reverse=True)


PUBLISHED = """
Array.from(document.querySelectorAll("#t-scicode_versus_published tbody tr")).map((row) => {
  const r = row.getBoundingClientRect();
  return {cells: Array.from(row.cells).map((c) => c.textContent), right: r.right, w: r.width};
})
"""
BESIDE = """
Array.from(document.querySelectorAll("table.board tbody tr"))
  .filter((row) => row.cells[0].textContent === "mockllm/gpt-4o")
  .map((row) => Array.from(row.cells).map((c) => c.textContent))
"""


def test_a_published_value_sits_beside_the_matching_run(browser: Browser, report: Path) -> None:
    assert browser.open(report / "report.html") == []
    rows = browser.evaluate(PUBLISHED)
    main = next(r for r in rows if r["cells"][2] == "main problems")
    # ours 2 of 4 problems [6.8, 93.2]; the leaderboard's GPT-4o 1.5%, outside that interval
    assert main["cells"][3:7] == ["50.0 [6.8, 93.2]", "1.5", "+48.5", "outside"]
    assert main["cells"][10].startswith("SciCode leaderboard (https://")
    assert all(r["w"] > 0 and r["right"] <= WIDTH for r in rows)
    browser.screenshot(report / "report_screen.png")
    assert browser.open(report / "leaderboard.html") == []
    [board_row] = browser.evaluate(BESIDE)
    assert "main problems 1.5 (SciCode leaderboard): +48.5, outside our CI" in " ".join(board_row)


@pytest.fixture(scope="module")
def main_job(browser: Browser, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The main job's report folder: a model that solves nothing and the reference answers, on
    both benchmarks where the SciBench copy is there (the browser first: no Chromium, no run)."""
    out = tmp_path_factory.mktemp("main-job")
    with pytest.MonkeyPatch.context() as patch:
        if (DATA / "main" / "dataset").is_dir():
            patch.setenv("SCIEVALS_SCIBENCH_DIR", str(DATA / "main"))
        run_main_job("mockllm/model", False, out / "logs", out / "report", None)
    return out / "report"


HEADINGS = "Array.from(document.querySelectorAll('h2')).map((h) => h.textContent)"
NOTES = """
Array.from(document.querySelectorAll("p.note")).filter((p) => /published/i.test(p.textContent))
  .map((p) => {
    let table = p.previousElementSibling;
    while (table && table.tagName !== "TABLE") table = table.previousElementSibling;
    return {note: p.textContent, rows: table ? table.tBodies[0].rows.length : 0,
            published: table ? table.querySelectorAll("tr.published").length : 0};
  })
"""


def test_main_job_numbers_each_benchmarks_protocols_from_one(
    browser: Browser, main_job: Path
) -> None:
    assert browser.open(main_job / "leaderboard.html") == []
    numbers: dict[str, list[int]] = {}
    for heading in browser.evaluate(HEADINGS):
        benchmark, number = heading.split(", protocol ")
        numbers.setdefault(benchmark, []).append(int(number))
    expected = {"scicode", "scibench"} if (DATA / "main" / "dataset").is_dir() else {"scicode"}
    assert set(numbers) == expected
    assert all(found == list(range(1, len(found) + 1)) for found in numbers.values()), numbers


def test_main_job_notes_only_rows_that_are_there(browser: Browser, main_job: Path) -> None:
    """A note about published figures sits only under a table that has them: on the
    leaderboard, published rows; in the report, rows at all."""
    assert browser.open(main_job / "leaderboard.html") == []
    board = browser.evaluate(NOTES)
    assert [n for n in board if "Published rows" in n["note"] and not n["published"]] == []
    assert browser.open(main_job / "report.html") == []
    assert [n for n in browser.evaluate(NOTES) if not n["rows"]] == []
