"""``scievals regrade --verify`` run as a user runs it, on logs edited as a hand would edit them:
shared by the SciCode and SciBench verification tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from inspect_ai.log import EvalLog, EvalSample, read_eval_log, write_eval_log

from scievals.cli import main


def edited(log_path: Path, tmp_path: Path, edit: Callable[[EvalLog], None]) -> Path:
    """A copy of the log with ``edit`` applied, written by Inspect."""
    log = read_eval_log(str(log_path))
    edit(log)
    out = tmp_path / "edited.eval"
    write_eval_log(log, out)
    return out


def sample_of(log: EvalLog, sample_id: str) -> EvalSample:
    """The log's sample of that id (its first epoch's, when several)."""
    return next(s for s in log.samples or [] if str(s.id) == sample_id)


def verify(path: Path, capsys, *args: str) -> tuple[int, list[str], str]:
    """Exit status, stdout's lines (the differences, then the summary) and stderr."""
    code = main(["regrade", "--verify", str(path), *args])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def differences(path: Path, capsys) -> list[str]:
    """The lines of a log that does not verify (exit status 1), its summary checked."""
    code, lines, err = verify(path, capsys)
    assert code == 1, lines + [err]
    assert lines[-1].startswith(f"{path}: {len(lines) - 1} difference")
    return lines[:-1]
