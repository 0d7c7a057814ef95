"""A static leaderboard page over many logs: one sortable table per benchmark and protocol.

Runs are grouped by the protocol record their task wrote (every key, whatever it holds), so runs
measured differently never share a table or a row. Each row is a model with its headline scores,
95% intervals drawn as bars, and counts, pass@k with several epochs, the published value of the
same model under the same protocol and ours minus it, tokens, time and cost; published figures
measured under the same protocol sit beside them, marked as such, linked to their source; each
table has its plot. Sorting is a few lines of inline script on
``data-v`` values: the page needs no server and fetches nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

from scievals.report import outcomes as oc
from scievals.report import plots
from scievals.report.build import (
    INTERVAL_NOTE,
    Section,
    applicable,
    count_label,
    describe_settings,
    differing,
    headline_metrics,
    k_of_n,
    pass_at_cell,
    pass_at_label,
)
from scievals.report.evaluation import versus
from scievals.report.html import STYLE, figure_html, page
from scievals.report.load import Run
from scievals.report.published import references_for
from scievals.report.tables import Pct, text
from scievals.report.usage import Price, dollars, duration, usage
from scievals.stats import Estimate, estimate

BAR = 120  # pixels for 0..100%

SORT = """
document.querySelectorAll("table.board").forEach((table) => {
  table.querySelectorAll("th").forEach((th, i) => {
    th.addEventListener("click", () => {
      const body = table.tBodies[0];
      const up = th.dataset.dir !== "up";
      th.dataset.dir = up ? "up" : "down";
      const key = (row) => row.cells[i].dataset.v;
      const rows = Array.from(body.rows).sort((a, b) => {
        const x = parseFloat(key(a)), y = parseFloat(key(b));
        const d = isNaN(x) || isNaN(y) ? key(a).localeCompare(key(b)) : x - y;
        return up ? d : -d;
      });
      rows.forEach((row) => body.appendChild(row));
    });
  });
});
"""
PUBLISHED_NOTE = (  # said only under a table that has published rows
    " Published rows (italic) were measured elsewhere under this protocol; they have no interval"
    " here."
)
BOARD_STYLE = (
    STYLE
    + """
