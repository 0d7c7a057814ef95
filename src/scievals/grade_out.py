"""Where ``scievals grade`` writes its verdicts, so that no verdict already decided is ever lost.

Each verdict goes to ``OUT.partial`` the moment it is decided (one JSON line, flushed), after a
header line naming the run: the input's sha256 and the options. At the end the finished file
(verdicts in canonical order, then the summary and the same run record) replaces ``OUT`` in one
``os.replace``, and the partial file goes. So an interrupted run (Ctrl-C, kill, a crash) leaves
its verdicts in ``OUT.partial`` and never a half-written ``OUT``; ``--resume`` grades only what
``OUT`` and ``OUT.partial`` do not hold yet. ``OUT`` naming the input (by any path), an existing
``OUT`` or ``OUT.partial`` not asked to be replaced, and a damaged or foreign file are errors,
never silent replacements.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import sys
from collections.abc import Hashable, Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from scievals.inputs import InputError

PARTIAL_SUFFIX = ".partial"
HEADER = "scievals_grade_partial"
AGAIN = "pass --overwrite to grade everything again"


def add_arguments(parser: argparse.ArgumentParser, *aliases: str) -> None:
    """``--out``, ``--resume`` and ``--overwrite`` of a ``grade`` subcommand."""
    parser.add_argument(
        "--out",
        *aliases,
        default=None,
        help="write the verdicts here (default: stdout); while grading they go to OUT.partial",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="grade only what OUT or OUT.partial (an interrupted run) does not hold yet",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace an existing OUT (and OUT.partial)"
    )


def interrupt_on_sigterm() -> None:
    """A kill (SIGTERM) stops grading as Ctrl-C does: the sandbox is cleaned up and the run
    says what it kept."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)


