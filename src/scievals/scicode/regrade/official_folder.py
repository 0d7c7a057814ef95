"""The official SciCode harness's generated-code folder, read back as completions for ``grade``.

The layout its scripts write (``eval/scripts/gencode*.py`` the code, ``test_generated_code.py``
the verdicts, spec scicode.md §2, §4, §6)::

    eval_results/
      generated_code/<model>/<with_background|without_background>/<problem>.<k>.py
      <model>_<background>.json   the passing step ids of each problem ({"1": ["1.1"], ...})
      <model>_<background>.txt    "correct problems: P/Q", "correct steps: N/M", solved ids

Older versions of the scripts have no background folder (``generated_code/<model>/``) and name
the verdict files ``<model>.json`` and ``.txt``. The ``scicode`` command of the nvidia-scicode
package (the same generator, with repeated samples) names its files ``<problem>.<k>_<r>.py``
(``r`` the sample: each is a run of its own here) and writes pass@1 rates and, per problem and
step, the number of samples that passed (``{"num_correct": {"1": {"1": 1}}, "n_samples": 1}``).
SOURCE may be ``eval_results/``, its ``generated_code/``, one model's folder or one background
folder, told apart by what they hold; verdict files are read only inside SOURCE (from
``eval_results/``), never beside it.

Reading is bounded: only the folders of that layout are looked into (no recursive walk), a
symlink that leads out of SOURCE, a file over ``MAX_STEP_BYTES``, anything that is not a regular
file or not UTF-8 is skipped with one line saying so, and so is every file whose name is not a
step's; nothing in the folder is executed or imported here.
"""

from __future__ import annotations

import ast
import json
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from scievals.inputs import InputError
from scievals.scicode.data.dataset import Problem, Step

MAX_STEP_BYTES = 1 << 20
"""A step file holds one step's code and its earlier steps' (tens of kilobytes at most); a larger
one is not a generator's output, and is skipped unread."""
MAX_VERDICT_BYTES = 1 << 20
"""The verdict files list step ids (a few kilobytes); a larger one is not read."""
BACKGROUNDS = ("without_background", "with_background")
CODE_FOLDER = "generated_code"
_STEP_FILE = re.compile(r"(\d+)\.(\d+)(?:_(\d+))?\.py")
_DEF_NAME = re.compile(r"\bdef\s+(\w+)\s*\(")
_CLASS_NAME = re.compile(r"\bclass\s+(\w+)\s*\(")
_TXT_STEPS = re.compile(r"correct steps: (\d+)/(\d+)")
_TXT_PROBLEMS = re.compile(r"correct problems: (\d+)/(\d+)")
_TXT_SOLVED = re.compile(r"\[([\d,\s]*)\]\s*\Z")
_TXT_RATE = re.compile(r"(step|problem)-level pass@1: ([0-9.eE+-]+)")

Candidate = str | Callable[[], str | None]
"""Code an earlier step may have had in a later file, or how to compute it when needed."""


@dataclass(frozen=True)
class Recorded:
    """What the source's own verdict files say about one run (None: that file is absent)."""

    files: tuple[str, ...]
    """The verdict files read, relative to SOURCE."""
    passed: frozenset[str] | None
    """The passing step ids (the JSON file)."""
    steps: tuple[int, int] | None
    """Correct steps and the denominator the script printed (the text file)."""
    problems: tuple[int, int] | None
    """Correct problems and the denominator (the text file)."""
    solved: frozenset[str] | None
    """The ids of the problems it counted solved (the text file)."""
    rates: tuple[float | None, float | None] = (None, None)
    """Step and problem pass@1 as fractions (nvidia-scicode's files)."""
    failed: frozenset[str] | None = None
    """The step ids it scored and failed, where it records them (an inspect_evals log)."""


@dataclass
class Run:
    """One model's step files (for one background setting) and its recorded verdicts."""

    model: str
    background: str | None
    """``with_background``/``without_background``, or None in the older layout."""
    folder: Path
    paths: dict[str, Path]
    """Step id -> its file, for every file named like a step (``<problem>.<k>.py``)."""
    sample: int | None = None
    """nvidia-scicode's sample number (``<problem>.<k>_<sample>.py``)."""
    notes: list[str] = field(default_factory=list)
    recorded: Recorded | None = None

    @property
    def label(self) -> str:
        return (
            self.model
            + (f" ({self.background})" if self.background else "")
            + (f" sample {self.sample}" if self.sample is not None else "")
        )


