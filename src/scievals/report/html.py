"""One static HTML page: inline style, tables, and the PNGs beside it by relative link.

Opens from disk with no server and no network; every piece of text from a log is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from urllib.parse import quote

from scievals.report.build import Section
from scievals.report.tables import Pct, Table, text

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 0.3em; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; white-space: nowrap; }
p.note { color: #555; font-size: 0.85em; margin: 0.2em 0; }
figure { display: inline-block; margin: 0.5em 1em 0.5em 0; }
figcaption { font-size: 0.85em; color: #555; }
img { max-width: 100%; }
"""


def _table(table: Table) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in table.columns)
    body = []
    for row in table.rows:
        cells = "".join(
            f'<td class="num">{escape(text(c))}</td>'
            if isinstance(c, Pct | int | float)
            else f"<td>{escape(text(c))}</td>"
            for c in row
        )
        body.append(f"<tr>{cells}</tr>")
    notes = "".join(f'<p class="note">{escape(n)}</p>' for n in table.notes)
    return (
        f'<h3 id="{escape(table.key)}">{escape(table.title)}</h3>\n'
        f"<table><thead><tr>{head}</tr></thead><tbody>\n"
        + "\n".join(body)
        + f"\n</tbody></table>\n{notes}\n"
    )


def render(sections: Sequence[Section], logs: Sequence[str], notes: Sequence[str]) -> str:
    """The whole page; figures are linked by their file names, relative to the page."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>scievals report</title>',
        f"<style>{STYLE}</style></head><body>",
        "<h1>scievals report</h1>",
    ]
    for section in sections:
        parts.append(f"<h2>{escape(section.benchmark)}</h2>")
        for table in section.tables:
            parts.append(_table(table))
        for name, caption in section.figures:
            parts.append(
                f'<figure><img src="{escape(quote(name), quote=True)}" alt="{escape(caption)}">'
                f"<figcaption>{escape(caption)}</figcaption></figure>"
            )
    parts.append("<h2>Logs read</h2><ul>")
    parts += [f"<li><code>{escape(path)}</code></li>" for path in logs]
    parts.append("</ul>")
    parts += [f'<p class="note">{escape(n)}</p>' for n in notes]
    parts.append("</body></html>\n")
    return "\n".join(parts)
