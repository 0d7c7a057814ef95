"""The front door's error contract: the user's mistakes are one line and exit 2, our bugs keep
their traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from scievals import cli
from scievals.inputs import InputError


def test_input_errors_are_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    assert cli.main(["report", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"scievals: error: no scievals logs found in {tmp_path}\n"


def test_a_bug_keeps_its_traceback(monkeypatch, tmp_path: Path) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("an internal invariant broke")

    monkeypatch.setattr("scievals.report.write.write_report", broken)
    with pytest.raises(ValueError, match="internal invariant"):
        cli.main(["report", str(tmp_path)])


def test_input_error_is_a_value_error() -> None:
    """Callers that caught ValueError for bad input keep working."""
    assert issubclass(InputError, ValueError)
