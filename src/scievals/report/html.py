"""The report as one static HTML page: every benchmark's results first, then the details.

Inline style, tables, and the PNGs beside it by relative link: it opens from disk with no server
and no network. Every piece of text from a log is escaped. The full protocol record of each run
is one click away (a ``details`` element under its benchmark).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape
from urllib.parse import quote

from scievals.report.build import Section
from scievals.report.tables import Pct, Table, text

COUNT = re.compile(r"\d+(\.\d+)?/\d+")  # "3/50", "1.5/4": aligned as numbers
STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.2em 2em; color: #222; }
h1 { font-size: 1.5em; margin: 0 0 0.3em; } h2 { margin: 1em 0 0.3em; }
h3 { font-size: 1em; margin: 0.8em 0 0.2em; }
nav { font-size: 0.9em; margin-bottom: 0.5em; }
table { border-collapse: collapse; margin: 0.3em 0 0.2em; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; white-space: nowrap; }
td.wide { max-width: 32em; }
p.note { color: #555; font-size: 0.8em; margin: 0.1em 0; max-width: 75em; }
details { margin: 0.4em 0; } summary { cursor: pointer; font-weight: 600; }
figure { display: inline-block; margin: 0.5em 1em 0.5em 0; }
figcaption { font-size: 0.85em; color: #555; }
img { max-width: 100%; }
"""


def page(title: str, body: Sequence[str], style: str = STYLE, script: str = "") -> str:
    """A complete static page around ``body`` (already escaped HTML)."""
    tail = f"<script>{script}</script>" if script else ""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            f'<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>',
            '<link rel="icon" href="data:,">',  # no favicon request: the page fetches nothing
            f"<style>{style}</style></head><body>",
            *body,
            f"{tail}</body></html>\n",
        ]
    )


def table_html(table: Table, heading: bool = True) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in table.columns)
    body = []
    for row in table.rows:
        cells = []
        for c in row:
            count = isinstance(c, str) and COUNT.fullmatch(c) is not None
            kind = "num" if count or isinstance(c, Pct | int | float) else "wide"
            cells.append(f'<td class="{kind}">{escape(text(c))}</td>')
        body.append(f"<tr>{''.join(cells)}</tr>")
    notes = "".join(f'<p class="note">{escape(n)}</p>' for n in table.notes)
    title = f'<h3 id="{escape(table.key)}">{escape(table.title)}</h3>\n' if heading else ""
    return (
        f'{title}<table id="t-{escape(table.key)}"><thead><tr>{head}</tr></thead><tbody>\n'
        + "\n".join(body)
        + f"\n</tbody></table>\n{notes}\n"
    )


def figure_html(name: str, caption: str) -> str:
    return (
        f'<figure><img src="{escape(quote(name), quote=True)}" alt="{escape(caption)}">'
        f"<figcaption>{escape(caption)}</figcaption></figure>"
    )


def render(sections: Sequence[Section], logs: Sequence[str], notes: Sequence[str]) -> str:
    """The whole page; figures are linked by their file names, relative to the page."""
    body = [
        "<h1>scievals report</h1>",
        '<nav><a href="leaderboard.html">Leaderboard (one table per protocol)</a></nav>',
        "<h2>Results</h2>",
        *[table_html(section.tables[0]) for section in sections],
    ]
    for section in sections:
        protocol, *rest = section.tables[1:]
        body.append(f'<h2 id="{escape(section.benchmark)}">{escape(section.benchmark)}</h2>')
        body.append(
            f"<details><summary>{escape(protocol.title)}</summary>"
            f"{table_html(protocol, heading=False)}</details>"
        )
        body += [table_html(t) for t in rest]
        body += [figure_html(name, caption) for name, caption in section.figures]
    body.append("<h2>Logs read</h2><ul>")
    body += [f"<li><code>{escape(path)}</code></li>" for path in logs]
    body.append("</ul>")
    body += [f'<p class="note">{escape(n)}</p>' for n in notes]
    return page("scievals report", body)
