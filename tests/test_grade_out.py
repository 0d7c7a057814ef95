"""The verdicts files of ``scievals grade`` as untrusted input: whatever ``OUT.partial`` or ``OUT``
holds when a run resumes (nesting deeper than any parser goes, lines and files of any size, bytes
that are not UTF-8, a cut, a FIFO or a device in its place), the answer is what it holds or one
line and exit 2, and the file is left as it was."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from scievals.cli import main
from scievals.grade_out import HEADER, MAX_LINE_BYTES, VerdictsOut, run_record
from scievals.inputs import InputError

STEPS = ("51.1", "51.2")
FIELDS = {"step": str, "passed": bool}


def write_input(folder: Path) -> Path:
    source = folder / "c.jsonl"
    lines = [json.dumps({"step": step, "completion": "no code"}) for step in STEPS]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return source


def header(folder: Path) -> bytes:
    """The header ``grade scicode c.jsonl --out v.jsonl`` writes."""
    from scievals.cli import build_parser
    from scievals.scicode.cli import GRADE_OPTIONS

    ns = build_parser().parse_args(["grade", "scicode", "c.jsonl", "--out", "v.jsonl"])
    options = {k: getattr(ns, k) for k in GRADE_OPTIONS}
    run = run_record("scicode", folder / "c.jsonl", options)
    return json.dumps({HEADER: run}).encode() + b"\n"


def resumed(folder: Path) -> VerdictsOut:
    source = folder / "c.jsonl"
    run = json.loads(header(folder))[HEADER]
    expected = [(step,) for step in STEPS]
    out = VerdictsOut(
        source, str(folder / "v.jsonl"), run, FIELDS, ("step",), expected, resume=True
    )
    out.close()
    return out


def _fifo(folder: Path) -> None:
    os.mkfifo(folder / "v.jsonl.partial")  # reading it would block until a writer came


def _zero(folder: Path) -> None:
    (folder / "v.jsonl.partial").symlink_to("/dev/zero")  # reading it would never end


def _write(data: Callable[[Path], bytes]) -> Callable[[Path], None]:
    return lambda folder: (folder / "v.jsonl.partial").write_bytes(data(folder))


DAMAGE = {
    "nesting": (
        _write(lambda f: header(f) + b"[" * 200_000 + b"]" * 200_000 + b"\n"),
        "v.jsonl.partial:2: JSON nested too deeply: the file is damaged",
    ),
    "long-line": (
        _write(lambda f: header(f) + b'{"step": "' + b"x" * MAX_LINE_BYTES + b'"}\n'),
        f"v.jsonl.partial:2: a line longer than {MAX_LINE_BYTES:,} bytes: the file is damaged",
    ),
    "many-lines": (
        _write(lambda f: header(f) + b'{"step": "51.1", "passed": true}\n' * 10_000),
        "v.jsonl.partial: more lines than the input has items: the file is damaged",
    ),
    "encoding": (
        _write(lambda f: header(f) + b'{"step": "\xff\xfe", "passed": true}\n'),
        "v.jsonl.partial:2: not JSON ('utf-8' codec can't decode byte 0xff",
    ),
    "long-number": (
        _write(lambda f: header(f) + b"1" * 10_000 + b"\n"),
        "v.jsonl.partial:2: not JSON (Exceeds the limit (4300 digits)",
    ),
    "options-not-a-mapping": (
        _write(
            lambda f: (
                json.dumps({HEADER: {**json.loads(header(f))[HEADER], "options": [1]}}).encode()
                + b"\n"
            )
        ),
        "v.jsonl.partial was made from another run (--dataset, --source,",
    ),
    "fifo": (_fifo, "v.jsonl.partial is not a regular file"),
    "device": (_zero, "v.jsonl.partial is not a regular file"),
}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_damaged_partial_file_is_one_line_and_exit_2(tmp_path, kind, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_input(tmp_path)
    make, message = DAMAGE[kind]
    make(tmp_path)
    partial = tmp_path / "v.jsonl.partial"
    before = partial.read_bytes() if partial.is_file() and not partial.is_symlink() else None
    assert main(["grade", "scicode", "c.jsonl", "--out", "v.jsonl", "--resume"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("scievals grade scicode: ") and message in line, line
    assert line.endswith("pass --overwrite to grade everything again")
    if before is not None:
        assert partial.read_bytes() == before  # never discarded
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl", "v.jsonl.partial"]


def test_a_finished_file_cut_short_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_input(tmp_path)
    (tmp_path / "v.jsonl").write_text('{"step": "51.1", "passed": true}\n{"summary": {}, "ru')
    assert main(["grade", "scicode", "c.jsonl", "--out", "v.jsonl", "--resume"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "scievals grade scicode: v.jsonl ends in the middle of a line: "
        "pass --overwrite to grade everything again"
    ]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(st.binary(max_size=2000))
@example(b"[" * 100_000)
@example(b"\xff\xfe\x00\n")
@example(b'{"scievals_grade_partial": {"options": 3}}\n')
def test_any_bytes_in_the_partial_file_are_read_or_refused(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write_input(folder)
        (folder / "v.jsonl.partial").write_bytes(data)
        try:
            resumed(folder)
        except InputError as exc:
            assert len(str(exc).splitlines()) == 1
        assert (folder / "v.jsonl.partial").read_bytes() == data
        assert not (folder / "v.jsonl.lock").exists()


@given(st.lists(JSON, max_size=4), st.sampled_from(["partial", "finished"]))
def test_any_json_lines_after_a_true_header_are_taken_or_refused(values, where) -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write_input(folder)
        lines = b"".join(json.dumps(v).encode() + b"\n" for v in values)
        if where == "partial":
            (folder / "v.jsonl.partial").write_bytes(header(folder) + lines)
        else:
            run = json.loads(header(folder))[HEADER]
            summary = json.dumps({"summary": {}, "run": run}).encode() + b"\n"
            (folder / "v.jsonl").write_bytes(lines + summary)
        try:
            out = resumed(folder)
        except InputError as exc:
            assert len(str(exc).splitlines()) == 1
        else:
            assert set(out.done) <= {(step,) for step in STEPS}
            assert all(isinstance(v["passed"], bool) for v in out.done.values())
