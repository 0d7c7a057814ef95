"""OpenCompass's output folder, read back as SciBench replies: which files, and what they hold.

The layout its runner writes (``opencompass/tasks/openicl_infer.py`` and ``openicl_eval.py``;
the names are its SciBench config's, ``configs/datasets/scibench/scibench_gen_2b21f3.py``)::

    outputs/<config>/<timestamp>/
      predictions/<model_abbr>/<dataset_abbr>.json     {"0": {"origin_prompt", "prediction",
                                                         "gold"}, "1": ...}
      predictions/<model_abbr>/<dataset_abbr>_<k>.json  the same, for one part of a split dataset
      results/<model_abbr>/<dataset_abbr>.json          {"accuracy": 45.7[, "details": {...}]}

``dataset_abbr`` is ``scibench-<book>`` for its zero-shot prompt and ``scibench-<book>_<type>``
for ``zs-cot``, ``fs`` and ``fs-cot``. ``origin_prompt`` is a string, or a list of turns
(``{"role": "HUMAN", "prompt": ...}``) for API models; ``gold`` is the stripped
``answer_number``, absent when empty. A split dataset's parts are numbered from 0, each keyed
from "0", and joined in order (its evaluator stops at the first missing part). ``results`` holds
its evaluator's output (``AccEvaluator``: accuracy in percent), with ``details`` per prediction
(``predictions``: what its postprocessor extracted, ``references``, and ``correct`` where the
evaluator says) when run with ``dump_details``.

SOURCE may be ``outputs/<config>/`` (several timestamps), one ``<timestamp>/``, its
``predictions/``, one model's folder or one prediction file, told apart by what they hold;
results are read only inside SOURCE. Folders are listed, never walked: at most ``MAX_ENTRIES``
names each, and a symlink out of SOURCE is a line, as is every file ``bounded`` refuses.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scievals.inputs import InputError
from scievals.scibench.dataset import BOOKS
from scievals.scibench.regrade.bounded import Unreadable, inside, read_json

MAX_ENTRIES = 10_000
"""Names read in one folder: an OpenCompass model folder holds one file per dataset."""
HEAD_BYTES = 4096
"""What ``is_opencompass_output`` reads of a file."""
DATASET_FILE = re.compile(
    r"scibench-(?P<book>[A-Za-z]+)(?:_(?P<kind>zs-cot|fs-cot|fs))?(?:_(?P<part>\d+))?\.json"
)
_HEAD = re.compile(rb'\A\s*\{\s*"0"\s*:\s*\{')
PROMPT_TYPES = ("zs", "zs-cot", "fs", "fs-cot")
VARIANTS = {
    "zs": "opencompass_zs",
    "zs-cot": "opencompass_zs_cot",
    "fs": "opencompass_fs",
    "fs-cot": "opencompass_fs_cot",
}
"""OpenCompass's prompt types and the scievals settings (and presets) that reproduce them."""


@dataclass(frozen=True)
class Prediction:
    """One entry of a prediction file: its place in the dataset, its reply and what it asked."""

    position: int
    response: str | None
    """The reply; None when the entry holds none that can be graded (``why`` says)."""
    prompt: str | None
    gold: str | None
    why: str | None = None


@dataclass(frozen=True)
class Recorded:
    """What OpenCompass's results file says of one dataset."""

    file: str
    accuracy: float | None
    verdicts: dict[int, tuple[str, bool]] | None
    """Position -> (what its postprocessor extracted, its verdict), from ``details``."""


@dataclass(frozen=True)
class Folder:
    """SOURCE's folder: ``real`` bounds what is read, ``shown`` is how paths are named."""

    shown: Path
    real: Path

    def name(self, path: Path) -> str:
        """``path`` as named below SOURCE, on one line."""
        return printable(os.path.relpath(path, self.shown))