table.board th { cursor: pointer; user-select: none; }
table.board th::after { content: " \\2195"; color: #999; }
tr.published td { color: #666; font-style: italic; }
svg.ci { vertical-align: middle; margin-right: 0.4em; }
"""
)


def groups(runs: Sequence[Run]) -> list[tuple[str, list[Run]]]:
    """(benchmark, runs) per distinct protocol record, in run order."""
    out: dict[str, tuple[str, list[Run]]] = {}
    for run in runs:
        key = json.dumps([run.benchmark, run.protocol], sort_keys=True, default=str)
        out.setdefault(key, (run.benchmark, []))[1].append(run)
    return list(out.values())


def _bar(est: Estimate) -> str:
    """The interval as a line over a 0..100% track, the estimate as a dot."""
    x = [round(BAR * v, 1) for v in (est.lo, est.value, est.hi)]
    label = f"{100 * est.value:.1f}% [{100 * est.lo:.1f}, {100 * est.hi:.1f}]"
    return (
        f'<svg class="ci" width="{BAR}" height="12" role="img" aria-label="{label}">'
        f'<line x1="0" y1="6" x2="{BAR}" y2="6" stroke="#ddd"/>'
        f'<line x1="{x[0]}" y1="6" x2="{x[2]}" y2="6" stroke="#4c78a8" stroke-width="4"/>'
        f'<circle cx="{x[1]}" cy="6" r="3.5" fill="#1f3b5c"/></svg>'
    )


def _cell(value: object, shown: str | None = None) -> str:
    return f'<td data-v="{escape(str(value), quote=True)}">{shown or escape(str(value))}</td>'


def _score(est: Estimate | None) -> str:
    if est is None:
        return _cell(-1, "-")
    text = f"{100 * est.value:.1f} [{100 * est.lo:.1f}, {100 * est.hi:.1f}]"
    return _cell(f"{100 * est.value:.4f}", _bar(est) + escape(text))


def _pass_at(cell: Pct | None) -> str:
    """pass@k at the run's epochs, with its interval (its k is the run's epochs)."""
    return _cell(-1, "-") if cell is None else _cell(f"{cell.value:.4f}", escape(text(cell)))


def _versus(run: Run) -> str:
    """The published values of this run's model and protocol, and ours minus each."""
    found = versus(run)
    shown = "; ".join(
        f"{oc.metric_label(v.metric)} {v.published:.1f} ({v.ref.source}): "
        f"{v.delta:+.1f}, {'outside' if v.outside else 'inside'} our CI"
        for v in found
    )
    return _cell(f"{found[0].delta:.4f}", escape(shown)) if found else _cell(-1, "-")


def _usage(run: Run, prices: Mapping[str, Price]) -> list[str]:
    u = usage(run, prices)
    tokens = f"{u.input:,} / {u.output:,} / {u.reasoning:,}"
    return [
        _cell(u.input + u.output, escape(tokens)),
        _cell(-1 if u.seconds is None else u.seconds, escape(duration(u.seconds))),
        _cell(-1 if u.cost is None else u.cost, escape(dollars(u.cost))),
    ]


def _table(
    index: int,
    number: int,
    benchmark: str,
    runs: list[Run],
    out: Path,
    prices: Mapping[str, Price],
) -> list[str]:
    """The ``number``-th protocol of ``benchmark``, the ``index``-th table of the page (its
    anchor and plot file)."""
    metrics = headline_metrics(runs)
    differ = differing(runs)
    repeated = any(run.epochs > 1 for run in runs)
    beside = any(versus(run) for run in runs)
    head = ["model", "run"]
    for m in metrics:
        head += [f"{oc.metric_label(m)} % [95% CI]", count_label(m)]
        head += [pass_at_label(m)] if repeated else []
    head += ["published, same model: value (source): ours - published"] if beside else []
    head += ["tokens in / out / reasoning", "wall time", "cost"]
    head += ["settings"] if differ else []
    rows: list[tuple[float, str]] = []
    for run in runs:
        ests = {m: estimate(oc.outcomes_for(run, m)) for m in oc.metrics_of(run)}
        cells = [_cell(run.model), _cell(run.name)]
        for m in metrics:
            cells += [_score(ests.get(m)), _cell(k_of_n(ests.get(m)))]
            cells += [_pass_at(pass_at_cell(run, m))] if repeated else []
        cells += [_versus(run)] if beside else []
        cells += _usage(run, prices)
        cells += [_cell(describe_settings(run, differ))] if differ else []
        first = ests.get(metrics[0])
        rows.append((first.value if first else -1.0, f"<tr>{''.join(cells)}</tr>"))
    refs = references_for(runs[0].protocol)
    for ref in refs:
        link = f'<a href="{escape(ref.url, quote=True)}">{escape(ref.source)}</a>'
        cells = [_cell(ref.model), _cell(f"published: {ref.source}", f"published: {link}")]
        for m in metrics:
            value = ref.metrics.get(m)
            cells += [_cell(-1, "-") if value is None else _cell(value, f"{value:.1f}"), _cell("")]
            cells += [_cell(-1, "-")] if repeated else []
        cells += [_cell(-1, "-")] if beside else []
        cells += [_cell(-1, "-")] * 3
        cells += [_cell("")] if differ else []
        key = ref.metrics.get(metrics[0], -1.0) / 100
        rows.append((key, f'<tr class="published">{"".join(cells)}</tr>'))
    rows.sort(key=lambda r: -r[0])
    figure = plots.runs_plot(Section(benchmark, runs, [], []), out, f"leaderboard_{index}")
    protocol = describe_settings(runs[0], [x for x in applicable(runs) if x not in differ])
    return [
        f'<h2 id="board-{index}">{escape(benchmark)}, protocol {number}</h2>',
        f'<p class="note">Protocol: {escape(protocol)}</p>',
        f'<table class="board"><thead><tr>{"".join(f"<th>{escape(h)}</th>" for h in head)}'
        "</tr></thead><tbody>",
        *[row for _, row in rows],
        "</tbody></table>",
        '<p class="note">Click a column to sort.' + (PUBLISHED_NOTE if refs else "") + "</p>",
        figure_html(figure, f"{benchmark}: runs of this protocol"),
    ]


def render(runs: Sequence[Run], out: Path, prices: Mapping[str, Price] | None = None) -> str:
    """The page; writes each table's plot into ``out`` beside it (costs from ``prices``)."""
    body = [
        "<h1>scievals leaderboard</h1>",
        '<nav><a href="report.html">Full report</a></nav>',
        f'<p class="note">{escape(INTERVAL_NOTE)}</p>',
    ]
    numbers: dict[str, int] = {}
    for i, (benchmark, members) in enumerate(groups(runs), 1):
        numbers[benchmark] = numbers.get(benchmark, 0) + 1  # protocol 1 is each benchmark's first
        body += _table(i, numbers[benchmark], benchmark, members, out, prices or {})
    return page("scievals leaderboard", body, BOARD_STYLE, SORT)