@dataclass(frozen=True)
class Source:
    path: Path
    root: Path
    """``path`` resolved: nothing outside it is read."""
    layout: str
    """What SOURCE is: ``eval_results``, ``generated_code``, ``model`` or ``steps``."""
    runs: tuple[Run, ...]
    notes: tuple[str, ...]
    """Lines about what was skipped outside any run (a symlinked model folder out of SOURCE)."""


@dataclass(frozen=True)
class Answer:
    """The code of one step file that ``grade`` gets as that step's completion."""

    step: str
    code: str
    whole: bool
    """The file does not begin as the generator writes it (dependencies, then the earlier
    steps' code): everything after the dependencies is the answer."""
    earlier_differs: tuple[str, ...]
    """Earlier steps whose code in this file is not what scievals runs before this step."""


def read_source(source: Path) -> Source:
    """The runs in SOURCE; an ``InputError`` (one line) when SOURCE is not that layout."""
    if not source.exists():
        raise InputError(f"{source}: no such file or directory")
    if not source.is_dir():
        raise InputError(
            f"{source} is not a folder: regrade reads the official SciCode harness's "
            "eval_results/ (or its generated_code/, or one model's folder)"
        )
    root = source.resolve()
    notes: list[str] = []
    code = _inside(root / CODE_FOLDER, root)
    if code is None:
        raise InputError(f"{source}: its {CODE_FOLDER} is a symlink out of the folder: not read")
    if code.is_dir():
        runs = _code_root(code, root, notes)
        layout, results = "eval_results", root
    elif _step_names(root):
        runs, layout, results = _steps_runs(root, root), "steps", None
    elif runs := _model_runs(root, root.name, root, notes):
        layout, results = "model", None
    else:
        runs, layout, results = _code_root(root, root, notes), "generated_code", None
    if not runs:
        raise InputError(
            f"{source} is not the official SciCode harness's generated code: no "
            "<problem>.<step>.py files in it, in generated_code/<model>/[with|without]_background/"
            " or <model>/"
        )
    if results is not None:
        for run in runs:
            run.recorded = _recorded(results, run, root)
    return Source(source, root, layout, tuple(runs), tuple(notes))


def _inside(path: Path, root: Path) -> Path | None:
    """``path`` resolved, if it stays inside ``root`` (None for a symlink out of it)."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return None
    return real if real.is_relative_to(root) else None


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    """What ``folder`` holds, in name order (nothing when it cannot be listed)."""
    try:
        return sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []


def _folders(folder: Path, root: Path, notes: list[str]) -> Iterator[Path]:
    """The sub-folders of ``folder`` in name order; one line for each that leads out of root."""
    for entry in _entries(folder):
        if not entry.is_dir():
            continue
        if _inside(Path(entry.path), root) is None:
            notes.append(
                f"{relative(Path(entry.path), root)}: a symlink out of the folder: skipped"
            )
            continue
        yield Path(entry.path)


def _step_names(folder: Path) -> list[str]:
    return [e.name for e in _entries(folder) if _STEP_FILE.fullmatch(e.name)]


def _code_root(folder: Path, root: Path, notes: list[str]) -> list[Run]:
    """``generated_code/``: a folder per model, in either layout."""
    runs = []
    for model in _folders(folder, root, notes):
        if _step_names(model):
            runs += _steps_runs(model, root)
        else:
            runs += _model_runs(model, model.name, root, notes)
    return runs


def _model_runs(folder: Path, model: str, root: Path, notes: list[str]) -> list[Run]:
    """One model's background folders that hold step files."""
    runs = []
    for sub in _folders(folder, root, notes):
        if sub.name in BACKGROUNDS and _step_names(sub):
            runs += _steps_runs(sub, root, model, sub.name)
    return runs