def printable(name: str) -> str:
    """A file name as one line of text: a newline or other control character escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


@dataclass
class Dataset:
    """One book of one run: its prediction files, to be joined, and its results file; what
    they hold is read by ``load`` (one run at a time: an archive of many models is never held
    whole) and dropped by ``release``."""

    abbr: str
    book: str
    paths: tuple[Path, ...]
    results: Path | None
    files: tuple[str, ...]
    """``paths`` as named below SOURCE."""
    predictions: list[Prediction] = field(default_factory=list)
    recorded: Recorded | None = None


@dataclass
class Run:
    """One model under one of OpenCompass's four SciBench prompts, book by book."""

    experiment: str | None
    model: str
    prompt_type: str
    root: Folder
    datasets: list[Dataset] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        where = f"{self.experiment}/{self.model}" if self.experiment else self.model
        return f"{printable(where)} {self.prompt_type}"


@dataclass(frozen=True)
class Source:
    path: Path
    layout: str
    """What SOURCE is: ``outputs``, ``experiment``, ``predictions``, ``model`` or ``file``."""
    runs: tuple[Run, ...]
    notes: tuple[str, ...]


def is_opencompass_output(path: Path) -> bool:
    """Whether ``path`` is OpenCompass output (cheap: a few folder listings and one file head)."""
    try:
        if path.is_file():
            return bool(DATASET_FILE.fullmatch(path.name)) or _prediction_head(path)
        if not path.is_dir():
            return False
        if (path / "predictions").is_dir() or _has_dataset_file(path):
            return True
        return any(
            (child / "predictions").is_dir() or _has_dataset_file(child)
            for child in _listing(path, limit=64)
            if child.is_dir()
        )
    except OSError:
        return False


