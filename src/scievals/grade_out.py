"""Where ``scievals grade`` writes its verdicts, so that no verdict already decided is ever lost.

Each verdict goes to ``OUT.partial`` the moment it is decided (one JSON line, flushed), after a
header line naming the run: the input's sha256 and the options. At the end the finished file
(verdicts in canonical order, then the summary and the same run record) replaces ``OUT`` in one
``os.replace``, and the partial file goes. So an interrupted run (Ctrl-C, kill, a crash) leaves
its verdicts in ``OUT.partial`` and never a half-written ``OUT``; ``--resume`` grades only what
``OUT`` and ``OUT.partial`` do not hold yet. ``OUT`` naming the input (by any path), an existing
``OUT`` or ``OUT.partial`` not asked to be replaced, and a damaged or foreign file are errors,
never silent replacements. A run holds ``OUT.lock`` (``flock``) from its first check to its last
write, so that a second run on the same ``OUT`` is refused rather than replacing the partial file
the first is still appending to.

An interrupt (Ctrl-C, SIGTERM, once or many times, to the process or its group) stops grading
once: the first cancels it, later ones are ignored so that they cannot cut short the cleanup that
stops the sandbox, and a deadline ends the process should that cleanup hang.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import hashlib
import json
import os
import signal
import stat
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Hashable, Iterable, Mapping
from pathlib import Path
from types import FrameType
from typing import IO, Any

from scievals.inputs import InputError
from scievals.paths import write_whole

PARTIAL_SUFFIX = ".partial"
LOCK_SUFFIX = ".lock"
HEADER = "scievals_grade_partial"
AGAIN = "pass --overwrite to grade everything again"
MAX_LINE_BYTES = 1 << 20
"""A verdict line is a few hundred bytes (a reason is cut short); a longer line is damage, and is
refused before it is held in memory."""
GRACE_SECONDS = 20.0
"""How long the cleanup after an interrupt (cancelling the steps running, stopping the sandbox)
may take before the process ends regardless: what was decided is on disk by then."""


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


class Interrupts:
    """SIGINT and SIGTERM while a ``grade`` command runs (a context manager around it).

    The first one stops grading as Ctrl-C does: it cancels the coroutine given to ``run`` (the
    steps running are abandoned, the sandbox kills their programs), or raises KeyboardInterrupt
    in code outside it. Later ones are ignored, also after the command has returned (then by
    ``SIG_IGN``, which the interpreter keeps to its very end): they would interrupt the cleanup
    (the event loop's, the sandbox's at exit) and leave the process waiting on a thread nobody
    stops, or programs running. Should the cleanup not end within ``GRACE_SECONDS`` of the
    first, the process ends with exit status 130, saying ``farewell()`` unless the command
    already said how it ended (``said``)."""

    def __init__(self, say: Callable[[str], None], farewell: Callable[[], str]) -> None:
        self.say = say
        self.farewell: Callable[[], str] | None = farewell
        self.interrupted = False
        self._cancel: Callable[[], None] | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Interrupts:
        for number in (signal.SIGINT, signal.SIGTERM):
            self._previous[number] = signal.signal(number, self._on_signal)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in self._previous.items():  # a finished command hands them back
            signal.signal(number, signal.SIG_IGN if self.interrupted else handler)

    def said(self) -> None:
        """The command has said how it ended: the deadline adds nothing."""
        self.farewell = None

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """``coroutine`` run to its end in a fresh event loop; KeyboardInterrupt if an interrupt
        cancelled it. The loop is closed only once every task in it has ended."""
        loop = asyncio.new_event_loop()
        main = loop.create_task(coroutine)
        self._cancel = lambda: loop.call_soon_threadsafe(main.cancel)
        try:
            return loop.run_until_complete(main)
        except asyncio.CancelledError:
            if self.interrupted:
                raise KeyboardInterrupt from None
            raise
        finally:
            self._cancel = _nothing  # an interrupt from here on waits for the cleanup
            try:
                _drain(loop)
            finally:
                loop.close()
                self._cancel = None

    def _on_signal(self, number: int, frame: FrameType | None) -> None:
        if self.interrupted:
            return
        self.interrupted = True
        threading.Thread(target=self._deadline, name="scievals-grade-deadline", daemon=True).start()
        if self._cancel is None:
            raise KeyboardInterrupt
        self._cancel()

    def _deadline(self) -> None:
        time.sleep(GRACE_SECONDS)
        farewell = self.farewell
        if farewell is not None:
            self.say(farewell())
        self.say(f"the cleanup took over {GRACE_SECONDS:.0f} s: stopped it")
        sys.stderr.flush()
        os._exit(130)


def _nothing() -> None:
    return None


def _drain(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is left in ``loop`` and wait for it, as ``asyncio.run`` does before closing
    (a task cancelled here releases its worker threads)."""
    left = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in left:
        task.cancel()
    if left:
        loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.run_until_complete(loop.shutdown_default_executor())


Grading = Callable[["VerdictsOut", Interrupts], tuple[list[dict[str, Any]], dict[str, Any]]]