def _steps_runs(
    folder: Path, root: Path, model: str | None = None, bg: str | None = None
) -> list[Run]:
    """The runs whose step files are in ``folder``, one per sample (named after the folder, or
    its parent for a background folder); other files in it get a line each."""
    if model is None:
        named = folder.name in BACKGROUNDS
        model, bg = (folder.parent.name, folder.name) if named else (folder.name, None)
    runs: dict[int | None, Run] = {}
    others = []
    for entry in _entries(folder):
        match = _STEP_FILE.fullmatch(entry.name)
        if match:
            sample = int(match[3]) if match[3] is not None else None
            run = runs.setdefault(sample, Run(model, bg, folder, {}, sample))
            run.paths[f"{match[1]}.{match[2]}"] = Path(entry.path)
        elif not entry.is_dir():
            others.append(f"{relative(Path(entry.path), root)}: not a step file: skipped")
    found = [runs[k] for k in sorted(runs, key=lambda k: -1 if k is None else k)]
    found[0].notes += others
    return found


def relative(path: Path, root: Path) -> str:
    """``path`` as a line about it names it: relative to SOURCE."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def read_step_file(path: Path, root: Path) -> tuple[str | None, str | None]:
    """(text, None) or (None, why it is skipped): a file of SOURCE read within its bounds, line
    ends as the official script reads them (``read_text``: universal newlines)."""
    data, why = _read_bounded(path, root, MAX_STEP_BYTES)
    if data is None:
        return None, why
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 ({exc.reason})"
    return text.replace("\r\n", "\n").replace("\r", "\n"), None


def _read_bounded(path: Path, root: Path, most: int) -> tuple[bytes | None, str | None]:
    real = _inside(path, root)
    if real is None:
        return None, "a symlink out of the folder"
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "not a regular file"
        if info.st_size > most:
            return None, f"{info.st_size:,} bytes, over the {most:,}-byte bound"
        data = fh.read(most + 1)
    if len(data) > most:
        return None, f"over the {most:,}-byte bound"
    return data, None


def _recorded(results: Path, run: Run, root: Path) -> Recorded | None:
    """The run's verdict files in ``eval_results/``, as ``test_generated_code.py`` names them;
    a file that is not what it claims gets a line and is not used."""
    stem = f"{run.model}_{run.background}" if run.background else run.model
    read: list[str] = []
    passed = steps = problems = solved = None
    rates: tuple[float | None, float | None] = (None, None)
    json_path, txt_path = results / f"{stem}.json", results / f"{stem}.txt"
    if json_path.exists():
        data, why = _read_bounded(json_path, root, MAX_VERDICT_BYTES)
        try:
            found = _json_verdicts(json.loads(data), run.sample) if data is not None else None
        except (ValueError, RecursionError):
            found = None
        if isinstance(found, str):
            run.notes.append(f"{json_path.name}: {found} (not used)")
            return None
        elif found is None:
            run.notes.append(f"{json_path.name}: {why or 'not the harness JSON'} (not used)")
        else:
            passed, rates = found
            read.append(json_path.name)
    if txt_path.exists():
        data, why = _read_bounded(txt_path, root, MAX_VERDICT_BYTES)
        text = data.decode("utf-8", "replace") if data is not None else ""
        steps, problems = _fraction(_TXT_STEPS, text), _fraction(_TXT_PROBLEMS, text)
        listed = _TXT_SOLVED.search(text)
        solved = frozenset(listed[1].replace(",", " ").split()) if listed else None
        said = {kind: float(value) for kind, value in _TXT_RATE.findall(text)}
        if steps is None and "step" not in said:
            run.notes.append(f"{txt_path.name}: {why or 'no correct steps: N/M line'} (not used)")
            problems = solved = None
        else:
            read.append(txt_path.name)
            if rates == (None, None):
                rates = (said.get("step"), said.get("problem"))
    if not read or (passed is None and steps is None and rates[0] is None):
        return None
    return Recorded(tuple(read), passed, steps, problems, solved, rates)


def _json_verdicts(
    data: object, sample: int | None
) -> tuple[frozenset[str] | None, tuple[float | None, float | None]] | str | None:
    """(passing steps, pass@1 rates) of either harness's JSON; a line when it cannot speak for
    this run; None when it is neither."""
    if not isinstance(data, dict):
        return None
    if "num_correct" in data:  # nvidia-scicode: samples passed per problem and step
        counts, n = data["num_correct"], data.get("n_samples")
        rates = tuple(
            float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
            for v in (data.get("steps_pass@1"), data.get("problems_pass@1"))
        )
        if not isinstance(counts, dict) or not all(isinstance(v, dict) for v in counts.values()):
            return None
        if n != 1 or sample not in (0, None):
            return f"its counts are over {n} samples together, not this run's"
        passed = {
            f"{problem}.{step}"
            for problem, steps in counts.items()
            for step, count in steps.items()
            if isinstance(count, int) and count >= 1
        }
        return frozenset(passed), (rates[0], rates[1])
    steps: set[str] = set()
    for value in data.values():
        if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
            return None
        steps.update(value)
    return frozenset(steps), (None, None)


def _fraction(pattern: re.Pattern[str], text: str) -> tuple[int, int] | None:
    match = pattern.search(text)
    return (int(match[1]), int(match[2])) if match else None


def loaded(code: str, function_header: str) -> str | None:
    """What the official generator keeps when it reads an earlier step's code back from a file
    (a resumed run, and always for the pre-supplied steps): the first function or class, in
    ``ast.walk`` order, named as the first ``def NAME(`` of the header (else ``class NAME(``),
    unparsed; the code whole when it does not parse; None when the name is not found (the
    generator could then not have written a later file). For ``class Maxwell:`` headers the
    name found is the first method's, ``__init__`` (spec §1)."""
    match = _DEF_NAME.search(function_header) or _CLASS_NAME.search(function_header)
    if match is None:
        return None
    try:
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == match[1]:
                return ast.unparse(node)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code
    return None


def step_answers(problem: Problem, texts: Mapping[str, str]) -> dict[str, Answer]:
    """Each present scored step's answer: what its file holds after its earlier steps' code.

    A file of step k is ``{dependencies}\\n{earlier}\\n\\n{code}``, ``earlier`` the code of steps
    1..k-1 as the generator held it, joined by newlines: its own extraction of each earlier
    reply (the code that step's file ends with), or, for an earlier step read back from its
    file (a resumed run) and for a pre-supplied step, what ``loaded`` keeps of it. The official
    script runs the whole file; scievals builds each step's program from the steps' own
    answers (with the official code of pre-supplied steps), so step k's answer is ``code``,
    found by matching the earlier code as the generator writes it. A file that does not begin
    so (edited, written by another generator, an earlier file missing) is answered whole, after
    its dependencies: its earlier code then runs after scievals' and its definitions win, as
    when the official script runs the file alone.
    """
    held: dict[str, list[Candidate]] = {}
    runs: dict[str, str] = {}
    answers: dict[str, Answer] = {}
    for step in problem.steps:
        sid = step.step_id
        if step.presupplied_code is not None:
            supplied = step.presupplied_code
            held[sid] = [partial(loaded, supplied, step.function_header), supplied]
            runs[sid] = supplied
            continue
        text = texts.get(sid)
        if text is None:
            held[sid], runs[sid] = [], ""
            continue
        answer = _answer(problem, step, text, held, runs)
        answers[sid] = answer
        held[sid] = [answer.code, partial(loaded, text, step.function_header)]
        runs[sid] = answer.code
    return answers


def _answer(
    problem: Problem,
    step: Step,
    text: str,
    held: Mapping[str, list[Candidate]],
    runs: Mapping[str, str],
) -> Answer:
    head = problem.dependencies + "\n"
    if not text.startswith(head):
        return Answer(step.step_id, text, True, ())
    earlier = problem.earlier(step)
    pos, differs = len(head), []
    for index, previous in enumerate(earlier):
        found = _match(text, pos, held[previous.step_id], last=index == len(earlier) - 1)
        if found is None:
            return Answer(step.step_id, text[len(head) :], True, ())
        if not _same_code(found, runs[previous.step_id]):
            differs.append(previous.step_id)
        pos += len(found) + (0 if index == len(earlier) - 1 else 1)
    if not text.startswith("\n\n", pos):
        return Answer(step.step_id, text[len(head) :], True, ())
    return Answer(step.step_id, text[pos + 2 :], False, tuple(differs))


def _match(text: str, pos: int, candidates: list[Candidate], last: bool) -> str | None:
    """The first candidate code found at ``pos`` and followed by its separator ("\\n" between
    earlier steps; the last one is followed by the blank line before the step's own code)."""
    for candidate in candidates:
        code = candidate() if callable(candidate) else candidate
        if code is not None and text.startswith(code + ("\n\n" if last else "\n"), pos):
            return code
    return None


def _same_code(a: str, b: str) -> bool:
    """The same program text, or the same syntax tree (``loaded`` unparses: comments and layout
    go, the code is the same)."""
    if a == b:
        return True
    try:
        return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
