"""Caches for tests that need one of their own, made of hard links to the main cache's built
runtimes and SciCode data: nothing is built or copied, and the main cache is never written."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from scievals.paths import cache_dir
from scievals.sandbox.runtime import RUNTIMES, ensure_runtime


def linked_copy(src: Path, dst: Path, skip: tuple[str, ...] = ()) -> None:
    """``src`` again at ``dst`` as hard links (the same file system), but for the top-level
    names in ``skip``."""
    shutil.copytree(
        src,
        dst,
        symlinks=True,
        copy_function=os.link,
        ignore=lambda folder, names: [n for n in names if Path(folder) == src and n in skip],
    )


def linked_cache(cache: Path, python: str | None = None) -> Path:
    """A cache at ``cache`` with every runtime and the SciCode data and targets. With
    ``python`` (an interpreter of the same minor version, e.g. the system's for a user who
    cannot reach the harness's) each runtime runs on it instead of its own base interpreter.
    Skips the test where hard links cannot be made there."""
    for name in RUNTIMES:
        root = ensure_runtime(name).root
        dst = cache / "runtime" / root.name
        try:
            linked_copy(root, dst, skip=("bin", "pyvenv.cfg") if python else ())
        except OSError as exc:  # another file system: a copy would cost 400 MB a runtime
            pytest.skip(f"cannot hard-link the runtimes into {cache}: {exc}")
        if python:
            rebase(dst, root, python)
    linked_copy(cache_dir("scicode"), cache / "scicode")
    return cache


def rebase(dst: Path, root: Path, python: str) -> None:
    """Point the runtime at ``dst`` (linked from ``root``) at another base interpreter."""
    (dst / "bin").mkdir()
    (dst / "bin" / "python").symlink_to(python)
    for alias in ("python3", "python3.11"):
        (dst / "bin" / alias).symlink_to("python")
    home = os.path.dirname(python)
    (dst / "pyvenv.cfg").write_text(f"home = {home}\ninclude-system-site-packages = false\n")
    info = json.loads((root / "scievals-runtime.json").read_text())
    info["base_prefix"] = os.path.dirname(home)
    (dst / "scievals-runtime.json").unlink()
    (dst / "scievals-runtime.json").write_text(json.dumps(info))