def _prediction_head(path: Path) -> bool:
    """Whether a file begins as OpenCompass writes a prediction file (``{"0": {...``)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        if not os.path.isfile(path):
            return False
        head = fh.read(HEAD_BYTES)
    return bool(_HEAD.match(head)) and (b'"prediction"' in head or b'"origin_prompt"' in head)


def _has_dataset_file(folder: Path) -> bool:
    return any(DATASET_FILE.fullmatch(p.name) for p in _listing(folder, limit=MAX_ENTRIES))


def _listing(folder: Path, limit: int = MAX_ENTRIES) -> list[Path]:
    """At most ``limit`` entries of ``folder``, sorted by name."""
    out: list[Path] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if len(out) >= limit:
                break
            out.append(Path(entry.path))
    return sorted(out)


def read_source(source: Path) -> Source:
    """The runs in SOURCE; an ``InputError`` (one line) when SOURCE is not OpenCompass output."""
    if not source.exists() and not source.is_symlink():
        raise InputError(f"{source}: no such file or directory")
    notes: list[str] = []
    if not source.is_dir():
        match = DATASET_FILE.fullmatch(source.name)
        if match is None:
            raise InputError(
                f"{source} is not an OpenCompass SciBench prediction file: its name is not "
                "scibench-<book>[_<zs-cot|fs|fs-cot>][_<part>].json"
            )
        real = source.resolve()
        root = Folder(source.absolute().parent, real.parent)
        try:  # SOURCE itself: what it is not is the error, not a note
            list(_predictions(read_json(source, root.real), 0))
        except Unreadable as exc:
            raise InputError(f"{source}: {str(exc).removesuffix(': skipped')}") from None
        runs = _model_runs(source.parent, None, real.parent.name, [source], None, notes, root)
        layout = "file"
    else:
        root = Folder(source.absolute(), source.resolve())
        layout, experiments = _experiments(source, root, notes)
        runs = [
            r
            for experiment, folder in experiments
            for r in _experiment_runs(folder, experiment, root, notes, layout)
        ]
    if not any(d.paths for r in runs for d in r.datasets):
        others = [n for n in notes if "of other datasets" in n]
        raise InputError(
            f"{source} holds no OpenCompass SciBench predictions (scibench-<book>*.json in "
            "predictions/<model>/, <model>/ or SOURCE)" + (f": {others[0]}" if others else "")
        )
    return Source(source, layout, tuple(runs), tuple(notes))


def _experiments(
    source: Path, root: Folder, notes: list[str]
) -> tuple[str, list[tuple[str | None, Path]]]:
    """(layout, [(experiment label, its folder)]) for a folder SOURCE."""
    if (source / "predictions").is_dir():
        return "experiment", [(None, source)]
    children = [c for c in _listing(source) if c.is_dir()]
    stamped = [c for c in children if (c / "predictions").is_dir()]
    if stamped:
        kept = []
        for child in stamped:
            if inside(child, root.real) is None:
                notes.append(f"{root.name(child)}: a symlink out of the folder: skipped")
            else:
                kept.append((child.name, child))
        return "outputs", kept
    return ("model" if _has_dataset_file(source) else "predictions"), [(None, source)]


def _experiment_runs(
    folder: Path, experiment: str | None, root: Folder, notes: list[str], layout: str
) -> list[Run]:
    """The runs of one experiment folder (or of a predictions/ or model folder SOURCE)."""
    if layout == "model":
        return _model_runs(folder, experiment, folder.name, _listing(folder), None, notes, root)
    predictions = folder / "predictions" if (folder / "predictions").is_dir() else folder
    results = folder / "results" if predictions != folder else None
    if inside(predictions, root.real) is None:
        notes.append(f"{root.name(predictions)}: a symlink out of the folder: skipped")
        return []
    runs = []
    for model in _listing(predictions):
        if not model.is_dir():
            continue
        where = root.name(model)
        if inside(model, root.real) is None:
            notes.append(f"{where}: a symlink out of the folder: skipped")
            continue
        recorded = results / model.name if results is not None else None
        runs += _model_runs(model, experiment, model.name, _listing(model), recorded, notes, root)
    return runs


def _model_runs(
    folder: Path,
    experiment: str | None,
    model: str,
    names: list[Path],
    results: Path | None,
    notes: list[str],
    root: Folder,
) -> list[Run]:
    """One run per prompt type among ``names`` (a model folder's files)."""
    groups: dict[tuple[str, str], dict[int | None, Path]] = {}
    others = []
    for path in names:
        match = DATASET_FILE.fullmatch(path.name)
        if match is None:
            if path.suffix == ".json" and not path.name.startswith("tmp_"):
                others.append(printable(path.name.removesuffix(".json")))
            elif path.name.startswith("tmp_scibench-"):
                notes.append(
                    f"{root.name(path)}: OpenCompass's unfinished inference (tmp_ file): skipped"
                )
            continue
        book, kind, part = match["book"], match["kind"] or "zs", match["part"]
        if book not in BOOKS:
            notes.append(f"{root.name(path)}: no SciBench book {book!r}: skipped")
            continue
        groups.setdefault((kind, book), {})[None if part is None else int(part)] = path
    if others:
        shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        files = "1 file" if len(others) == 1 else f"{len(others)} files"
        notes.append(f"{root.name(folder)}: {files} of other datasets: {shown}")
    runs: dict[str, Run] = {}
    for (kind, book), parts in sorted(
        groups.items(), key=lambda kv: (PROMPT_TYPES.index(kv[0][0]), kv[0][1])
    ):
        run = runs.setdefault(kind, Run(experiment, model, kind, root))
        abbr = f"scibench-{book}" + ("" if kind == "zs" else f"_{kind}")
        files = _joined(parts, run, root)
        recorded = results / f"{abbr}.json" if results is not None else None
        names = tuple(root.name(p) for p in files)
        run.datasets.append(Dataset(abbr, book, tuple(files), recorded, names))
    return list(runs.values())


def load(run: Run) -> None:
    """Read each dataset's prediction files and results file (each refused file a note)."""
    root = run.root
    for dataset in run.datasets:
        dataset.predictions = []
        for path in dataset.paths:
            try:
                entries = read_json(path, root.real)
                dataset.predictions += list(_predictions(entries, len(dataset.predictions)))
            except Unreadable as exc:
                run.notes.append(f"{root.name(path)}: {exc}")
                break  # positions after it are unknown
        if dataset.results is not None:
            dataset.recorded = _recorded(dataset.results, root, run)


def release(run: Run) -> None:
    """Drop what ``load`` read."""
    for dataset in run.datasets:
        dataset.predictions, dataset.recorded = [], None


def _joined(parts: dict[int | None, Path], run: Run, root: Folder) -> list[Path]:
    """The files of one dataset in order: the whole file, else parts 0, 1, ... to the first gap."""
    if None in parts:
        return [parts[None]]
    files = []
    while len(files) in parts:
        files.append(parts[len(files)])
    later = sorted(k for k in parts if k is not None and k > len(files))
    if later:
        run.notes.append(
            f"{root.name(parts[later[0]])}: part {len(files)} is missing, so its "
            f"evaluator reads no part after it: {len(later)} later parts skipped"
        )
    return files


def _predictions(entries: Any, start: int) -> Iterator[Prediction]:
    """The entries of one prediction file, keyed "0", "1", ... as its inferencer writes them."""
    if not isinstance(entries, dict):
        raise Unreadable(
            f"not an OpenCompass prediction file (a JSON {type(entries).__name__}, not an object "
            'keyed "0", "1", ...): skipped'
        )
    expected = [str(i) for i in range(len(entries))]
    if list(entries) != expected and sorted(entries) != sorted(expected):
        known = set(expected)
        bad = next(k for k in entries if k not in known)
        raise Unreadable(
            f'not an OpenCompass prediction file (its keys are not "0", "1", ...: {bad[:40]!r}): '
            "skipped"
        )
    for i in range(len(entries)):
        yield _prediction(entries[str(i)], start + i)


def _prediction(entry: Any, position: int) -> Prediction:
    if not isinstance(entry, dict):
        return Prediction(position, None, None, None, "not an object")
    prompt = _prompt_text(entry.get("origin_prompt"))
    gold = entry.get("gold")
    gold = gold if isinstance(gold, str) else None
    response = entry.get("prediction")
    if isinstance(response, str):
        return Prediction(position, response, prompt, gold)
    if isinstance(response, list):
        why = f"a list of {len(response)} predictions (repeated samples)"
    else:
        why = f"its prediction is {type(response).__name__ if response is not None else 'missing'}"
    return Prediction(position, None, prompt, gold, why)


def _prompt_text(prompt: Any) -> str | None:
    """The prompt as text: a string, or a list of turns' ``prompt`` (or ``content``) joined."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        texts = [t.get("prompt", t.get("content")) if isinstance(t, dict) else t for t in prompt]
        return "\n".join(t for t in texts if isinstance(t, str)) or None
    return None


def _recorded(path: Path, root: Folder, run: Run) -> Recorded | None:
    """OpenCompass's results file for one dataset, when there is one and it is readable."""
    if not path.exists() and not path.is_symlink():
        return None
    where = root.name(path)
    try:
        result = read_json(path, root.real)
    except Unreadable as exc:
        run.notes.append(f"{where}: {exc}")
        return None
    if not isinstance(result, dict):
        run.notes.append(
            f"{where}: not OpenCompass's result (a JSON {type(result).__name__}): skipped"
        )
        return None
    if "error" in result:
        run.notes.append(f"{where}: OpenCompass recorded an error: {str(result['error'])[:200]}")
    accuracy = result.get("accuracy")
    if isinstance(accuracy, bool) or not isinstance(accuracy, int | float):
        accuracy = None
    elif not 0 <= accuracy <= 100:  # NaN too
        run.notes.append(f"{where}: its accuracy {accuracy!r} is not a percentage: not read")
        accuracy = None
    return Recorded(where, accuracy, _details(result.get("details")))


def _details(details: Any) -> dict[int, tuple[str, bool]] | None:
    """Per prediction: what OpenCompass extracted and its verdict (``correct``, else its
    ``AccEvaluator``'s string equality of ``predictions`` and ``references``)."""
    if isinstance(details, list):
        details = {str(i): d for i, d in enumerate(details)}
    if not isinstance(details, dict):
        return None
    verdicts = {}
    for key, item in details.items():
        if not (
            key.isascii() and key.isdigit() and isinstance(item, dict) and "predictions" in item
        ):
            continue
        extracted = item["predictions"]
        correct = item.get("correct")
        if isinstance(correct, list) and len(correct) == 1:
            correct = correct[0]
        if not isinstance(correct, bool):
            correct = str(extracted) == str(item.get("references"))
        verdicts[int(key)] = (str(extracted), correct)
    return verdicts or None
