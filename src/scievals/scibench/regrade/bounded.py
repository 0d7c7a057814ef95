"""One JSON file of an untrusted folder, read with bounds before any decoding.

A prediction file of a whole SciBench book is a few megabytes (OpenCompass writes it with
``indent=4``; 107 problems of 512-token replies and few-shot prompts); anything far past that is
not one. So a file is refused, with one line, when it leads out of the folder (a symlink), is not
a regular file (a FIFO would block, a device never ends), is over ``MAX_BYTES``, is not UTF-8, or
holds more JSON values than ``MAX_VALUES`` (``json.loads`` of 32 MiB of ``[{},{},...]`` takes
700 MB); JSON nested past the interpreter's recursion limit is refused too. Nothing is executed.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

MAX_BYTES = 32 << 20
"""A book's predictions or results file: 107 entries of at most a few hundred kilobytes."""
MAX_VALUES = 1_000_000
"""JSON values (objects, arrays and their members) in one file: a real one holds thousands."""
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)


class Unreadable(Exception):
    """A file that is not read: the message is the one line that says why."""


def inside(path: Path, root: Path) -> Path | None:
    """``path`` resolved, or None when it (or a symlink on the way) leads out of ``root``."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):  # a dangling or looping symlink
        return None
    return real if real == root or real.is_relative_to(root) else None


def read_json(path: Path, root: Path) -> Any:
    """The JSON value of ``path``; ``Unreadable`` (one line) when a bound refuses it."""
    real = inside(path, root)
    if real is None:
        raise Unreadable("a symlink out of the folder (or a broken one): skipped")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise Unreadable(f"cannot be opened ({exc.strerror}): skipped") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable("not a regular file (a FIFO, device or socket): skipped")
        if info.st_size > MAX_BYTES:
            raise Unreadable(f"{info.st_size:,} bytes, over the {MAX_BYTES:,}-byte bound: skipped")
        data = fh.read(MAX_BYTES + 1)  # the file may grow after fstat
    if len(data) > MAX_BYTES:
        raise Unreadable(f"over the {MAX_BYTES:,}-byte bound: skipped")
    return parse(data)


def parse(data: bytes) -> Any:
    """``data`` decoded as UTF-8 JSON, within ``MAX_VALUES``; ``Unreadable`` otherwise."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"not UTF-8 (byte {exc.start}: {exc.reason}): skipped") from None
    skeleton = _STRING.sub(b"", data)  # what is left outside strings: structure and scalars
    values = skeleton.count(b"{") + skeleton.count(b"[") + skeleton.count(b",")
    if values > MAX_VALUES:
        raise Unreadable(f"over {MAX_VALUES:,} JSON values: not a prediction file: skipped")
    try:
        return json.loads(text)
    except RecursionError:
        raise Unreadable("JSON nested too deeply: skipped") from None
    except ValueError as exc:  # JSONDecodeError, and an integer of too many digits
        raise Unreadable(f"not JSON ({str(exc).splitlines()[0][:200]}): skipped") from None
