"""PNG figures (matplotlib, Agg backend: no display needed): run comparison, SciBench per-book
accuracy, SciCode steps-passed heat map. Each function writes one file and returns its name."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ParamSpec

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from scievals.report import outcomes as oc  # noqa: E402
from scievals.report.build import Section, headline_metrics  # noqa: E402
from scievals.report.load import Run, natural_key  # noqa: E402
from scievals.report.names import report_file  # noqa: E402
from scievals.stats import Estimate, estimate  # noqa: E402

P = ParamSpec("P")


def _label(run: Run) -> str:
    setting = oc.describe(run.protocol.get("prompt"))
    return f"{run.name} {run.model} ({setting})"


def _errorbars(ests: Sequence[Estimate | None]) -> tuple[np.ndarray, np.ndarray]:
    """Values and asymmetric error bars in percent; NaN where a run has no estimate."""
    vals = np.array([100 * e.value if e else np.nan for e in ests])
    lo = np.array([100 * (e.value - e.lo) if e else 0.0 for e in ests])
    hi = np.array([100 * (e.hi - e.value) if e else 0.0 for e in ests])
    return vals, np.vstack([lo, hi])


def _save(fig: plt.Figure, out: Path, stem: str) -> str:
    """Write the figure as ``out/<safe stem>.png`` and return that file's name."""
    path = report_file(out, stem, ".png")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def _plain_text(draw: Callable[P, str]) -> Callable[P, str]:
    """Labels are shown as written: a "$" in a model or benchmark name is not mathtext to parse
    (an unbalanced one would stop the report), and a character the font lacks is drawn as a box
    without a warning per figure."""

    @functools.wraps(draw)
    def drawn(*args: P.args, **kwargs: P.kwargs) -> str:
        with plt.rc_context({"text.parse_math": False}), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Glyph .* missing from font")
            return draw(*args, **kwargs)

    return drawn


@_plain_text
def runs_plot(section: Section, out: Path, stem: str | None = None) -> str:
    """Each headline metric of each run, with its 95% interval: the model comparison."""
    metrics = headline_metrics(section.runs)
    runs = section.runs
    fig, axes = plt.subplots(
        1, len(metrics), figsize=(5 * len(metrics), 0.5 * len(runs) + 1.6), squeeze=False
    )
    y = np.arange(len(runs))
    for ax, metric in zip(axes[0], metrics, strict=True):
        ests = [
            estimate(oc.outcomes_for(r, metric)) if metric in oc.metrics_of(r) else None
            for r in runs
        ]
        vals, err = _errorbars(ests)
        ax.barh(y, vals, xerr=err, color="#4c78a8", capsize=3)
        ax.set_yticks(y, [_label(r) for r in runs] if ax is axes[0][0] else [""] * len(runs))
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel(f"{oc.metric_label(metric)} % (95% CI)")
    fig.suptitle(f"{section.benchmark}: runs compared")
    return _save(fig, out, stem or f"{section.benchmark}_runs")


@_plain_text
def books_plot(section: Section, scorer: str, out: Path) -> str:
    """SciBench accuracy per book, one bar per run, with 95% intervals."""
    runs = [r for r in section.runs if scorer in oc.scibench_scorers(r)]
    grouped = [oc.scibench_outcomes(r, scorer, "book") for r in runs]
    books = sorted({b for g in grouped for b in g}, key=natural_key)
    x = np.arange(len(books))
    width = 0.8 / max(len(runs), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(books) + 2), 4))
    for i, (run, groups) in enumerate(zip(runs, grouped, strict=True)):
        vals, err = _errorbars([estimate(groups.get(b, [])) for b in books])
        ax.bar(
            x + (i - (len(runs) - 1) / 2) * width,
            vals,
            width,
            yerr=err,
            capsize=2,
            label=_label(run),
        )
    ax.set_xticks(x, books, rotation=30, ha="right")
    ax.set_ylim(0, 100)
    ax.set_ylabel(f"{scorer} accuracy % (95% CI)")
    ax.legend(fontsize="small")
    ax.set_title(f"scibench: accuracy per book ({scorer})")
    return _save(fig, out, f"scibench_books_{scorer}")


@_plain_text
def steps_heatmap(run: Run, out: Path) -> str:
    """Pass rate of every step of every problem (rows problems, columns step number)."""
    grid = oc.scicode_step_grid(run)
    problems = sorted(grid, key=natural_key)
    width = max((len(steps) for steps in grid.values()), default=1)
    data = np.full((len(problems), width), np.nan)
    for i, pid in enumerate(problems):
        for j, step in enumerate(sorted(grid[pid], key=natural_key)):
            data[i, j] = grid[pid][step]
    fig, ax = plt.subplots(figsize=(max(4.5, 1.5 + 0.4 * width), 1.5 + 0.22 * len(problems)))
    cmap = plt.get_cmap("RdYlGn").with_extremes(bad="#eeeeee")  # grey: no such step
    image = ax.imshow(data, cmap=cmap, vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    ax.set_yticks(np.arange(len(problems)), problems, fontsize="small")
    ax.set_xticks(np.arange(width), [str(k + 1) for k in range(width)])
    ax.set_xlabel("step")
    ax.set_ylabel("problem")
    fig.colorbar(image, ax=ax, label="passed (share of epochs)")
    ax.set_title(f"{run.name} {run.model}: steps passed", fontsize="medium")
    return _save(fig, out, f"scicode_steps_{run.name}")


def draw(section: Section, out: Path) -> None:
    """Write every figure of a section into ``out`` and record them on the section."""
    out.mkdir(parents=True, exist_ok=True)
    section.figures.append((runs_plot(section, out), f"{section.benchmark}: runs compared"))
    if section.benchmark == "scibench":
        scorers = sorted(
            {m for r in section.runs for m in oc.scibench_scorers(r)},
            key=lambda m: (m not in oc.SCIBENCH_SCORERS, m),
        )
        for scorer in scorers:
            section.figures.append(
                (books_plot(section, scorer, out), f"scibench: accuracy per book ({scorer})")
            )
    elif section.benchmark == "scicode":
        for run in section.runs:
            section.figures.append(
                (steps_heatmap(run, out), f"{run.name} {run.model}: steps passed per problem")
            )