def run_record(benchmark: str, source: Path, options: Mapping[str, Any]) -> dict[str, Any]:
    """What a verdicts file was made from: a resumed run must match it exactly."""
    digest = hashlib.sha256()
    with open(source, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    plain = json.loads(json.dumps(dict(options)))  # as it reads back from a file
    return {"benchmark": benchmark, "input_sha256": digest.hexdigest(), "options": plain}


def partial_path(out: Path) -> Path:
    return out.with_name(out.name + PARTIAL_SUFFIX)


class VerdictsOut:
    """The verdicts of one ``scievals grade`` run: those decided before (``done``, from
    ``--resume``), each new one as it is decided (``add``), the finished file (``finish``)."""

    def __init__(
        self,
        source: Path,
        out: str | None,
        run: dict[str, Any],
        fields: Mapping[str, type],
        key: tuple[str, ...],
        expected: Iterable[Hashable],
        *,
        resume: bool = False,
        overwrite: bool = False,
    ) -> None:
        """Check ``out`` against the input and what is there already, before any grading.

        ``fields`` are the fields every verdict has (and their types), ``key`` those that name
        what it judges (a step; a book and an index), ``expected`` the keys of the input."""
        self.run = run
        self.fields = dict(fields)
        self.key_fields = key
        self.expected = set(expected)
        self.done: dict[Hashable, dict[str, Any]] = {}
        self.notes: list[str] = []
        self.kept = 0
        self._fh: IO[str] | None = None
        self._started = False  # OUT.partial is this run's now
        if out is None:
            if resume or overwrite:
                raise InputError("--resume and --overwrite need --out: name the verdicts file")
            self.out = self.partial = None
            return
        if resume and overwrite:
            raise InputError("--resume keeps what is there, --overwrite replaces it: choose one")
        self.out = Path(out)
        self.partial = partial_path(self.out)
        _refuse_input(self.out, source, f"--out {out} is the input file {source}")
        _refuse_input(
            self.partial, source, f"--out {out} keeps its partial verdicts in the input file"
        )
        if not self.out.parent.is_dir():
            raise InputError(f"--out {out}: directory {self.out.parent} does not exist")
        if not os.access(self.out.parent, os.W_OK):
            raise InputError(f"--out {out}: directory {self.out.parent} is not writable")
        if self.out.is_dir():
            raise InputError(f"--out {out} is a directory: name a file")
        present = [p for p in (self.out, self.partial) if p.exists()]
        if present and not (resume or overwrite):
            raise InputError(
                " and ".join(str(p) for p in present)
                + (" exist" if len(present) > 1 else " exists")
                + ": pass --resume to grade only what is missing, or --overwrite to replace"
            )
        if resume:
            if self.out.exists():
                self._take(self.out, self._finished_lines(self.out))
            if self.partial.exists():
                self._take(self.partial, self._partial_lines(self.partial))
        self.kept = len(self.done)  # what an interruption now would keep

    def key(self, verdict: Mapping[str, Any]) -> Hashable:
        """The verdict's key: its leading key fields (a step; a book and index)."""
        return tuple(verdict[name] for name in self.key_fields)

    def add(self, verdict: dict[str, Any]) -> None:
        """Record a verdict the moment it is decided (flushed: a kill does not lose it). The
        first one starts ``OUT.partial``: a run that stops before deciding anything (bad input)
        leaves what was there as it was."""
        if self.partial is None:
            return
        if self._fh is None:
            self._start_partial()
        assert self._fh is not None
        self._fh.write(json.dumps(verdict) + "\n")
        self._fh.flush()
        self.kept += 1

    def finish(self, verdicts: list[dict[str, Any]], summary: dict[str, Any]) -> None:
        """Write the finished file: to stdout, or to ``OUT`` in one ``os.replace``."""
        lines = [json.dumps(v) for v in verdicts]
        lines.append(json.dumps({"summary": summary, "run": self.run}))
        text = "\n".join(lines) + "\n"
        if self.out is None:
            sys.stdout.write(text)
            return
        assert self.partial is not None
        self.close()
        part = self.out.with_name(f"{self.out.name}.{os.getpid()}.tmp")
        with open(part, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(part, self.out)
        self.partial.unlink(missing_ok=True)  # all it held is in OUT now

    def starting(self) -> list[str]:
        """What to tell the user before grading: notes on the files read, what is resumed."""
        lines = list(self.notes)
        if self.done:
            lines.append(f"resuming: {len(self.done)} verdicts kept from {self._source_label()}")
        return lines

    def interrupted(self) -> str:
        """The line for an interrupted run."""
        if self.partial is None:
            return "interrupted: nothing written (give --out to keep verdicts as they come)"
        if not self.kept:
            return "interrupted before any verdict was decided"
        where = self.partial if self._started else self._source_label()
        return (
            f"interrupted: {self.kept} verdicts kept in {where}; "
            "run the same command with --resume to grade the rest"
        )

    def _source_label(self) -> str:
        assert self.out is not None and self.partial is not None
        return " and ".join(str(p) for p in (self.out, self.partial) if p.exists())

    def close(self) -> None:
        """Stop writing (an interrupted run): what was decided stays in ``OUT.partial``."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    # -- reading what is there

    def _finished_lines(self, path: Path) -> list[tuple[int, Any]]:
        lines = _json_lines(path, torn_ok=False, notes=self.notes)
        if not lines or not isinstance(lines[-1][1], dict) or "summary" not in lines[-1][1]:
            raise InputError(f"{path} is not a finished verdicts file (no summary line): {AGAIN}")
        self._check_run(path, lines[-1][1].get("run"))
        return lines[:-1]

    def _partial_lines(self, path: Path) -> list[tuple[int, Any]]:
        lines = _json_lines(path, torn_ok=True, notes=self.notes)
        if not lines:
            return []  # killed before its header was written
        first = lines[0][1]
        if not isinstance(first, dict) or HEADER not in first:
            raise InputError(f"{path} is not a partial verdicts file of scievals grade: {AGAIN}")
        self._check_run(path, first[HEADER])
        return lines[1:]

    def _check_run(self, path: Path, run: Any) -> None:
        if run == self.run:
            return
        if not isinstance(run, dict):
            raise InputError(f"{path} does not say which run made it: {AGAIN}")
        differ = [k for k in ("benchmark", "input_sha256") if run.get(k) != self.run[k]]
        theirs, ours = run.get("options") or {}, self.run["options"]
        differ += [f"--{k.replace('_', '-')}" for k in ours if theirs.get(k) != ours[k]]
        raise InputError(
            f"{path} was made from another run ({', '.join(differ) or 'its record'} differ): "
            f"grade with the same input and options to resume it, or {AGAIN}"
        )

    def _take(self, path: Path, lines: list[tuple[int, Any]]) -> None:
        seen: set[Hashable] = set()
        for number, verdict in lines:
            if not isinstance(verdict, dict) or any(
                not isinstance(verdict.get(name), kind) for name, kind in self.fields.items()
            ):
                fields = ", ".join(self.fields)
                raise InputError(f"{path}:{number}: not a verdict line ({fields}): {AGAIN}")
            key = self.key(verdict)
            label = " ".join(str(k) for k in key)
            if key not in self.expected:
                raise InputError(f"{path}:{number}: {label} is not in the input: {AGAIN}")
            if key in seen:
                raise InputError(f"{path}:{number}: {label} is given twice: {AGAIN}")
            seen.add(key)
            self.done[key] = verdict

    def _start_partial(self) -> None:
        """A fresh ``OUT.partial``: the header, then every verdict already decided."""
        assert self.partial is not None
        fresh = self.partial.with_name(f"{self.partial.name}.{os.getpid()}.tmp")
        with open(fresh, "w", encoding="utf-8") as fh:
            fh.write(json.dumps({HEADER: self.run}) + "\n")
            fh.writelines(json.dumps(v) + "\n" for v in self.done.values())
        os.replace(fresh, self.partial)
        self._started = True
        self._fh = open(self.partial, "a", encoding="utf-8")  # noqa: SIM115 - open for the run


def _refuse_input(path: Path, source: Path, message: str) -> None:
    """``path`` (--out or its partial file) must not be the input, however either is spelled
    (a symlink, a hard link, ``..``, relative or absolute)."""
    try:
        same = path.exists() and os.path.samefile(path, source)
    except OSError:
        same = False
    if same or path.resolve() == source.resolve():
        raise InputError(f"{message}: name another file for the verdicts")


def _json_lines(path: Path, torn_ok: bool, notes: list[str]) -> list[tuple[int, Any]]:
    """(line number, value) of each non-blank line. A last line without its newline is a write
    cut short by a kill: left out of a partial file (and said; it held no whole verdict), an
    error anywhere else."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        if not torn_ok:
            raise InputError(f"{path} ends in the middle of a line: {AGAIN}")
        data = data[: data.rfind(b"\n") + 1]
        notes.append(f"{path}: its last line was cut short by the interruption: left out")
    out = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            out.append((number, json.loads(raw)))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(
                f"{path}:{number}: not JSON ({exc}): the file is damaged; {AGAIN}"
            ) from None
    return out
