"""File names of a report: one rule for every name built from what a log says.

A log is untrusted input (shared folders, logs from elsewhere): its benchmark and scorer names
end up in file names, so "../x", "/tmp/x", "a/b", a NUL byte or 5,000 characters must neither
write outside ``--out`` nor crash the report.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
MAX_STEM = 80  # well under every file system's 255-byte limit, with room for a suffix


def safe_stem(text: str) -> str:
    """``text`` as a file-name stem of ASCII letters, digits, "_" and "-", at most 80 long.

    A stem that is already safe is kept as it is ("scibench_results"). One that had to change
    keeps its safe characters and gains a hash of the original, so two different texts never
    share a file: "../scibench" cannot overwrite the real scibench tables.
    """
    if _UNSAFE.search(text) is None and 0 < len(text) <= MAX_STEM:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    kept = _UNSAFE.sub("_", text).strip("_")[: MAX_STEM - len(digest) - 1]
    return f"{kept}-{digest}" if kept else digest


def report_file(out: Path, stem: str, suffix: str) -> Path:
    """Where a file named after ``stem`` goes: directly in ``out``, never through a link.

    A link left in ``out`` under that name (planted in a shared folder) is removed, not followed.
    """
    path = out / f"{safe_stem(stem)}{suffix}"
    if path.is_symlink():
        path.unlink()
    return path
