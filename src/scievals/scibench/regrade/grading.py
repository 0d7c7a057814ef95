"""Each run's replies graded through ``scievals grade scibench``'s own code (``grade_lines``),
by the ``opencompass``, ``faithful`` and ``robust`` scorers, on the data version they fit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scievals.artifacts import ArtifactError
from scievals.inputs import InputError, JsonLine
from scievals.scibench.dataset import VERSIONS, Record
from scievals.scibench.dataset import Source as Data
from scievals.scibench.grade import GRADE_SCORERS, grade_lines
from scievals.scibench.regrade.layout import Run
from scievals.scibench.regrade.mapping import Mapped, map_dataset

Verdicts = dict[str, dict[str, Any]]
"""Scorer -> the line ``scievals grade scibench --scorer`` writes for one reply."""


@dataclass(frozen=True)
class Item:
    """One graded problem: the reply, its problem, what the source recorded and each verdict."""

    abbr: str
    position: int
    record: Record
    response: str
    recorded: tuple[str, bool] | None
    """What OpenCompass's results file says of it: (what it extracted, its verdict)."""
    verdicts: Verdicts


@dataclass
class Graded:
    run: Run
    version: str
    items: list[Item] = field(default_factory=list)
    not_graded: list[str] = field(default_factory=list)
    """One line per prediction that was not graded, and why."""


MAX_LINES = 20
"""Lines about one dataset's predictions; past them, one line counts the rest."""


def _bound(lines: list[str], start: int, abbr: str) -> None:
    """Keep at most ``MAX_LINES`` of ``lines[start:]``, and a line that counts the others."""
    if len(lines) - start > MAX_LINES:
        rest = len(lines) - start - MAX_LINES
        del lines[start + MAX_LINES :]
        lines.append(f"{abbr}: {rest} more predictions not graded")


class Books:
    """The test problems of each book of one data version, read once."""

    def __init__(self, version: str, data_dir: str | None) -> None:
        self.data = Data(version, data_dir)
        self._books: dict[str, list[Record]] = {}

    def __call__(self, book: str) -> list[Record]:
        if book not in self._books:
            self._books[book] = self.data.book(book)
        return self._books[book]


class Library:
    """Each SciBench version's books, opened on first use (a version this machine cannot get
    is remembered as its error)."""

    def __init__(self, data_dir: str | None) -> None:
        self.data_dir = data_dir
        self._versions: dict[str, Books | Exception] = {}

    def __getitem__(self, version: str) -> Books | Exception:
        if version not in self._versions:
            try:
                self._versions[version] = Books(version, self.data_dir)
            except (InputError, ArtifactError, FileNotFoundError) as exc:
                self._versions[version] = exc
        return self._versions[version]


def choose_version(
    run: Run, version: str, library: Library
) -> tuple[Books, dict[str, list[Mapped]]]:
    """The data version to grade ``run`` on (``auto``: the one most of its predictions fit,
    main on a tie) and each of its datasets' mapping on it, by abbr."""
    best: tuple[int, Books, dict[str, list[Mapped]]] | None = None
    failed: list[Exception] = []
    for candidate in VERSIONS if version == "auto" else (version,):
        books = library[candidate]
        try:
            if isinstance(books, Exception):
                raise books
            mapping = {d.abbr: map_dataset(d, books(d.book)) for d in run.datasets}
        except (InputError, ArtifactError, FileNotFoundError) as exc:
            failed.append(exc)  # with auto, a version this machine lacks is not a candidate
            continue
        fitted = sum(m.index is not None for ms in mapping.values() for m in ms)
        if best is None or fitted > best[0]:
            best = (fitted, books, mapping)
    if best is None:
        raise failed[0]
    return best[1], best[2]


@dataclass
class Chosen:
    """A run's replies to grade, one per problem, in order (``lines``: book, index, reply), what
    its results file says of each (``kept``), and its ``Graded`` with why each other prediction
    is not graded."""

    graded: Graded
    lines: list[JsonLine] = field(default_factory=list)
    kept: list[tuple[str, Mapped, tuple[str, bool] | None]] = field(default_factory=list)

    def replies(self) -> dict[tuple[str, int], str]:
        """(book, index) -> the reply graded for it."""
        return {(line.values[0], line.values[1]): line.values[2] for line in self.lines}


def choose(
    run: Run, books: Books, mapping: dict[str, list[Mapped]], say: Callable[[str], None]
) -> Chosen:
    """Every reply of ``run`` that answers a problem (the first, where two answer one)."""
    chosen = Chosen(Graded(run, books.data.version))
    not_graded = chosen.graded.not_graded
    seen: dict[tuple[str, int], str] = {}
    for dataset in run.datasets:
        recorded = dataset.recorded.verdicts if dataset.recorded else None
        mapped = mapping[dataset.abbr]
        if mapped and all(m.index is None for m in mapped):
            not_graded.append(
                f"{dataset.abbr}: none of its {len(mapped)} predictions answers a {dataset.book} "
                f"problem (the first: {mapped[0].how}): a file of another dataset? not graded"
            )
            continue
        lines_before = len(not_graded)
        for m in mapped:
            where = f"{dataset.abbr} #{m.prediction.position}"
            key = None if m.index is None else (dataset.book, m.index)
            if m.prediction.response is None:
                not_graded.append(f"{where}: {m.prediction.why}: not graded")
            elif key is None:
                not_graded.append(f"{where}: answers no problem ({m.how}): not graded")
            elif key in seen:
                not_graded.append(
                    f"{where}: answers {dataset.book} {m.index}, as {seen[key]} does: graded once"
                )
            else:
                seen[key] = where
                file = Path(dataset.files[0]) if dataset.files else Path(dataset.abbr)
                line = JsonLine(file, m.prediction.position, (*key, m.prediction.response))
                chosen.lines.append(line)
                chosen.kept.append((dataset.abbr, m, (recorded or {}).get(m.prediction.position)))
        _bound(not_graded, lines_before, dataset.abbr)
    for line in not_graded:
        say(f"{run.label}: {line}")
    return chosen


def grade(
    chosen: Chosen, books: Books, logged: dict[tuple[str, int], Verdicts] | None = None
) -> Graded:
    """The chosen replies graded by each of ``GRADE_SCORERS``, or their verdicts as the run's log
    holds them (``logged``, by book and index: a resumed re-grade)."""
    graded, lines = chosen.graded, chosen.lines
    if logged is None:
        verdicts = {s: list(grade_lines(lines, books.data, s)) for s in GRADE_SCORERS}
    else:
        verdicts = {s: [logged[line.values[:2]][s] for line in lines] for s in GRADE_SCORERS}
    for n, (abbr, m, recorded) in enumerate(chosen.kept):
        assert m.index is not None and m.prediction.response is not None
        record = books(lines[n].values[0])[m.index]
        graded.items.append(
            Item(
                abbr,
                m.prediction.position,
                record,
                m.prediction.response,
                recorded,
                {s: verdicts[s][n] for s in GRADE_SCORERS},
            )
        )
    return graded
