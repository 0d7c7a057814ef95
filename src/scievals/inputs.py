"""What the user gives us: the one error for wrong input, the reader of JSON-lines files, and
the look at a log file from elsewhere before anything reads it.

``scievals`` answers an ``InputError`` with one line and exit status 2; any other exception is a
bug of ours and keeps its traceback.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# How a type is named in a message: for one field, and for several.
_KINDS = {
    str: ("a string", "strings"),
    int: ("an integer", "integers"),
    bool: ("a boolean", "booleans"),
}


class InputError(ValueError):
    """The user's input is wrong: a parameter, a name, a file or a line (the message says which)."""


def one_of(name: str, value: object, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``; else an InputError naming the parameter."""
    if value not in choices:
        raise not_one_of(name, value, choices)
    return str(value)


def not_one_of(name: str, value: object, choices: Sequence[str]) -> InputError:
    """The error for a parameter whose value is none of its choices: its name, value, choices."""
    return InputError(f"{name} must be one of {', '.join(choices)}, not {value!r}")


@dataclass(frozen=True)
class JsonLine:
    """One object of a JSON-lines file: where it is, and its fields in the order asked for."""

    path: Path
    number: int
    values: tuple[Any, ...]

    def error(self, message: str) -> InputError:
        """An InputError that names this file and line."""
        return InputError(f"{self.path}:{self.number}: {message}")


def read_jsonl(
    path: Path, fields: Mapping[str, type], unique: Sequence[str] = (), noun: str = "line"
) -> Iterator[JsonLine]:
    """The non-blank lines of ``path``, each an object with ``fields`` of the given types.

    Lines given twice for the same ``unique`` fields are an error naming both line numbers:
    which one counts is not ours to choose. Every error names the file and the line.
    """
    names = tuple(fields)
    first: dict[tuple[Any, ...], int] = {}
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"{path}:{number}: not valid UTF-8 ({exc.reason})") from None
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                values = tuple(item[name] for name in names)
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                expected = ", ".join(f'"{name}"' for name in names)
                raise InputError(f"{path}:{number}: expected {{{expected}}}: {exc}") from None
            here = JsonLine(path, number, values)
            for name, value in zip(names, values, strict=True):
                kind = fields[name]
                if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                    same = [n for n in names if fields[n] is kind]
                    one, several = _KINDS.get(kind, (kind.__name__, kind.__name__))
                    kinds = one if len(same) == 1 else several
                    raise here.error(f"{' and '.join(same)} must be {kinds}")
            key = tuple(values[names.index(name)] for name in unique)
            if unique and key in first:
                label = " ".join(str(v) for v in key)
                raise here.error(
                    f"{noun} {label} is given again (first on line {first[key]}); "
                    f"give each {noun} once"
                )
            first[key] = number
            yield here


MAX_LOG_BYTES = 2**30
"""The largest log read (the file, and a ``.eval`` archive's members uncompressed): a full run
with its transcripts is tens of MB, and a log is read whole."""


def unreadable_log(path: Path, bound: int | None = None) -> str | None:
    """Why ``path`` is not read as an Inspect log (looking at its size only: a zip bomb is never
    opened), or None. Logs are untrusted input; ``bound``: ``MAX_LOG_BYTES`` unless given."""
    bound = MAX_LOG_BYTES if bound is None else bound
    if not path.exists() and not path.is_symlink():
        return "no such file"
    if not path.is_file():
        return "not a regular file (an Inspect log is one .eval or .json file)"
    if path.suffix not in (".eval", ".json"):
        return "not an Inspect log (a .eval or .json file)"
    try:
        size, unpacked = path.stat().st_size, ""
        if size <= bound and path.suffix == ".eval":
            with zipfile.ZipFile(path) as archive:
                size, unpacked = sum(e.file_size for e in archive.infolist()), " uncompressed"
    except zipfile.BadZipFile:
        return "not an Inspect log (a damaged or truncated .eval archive)"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if size > bound:
        return f"{size:,} bytes{unpacked}, over the {bound:,}-byte bound of a log read"
    return None
