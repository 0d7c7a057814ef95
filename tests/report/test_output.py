"""What a report writes: Markdown with PNGs, CSV tables, a self-contained HTML page; the CLI."""

from __future__ import annotations

import argparse
import csv
import io
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from scievals.inputs import InputError
from scievals.report import cli, terminal, write_report
from scievals.report.load import load_runs

from .conftest import SCICODE_ALPHA, Logs, _epoch, run_task, scicode_task

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class _Links(HTMLParser):
    """Every src/href on the page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.links += [v for k, v in attrs if k in ("src", "href") and v]


@pytest.fixture(scope="module")
def html_report(logs: Logs, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html")
    write_report([logs.root], out, "html")
    return out


def test_leaderboard_numbers_protocols_per_benchmark_and_notes_only_published_rows(
    logs: Logs, tmp_path: Path
) -> None:
    """Protocol 1 is each benchmark's first table; the note on published rows sits only under a
    table that has such rows (the dev split's protocol has none)."""
    root = tmp_path / "logs"
    root.mkdir()
    for path in (logs.scicode_alpha, logs.scicode_alpha_bg, logs.scibench_alpha):
        shutil.copy(path, root)
    run_task(scicode_task(_epoch(SCICODE_ALPHA), split="dev", steps_counted=50), "alpha", root)
    write_report([root], tmp_path / "out", "html")
    page = (tmp_path / "out" / "leaderboard.html").read_text(encoding="utf-8")
    tables = page.split("<h2")[1:]
    headings = sorted(re.search(r">([^<]*)</h2>", t).group(1) for t in tables)
    assert headings == [
        "scibench, protocol 1",
        "scicode, protocol 1",
        "scicode, protocol 2",
        "scicode, protocol 3",
    ]
    published = [('<tr class="published">' in t, "Published rows" in t) for t in tables]
    assert all(rows == note for rows, note in published), published
    assert (False, False) in published and (True, True) in published


def test_html_pages_link_only_files_that_exist(html_report: Path) -> None:
    links = {}
    for name in ("report.html", "leaderboard.html"):
        parser = _Links()
        parser.feed((html_report / name).read_text(encoding="utf-8"))
        links[name] = set(parser.links) - {"data:,"}  # the empty icon: nothing to fetch
    # published rows cite their source: a link to follow, never something the page loads
    sources = {link for page in links.values() for link in page if link.startswith("https://")}
    assert sources == {
        "https://scicode-bench.github.io/leaderboard/",
        "https://arxiv.org/abs/2407.13168",
        "https://arxiv.org/abs/2307.10635",
    }
    links = {name: page - sources for name, page in links.items()}
    assert links["report.html"] == {
        "leaderboard.html",
        "scicode_runs.png",
        "scicode_steps_r1.png",
        "scicode_steps_r2.png",
        "scicode_steps_r3.png",
        "scibench_runs.png",
        "scibench_books_faithful.png",
        "scibench_books_robust.png",
    }
    # one table per protocol: r1 and r3, r2 (background), r4 and r5
    assert links["leaderboard.html"] == {
        "report.html",
        "leaderboard_1.png",
        "leaderboard_2.png",
        "leaderboard_3.png",
    }
    for link in set().union(*links.values()):
        path = html_report / link
        assert path.read_bytes().startswith(PNG_MAGIC) if link.endswith(".png") else path.exists()
    for name in links:
        # opens from disk: the only web addresses are the cited sources' links, never loaded
        page = (html_report / name).read_text(encoding="utf-8")
        assert not re.search(r'src="https?:|url\(https?:|<link[^>]+https?:', page)


def test_html_escapes_what_comes_from_logs(html_report: Path) -> None:
    page = (html_report / "report.html").read_text(encoding="utf-8")
    assert "&lt;local &amp; unsafe&gt;" in page
    assert "<local" not in page


def test_html_holds_the_tables(html_report: Path) -> None:
    page = (html_report / "report.html").read_text(encoding="utf-8")
    for key in (
        "scicode_results",
        "scicode_protocol",
        "scicode_published",
        "scicode_pass_at_k",
        "scicode_usage",
        "scibench_usage",
        "scicode_problems",
        "scicode_failures",
        "scicode_comparisons",
        "scicode_flips",
        "scibench_results",
        "scibench_protocol",
        "scibench_by_book",
        "scibench_by_subject",
        "scibench_comparisons",
        "scibench_flips",
    ):
        assert f'id="t-{key}"' in page
    assert '<td class="num">50.0 [6.8, 93.2]</td>' in page
    # every benchmark's results come first, then the details; the record is a click away
    order = ['id="t-scicode_results"', 'id="t-scibench_results"', 'id="scicode"', 'id="scibench"']
    assert [page.index(x) for x in order] == sorted(page.index(x) for x in order)
    assert "<details><summary>scicode: protocol of each run</summary>" in page


def test_markdown_links_its_pngs(html_report: Path) -> None:
    md = (html_report / "report.md").read_text(encoding="utf-8")
    assert md.index("## Results") < md.index("### scicode: results") < md.index("## scicode")
    assert "![scicode: runs compared](scicode_runs.png)" in md
    assert "\\<" not in md and "| r1 | mockllm/alpha | 50.0 [6.8, 93.2] | 2/4 |" in md


def test_csv_tables_keep_interval_bounds_apart(logs: Logs, tmp_path: Path) -> None:
    written = write_report([logs.root], tmp_path, "csv").files
    assert {p.name for p in written} == {
        "scicode_results.csv",
        "scicode_protocol.csv",
        "scibench_protocol.csv",
        "scicode_published.csv",
        "scicode_pass_at_k.csv",
        "scicode_usage.csv",
        "scibench_usage.csv",
        "scicode_problems.csv",
        "scicode_failures.csv",
        "scicode_comparisons.csv",
        "scicode_flips.csv",
        "scibench_results.csv",
        "scibench_published.csv",
        "scibench_by_book.csv",
        "scibench_by_subject.csv",
        "scibench_comparisons.csv",
        "scibench_flips.csv",
    }
    rows = list(csv.DictReader(io.StringIO((tmp_path / "scicode_results.csv").read_text())))
    r1, r2 = rows[0], rows[1]
    assert (r1["main problems %"], r1["main problems % lo"], r1["main problems % hi"]) == (
        "50.0000",
        "6.7586",
        "93.2414",
    )  # exact, 2 of 4
    assert r1["main problems % se"] == "28.8675"  # sqrt(1/4 * 4/3) / 2: Inspect's stderr
    # two epochs, problems the clusters: solved 1, 2, 0, 0 of 2 each
    assert (r2["main problems %"], r2["main problems % se"]) == ("37.5000", "23.9357")
    comp = list(csv.DictReader(io.StringIO((tmp_path / "scibench_comparisons.csv").read_text())))
    assert comp[0]["B - A (points) [95% CI]"] == "-16.6667"
    assert float(comp[1]["McNemar p"]) == 0.625


def test_repeated_log_is_superseded(logs: Logs, tmp_path: Path) -> None:
    shutil.copy(logs.scibench_beta, tmp_path / "a.eval")
    shutil.copy(logs.scibench_beta, tmp_path / "b.eval")
    runs, notes = load_runs([tmp_path])
    assert len(runs) == 1
    assert len(notes) == 1 and notes[0].startswith("superseded ")


def test_missing_path_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such log"):
        write_report([tmp_path / "nope"], tmp_path / "out")
    with pytest.raises(InputError, match="no scievals logs"):
        write_report([tmp_path], tmp_path / "out")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scievals")
    cli.register({"root": parser.add_subparsers(dest="command", required=True)})
    return parser


def test_cli_report_with_chosen_pair(
    logs: Logs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rep"
    ns = _parser().parse_args(
        [
            "report",
            str(logs.scicode_alpha),
            str(logs.scicode_beta),
            "--out",
            str(out),
            "--format",
            "md",
            "--compare",
            "r2",
            "r1",
        ]
    )
    assert ns.func(ns) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[-1].endswith(str(out / "report.md"))
    assert max(len(line) for line in printed.splitlines()[:-1]) <= terminal.WIDTH
    assert "scicode: results" in printed and "50.0 [6.8, 93.2]" in printed
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "| main problems | r2 | r1 | model: mockllm/beta -> mockllm/alpha |" in md
    assert "scibench" not in md


def test_cli_rejects_unknown_run(logs: Logs, tmp_path: Path) -> None:
    ns = _parser().parse_args(
        ["report", str(logs.root), "--out", str(tmp_path), "--compare", "r1", "r9"]
    )
    with pytest.raises(InputError, match="no run 'r9'"):
        ns.func(ns)