def run_grading(
    say: Callable[[object], None],
    start: Callable[[], VerdictsOut],
    grade: Grading,
    report: Callable[[dict[str, Any]], str],
) -> int:
    """A ``grade`` command from its input to its exit status: ``start`` reads the input and
    opens the verdicts file, ``grade`` decides the verdicts (each to the file as it comes), and
    the finished file is written and ``report(summary)`` printed (0). Bad input is one line (2);
    an interrupt says what was kept (130)."""
    out: VerdictsOut | None = None
    with Interrupts(say, lambda: out.interrupted() if out else "interrupted") as stop:
        try:
            out = start()
            for line in out.starting():
                say(line)
            verdicts, summary = grade(out, stop)
            out.finish(verdicts, summary)
        except InputError as exc:
            say(exc)
            return 2
        except KeyboardInterrupt:
            say(out.interrupted() if out else "interrupted")
            return 130
        finally:
            stop.said()
            if out is not None:
                out.close()
    print(report(summary), file=sys.stderr)
    return 0


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


def lock_path(out: Path) -> Path:
    return out.with_name(out.name + LOCK_SUFFIX)


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
        self._lock: int | None = None  # OUT.lock, held while this run may write
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
        try:
            self._check(out, source, resume, overwrite)
        except BaseException:
            self.close()
            raise
        self.kept = len(self.done)  # what an interruption now would keep

    def _check(self, out: str, source: Path, resume: bool, overwrite: bool) -> None:
        """Under the lock: what is there already, and what a resumed run keeps of it."""
        assert self.out is not None and self.partial is not None
        lock = lock_path(self.out)
        _refuse_input(lock, source, f"--out {out} keeps its lock in the input file")
        self._lock = _take_lock(lock, self.out)
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
        self._stop_writing()
        write_whole(self.out, text, fsync=True)
        self.partial.unlink(missing_ok=True)  # all it held is in OUT now
        self.close()

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
        """Stop writing and let go of ``OUT`` (an interrupted run: what was decided stays in
        ``OUT.partial``). The lock file goes while it is held: a run waiting for it sees that it
        went, and takes the next one."""
        self._stop_writing()
        if self._lock is not None and self.out is not None:
            lock_path(self.out).unlink(missing_ok=True)
            os.close(self._lock)
            self._lock = None

    def _stop_writing(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    # -- reading what is there

    def _finished_lines(self, path: Path) -> list[tuple[int, Any]]:
        lines = _json_lines(path, torn_ok=False, notes=self.notes, most=len(self.expected) + 1)
        if not lines or not isinstance(lines[-1][1], dict) or "summary" not in lines[-1][1]:
            raise InputError(f"{path} is not a finished verdicts file (no summary line): {AGAIN}")
        self._check_run(path, lines[-1][1].get("run"))
        return lines[:-1]

    def _partial_lines(self, path: Path) -> list[tuple[int, Any]]:
        lines = _json_lines(path, torn_ok=True, notes=self.notes, most=len(self.expected) + 1)
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
        theirs, ours = run.get("options"), self.run["options"]
        theirs = theirs if isinstance(theirs, dict) else {}
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
        lines = [json.dumps({HEADER: self.run}), *(json.dumps(v) for v in self.done.values())]
        write_whole(self.partial, "".join(line + "\n" for line in lines))
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


def _take_lock(path: Path, out: Path) -> int:
    """The open lock file, locked; an InputError naming the run that holds it. A lock file that
    was removed between opening and locking it (its run ended) is left for the one at the path."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise InputError(
                f"--out {out}: cannot open its lock file {path} ({exc.strerror})"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            if isinstance(exc, BlockingIOError):
                who = f" (pid {holder})" if holder.isdigit() else ""
                raise InputError(
                    f"{out} is being written by another scievals grade run{who}: wait for it to "
                    "end, or give another --out"
                ) from None
            raise InputError(f"--out {out}: cannot lock {path} ({exc.strerror})") from None
        try:
            current = os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
        except FileNotFoundError:
            current = False
        if current:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            return fd
        os.close(fd)


def _json_lines(path: Path, torn_ok: bool, notes: list[str], most: int) -> list[tuple[int, Any]]:
    """(line number, value) of each non-blank line, at most ``most`` of them. A last line without
    its newline is a write cut short by a kill: left out of a partial file (and said; it held no
    whole verdict), an error anywhere else. Whatever the file holds (bytes that are not UTF-8,
    nesting deeper than the parser goes, lines or files too long, a FIFO or a device in its
    place), the answer is the values or an InputError."""
    damaged = f"the file is damaged; {AGAIN}"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(f"{path} cannot be read ({exc.strerror}): {AGAIN}") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"{path} is not a regular file: {AGAIN}")
        out: list[tuple[int, Any]] = []
        number = 0
        while raw := fh.readline(MAX_LINE_BYTES + 1):
            number += 1
            if len(raw) > MAX_LINE_BYTES:
                raise InputError(
                    f"{path}:{number}: a line longer than {MAX_LINE_BYTES:,} bytes: {damaged}"
                )
            if not raw.endswith(b"\n"):
                if not torn_ok:
                    raise InputError(f"{path} ends in the middle of a line: {AGAIN}")
                notes.append(f"{path}: its last line was cut short by the interruption: left out")
                break
            if not raw.strip():
                continue
            if len(out) == most:
                raise InputError(f"{path}: more lines than the input has items: {damaged}")
            try:
                out.append((number, json.loads(raw)))
            except RecursionError:
                raise InputError(f"{path}:{number}: JSON nested too deeply: {damaged}") from None
            except ValueError as exc:  # not UTF-8, not JSON, a number too long to read
                why = (str(exc).splitlines() or [type(exc).__name__])[0]
                raise InputError(f"{path}:{number}: not JSON ({why}): {damaged}") from None
    return out
