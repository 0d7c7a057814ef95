"""Where scievals keeps what it downloads or builds, so slow work happens once, and how it
writes a file whole."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """The cache root (``SCIEVALS_CACHE``, else ``$XDG_CACHE_HOME/scievals``), created on use."""
    root = os.environ.get("SCIEVALS_CACHE")
    if root:
        base = Path(root)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "scievals"
    path = base.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_if_changed(path: Path, text: str) -> Path:
    """``path`` holding ``text``: rewritten (whole, by rename) only when it differs, so that
    processes reading a generated file never see it half-written or touched for nothing."""
    if not path.exists() or path.read_text() != text:
        write_whole(path, text)
    return path


def write_whole(path: Path, text: str, fsync: bool = False) -> None:
    """``path`` replaced by ``text`` in one ``os.replace`` (its folder made if its parent is
    there), so a reader never sees it half-written; an interruption leaves no temporary file
    behind."""
    path.parent.mkdir(exist_ok=True)
    part = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(part, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        os.replace(part, path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
