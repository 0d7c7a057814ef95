"""Write a report in one of three forms: Markdown (with PNGs), CSV tables, or an HTML page
(which also writes the Markdown, the PNGs it links and a leaderboard page)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from scievals.inputs import InputError
from scievals.report import html, leaderboard, plots
from scievals.report.build import Section, build_sections
from scievals.report.load import Run, load_runs
from scievals.report.names import report_file
from scievals.report.tables import to_csv, to_markdown
from scievals.report.usage import Price

Format = Literal["md", "csv", "html"]


def resolve_pairs(runs: Sequence[Run], specs: Sequence[Sequence[str]]) -> list[tuple[Run, Run]]:
    """Pairs named by run name (r1) or log path (any of a combined run's); raises InputError on
    names that match no run."""

    def find(name: str) -> Run:
        for run in runs:
            paths = run.parts or (run.path,)
            if name in (run.name, run.path, *paths) or name in {Path(p).name for p in paths}:
                return run
        known = ", ".join(f"{r.name}={Path(r.path).name}" for r in runs)
        raise InputError(f"--compare: no run {name!r} (runs: {known})")

    out = []
    for a, b in specs:
        ra, rb = find(a), find(b)
        if ra.benchmark != rb.benchmark:
            raise InputError(f"--compare {a} {b}: runs of different benchmarks")
        out.append((ra, rb))
    return out


def markdown(sections: Sequence[Section], runs: Sequence[Run], notes: Sequence[str]) -> str:
    """Every benchmark's results first, then each benchmark's details, then the logs read."""
    parts = ["# scievals report", "", "## Results", ""]
    parts += [to_markdown(section.tables[0]) for section in sections]
    for section in sections:
        parts += [f"## {section.benchmark}", ""]
        parts += [to_markdown(t) for t in section.tables[1:]]
        parts += [f"![{caption}]({name})\n" for name, caption in section.figures]
    parts += ["## Logs read", ""] + [f"- {r.name}: `{r.path}`" for r in runs] + [""]
    parts += [f"_{n}_  " for n in notes]
    return "\n".join(parts).rstrip() + "\n"


@dataclass(frozen=True)
class Written:
    """What a report wrote, and the sections it was made of (for a terminal summary)."""

    files: list[Path]
    sections: list[Section]
    notes: list[str]  # logs skipped, superseded or combined, one line each

    @property
    def main(self) -> Path | None:
        """The file to open first: the HTML page, else the Markdown, else the folder's first."""
        for suffix in (".html", ".md", ".csv"):
            if found := next((p for p in self.files if p.suffix == suffix), None):
                return found
        return None


def write_report(
    paths: Sequence[str | Path],
    out: str | Path,
    fmt: Format = "md",
    compare: Sequence[Sequence[str]] | None = None,
    prices: Mapping[str, Price] | None = None,
) -> Written:
    """Read the logs under ``paths``, write the report into ``out``, and nowhere else; costs
    come from ``prices`` (model -> dollars per million tokens).

    A log the report cannot use is skipped with a note; an InputError when none is usable.
    """
    runs, notes = load_runs(paths, check=lambda run: build_sections([run]))
    if not runs:
        raise InputError(_nothing_to_report(paths, notes))
    prices = prices or {}
    sections = build_sections(runs, resolve_pairs(runs, compare) if compare else None, prices)
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InputError(f"--out {out}: a file is in the way; give a folder") from None
    written: list[Path] = []
    if fmt == "csv":
        for section in sections:
            for table in section.tables:
                path = report_file(out, table.key, ".csv")
                path.write_text(to_csv(table), encoding="utf-8")
                written.append(path)
        return Written(written, sections, notes)
    for section in sections:
        plots.draw(section, out)
        written += [out / name for name, _ in section.figures]
    md = report_file(out, "report", ".md")
    md.write_text(markdown(sections, runs, notes), encoding="utf-8")
    written.append(md)
    if fmt == "html":
        page = report_file(out, "report", ".html")
        page.write_text(
            html.render(sections, [f"{r.name}: {r.path}" for r in runs], notes), encoding="utf-8"
        )
        board = report_file(out, "leaderboard", ".html")
        board.write_text(leaderboard.render(runs, out, prices), encoding="utf-8")
        written += [page, board]
    return Written(written, sections, notes)


def _nothing_to_report(paths: Sequence[str | Path], notes: Sequence[str]) -> str:
    """One line: no usable log, and why (the first reasons, then how many more)."""
    given = ", ".join(str(p) for p in paths)
    if not notes:
        return f"no scievals logs found in {given}"
    shown = "; ".join(notes[:3]) + (f"; and {len(notes) - 3} more" if len(notes) > 3 else "")
    return f"no scievals log to report in {given} ({shown})"
