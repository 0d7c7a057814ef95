"""What a run cost: input, output and reasoning tokens, wall time, and money where prices are given.

Tokens are Inspect's per-model counts from the log (``stats.model_usage``), every model a run
called (a grader too). Prices are the user's, in US dollars per million tokens, one
``MODEL=INPUT,OUTPUT`` per ``--price`` or per line of a ``--prices`` file; a model matches by its
full name (``openai/gpt-4o``) or its last part (``gpt-4o``). Cost = input and cache tokens at the
input price plus output tokens at the output price: reasoning tokens are counted inside output
tokens by the providers that report them, so they are shown but not charged again, and cache
discounts are not applied (an upper bound). A run whose log holds counts that are not counts
(negative, or more than any run spends) has them left out by the reader, a note saying so, and no
cost.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scievals.inputs import InputError
from scievals.report.load import Run
from scievals.report.tables import Table

PER = 1_000_000


@dataclass(frozen=True)
class Price:
    """US dollars per million input and per million output tokens."""

    input: float
    output: float


def parse_price(spec: str, where: str = "--price") -> tuple[str, Price]:
    """``MODEL=INPUT,OUTPUT`` -> (model, price); an InputError naming ``where`` otherwise."""
    model, sep, values = spec.partition("=")
    parts = values.split(",")
    try:
        if not sep or not model.strip() or len(parts) != 2:
            raise ValueError
        price = Price(float(parts[0]), float(parts[1]))
    except ValueError:
        raise InputError(
            f"{where}: expected MODEL=INPUT,OUTPUT (dollars per million tokens), not {spec!r}"
        ) from None
    if not all(math.isfinite(v) and v >= 0 for v in (price.input, price.output)):
        raise InputError(f"{where}: prices must be finite and 0 or more, not {spec!r}")
    return model.strip(), price


def read_prices(path: str | Path) -> dict[str, Price]:
    """A prices file: one ``MODEL=INPUT,OUTPUT`` per line; blank lines and ``#`` comments skipped."""
    prices: dict[str, Price] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--prices {path}: cannot be read ({exc})") from None
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if text:
            model, price = parse_price(text, f"{path}:{number}")
            prices[model] = price
    return prices


def price_for(model: str, prices: Mapping[str, Price]) -> Price | None:
    """The price of ``model``: by its full name, else by its last part."""
    return prices.get(model) or prices.get(model.rsplit("/", 1)[-1])


@dataclass(frozen=True)
class Usage:
    input: int
    output: int
    reasoning: int
    seconds: float | None
    cost: float | None  # None when no price was given for a model the run used, or counts lack
    unpriced: tuple[str, ...]


def usage(run: Run, prices: Mapping[str, Price]) -> Usage:
    """A run's tokens (all models), wall time, and cost when every model it used has a price."""
    totals = {key: sum(u.get(key, 0) for u in run.usage.values()) for key in ("input", "output")}
    unpriced = tuple(sorted(m for m in run.usage if price_for(m, prices) is None))
    cost = None
    if run.usage and not unpriced and not run.usage_notes:
        cost = 0.0
        for model, counts in run.usage.items():
            price = price_for(model, prices)
            assert price is not None
            cost += (counts.get("input", 0) + counts.get("cache", 0)) * price.input / PER
            cost += counts.get("output", 0) * price.output / PER
    return Usage(
        totals["input"],
        totals["output"],
        sum(u.get("reasoning", 0) for u in run.usage.values()),
        run.seconds,
        cost,
        unpriced,
    )


def duration(seconds: float | None) -> str:
    """``1 h 02 min``, ``4 min 31 s``, ``52 s``; ``-`` when unknown."""
    if seconds is None:
        return "-"
    whole = round(seconds)
    if whole >= 3600:
        return f"{whole // 3600} h {whole % 3600 // 60:02d} min"
    if whole >= 60:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole} s"


def dollars(cost: float | None) -> str:
    """``$1,234.50``; below a cent, enough digits to see it (``$0.000006``)."""
    if cost is None:
        return "-"
    return f"${cost:,.2f}" if cost >= 0.01 or cost == 0 else f"${cost:.8f}".rstrip("0")


USAGE_COLUMNS = ["input tokens", "output tokens", "reasoning tokens", "wall time", "cost"]


def usage_cells(run: Run, prices: Mapping[str, Price]) -> list[str | int]:
    """The usage columns of one run, in ``USAGE_COLUMNS`` order; no token totals where the log's
    counts were left out (a note says which)."""
    u = usage(run, prices)
    tokens: list[str | int] = ["-"] * 3 if run.usage_notes else [u.input, u.output, u.reasoning]
    return [*tokens, duration(u.seconds), dollars(u.cost)]


def usage_table(benchmark: str, runs: Sequence[Run], prices: Mapping[str, Price]) -> Table:
    """Tokens, wall time and cost of each run."""
    rows = [[run.name, run.model, *usage_cells(run, prices)] for run in runs]
    notes = [
        "Tokens as Inspect counted them, every model a run called; wall time from the log's "
        "start to its end (summed over a combined run's logs). Cost from the prices given "
        "(--price MODEL=IN,OUT or --prices FILE, dollars per million tokens): input and cache "
        "tokens at the input price, output tokens (reasoning included) at the output price."
    ]
    missing = sorted({m for run in runs for m in usage(run, prices).unpriced})
    if missing:
        notes.append(f"No price given for: {', '.join(missing)} (their runs' cost is '-').")
    uncounted = [run.name for run in runs if not run.usage and not run.usage_notes]
    if uncounted:
        notes.append(f"{', '.join(uncounted)}: the log records no token counts (cost '-').")
    notes += [f"{run.name}: {note} (cost '-')." for run in runs for note in run.usage_notes]
    return Table(
        f"{benchmark}_usage",
        f"{benchmark}: tokens, time and cost",
        ["run", "model", *USAGE_COLUMNS],
        rows,
        notes,
    )
