"""Where scievals keeps what it downloads or builds, so slow work happens once."""

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
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path
