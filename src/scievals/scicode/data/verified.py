"""SciCode-Verified's files: its manifest, problems and target patches, each checked by md5.

SciCode-Verified (Hu et al. 2026) corrects SciCode's test split: 64 problems, 287 scored steps,
its own targets. Its files come from the public repository at a pinned commit (``source`` is
``package`` or ``github``), or from a local directory holding the same layout (``manifest.json``,
``problems_test.jsonl``, ``targets/N.json``), such as the copy in ``../shared/data``. The
manifest itself is pinned by md5 here; every other file is checked against the manifest.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from scievals.artifacts import ArtifactError, download
from scievals.paths import cache_dir

REPOSITORY = "flyingwagner/scicode-verified"
COMMIT = "3dfa277b3cee817083a7079148b95f029c6b4293"
VERSION = "v2"
DATA_VERSION = f"scicode-verified-{VERSION}@{COMMIT[:7]}"
MANIFEST_MD5 = "6180aa545453bad136182dd637d83bd3"
PROBLEMS_FILE = "problems_test.jsonl"
# Where the files live in the repository (the README names scicode_verified/targets/).
RAW_BASE = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/scicode_verified"
PUBLIC_SOURCES = ("package", "github")


def md5_bytes(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def _read(relpath: str, source: str, md5: str) -> bytes:
    """One file by its path in the layout, from the public repository (cached) or a folder."""
    if source in PUBLIC_SOURCES:
        dest = cache_dir("scicode", "verified", COMMIT[:12]) / relpath
        if not (dest.exists() and md5_bytes(dest.read_bytes()) == md5):
            try:
                download(f"{RAW_BASE}/{relpath}", dest, timeout=30.0)
            except ArtifactError as exc:
                raise ArtifactError(
                    f"SciCode-Verified {relpath}: {exc}; without network, pass a local copy "
                    "with source=DIR (-T source=DIR, --source DIR)"
                ) from exc
        path = dest
    else:
        path = Path(source) / relpath
        if not path.is_file():
            raise ArtifactError(f"SciCode-Verified: {path} not found (source={source})")
    data = path.read_bytes()
    if md5_bytes(data) != md5:
        raise ArtifactError(
            f"SciCode-Verified: {path} differs from the manifest (md5 {md5_bytes(data)}, "
            f"expected {md5})"
        )
    return data


@cache
def manifest(source: str = "package") -> dict[str, Any]:
    """The manifest (version, problem order, md5 of every file), pinned by its own md5."""
    return json.loads(_read("manifest.json", source, MANIFEST_MD5))


def verified_file(relpath: str, source: str = "package") -> bytes:
    """A file named in the manifest (``problems_test.jsonl`` or ``targets/N.json``), verified."""
    listed = manifest(source)
    if relpath == PROBLEMS_FILE:
        md5 = listed["problems_test_jsonl_md5"]
    elif (
        relpath.startswith("targets/") and relpath.removeprefix("targets/") in listed["targets_md5"]
    ):
        md5 = listed["targets_md5"][relpath.removeprefix("targets/")]
    else:
        raise ArtifactError(f"SciCode-Verified: {relpath} is not in the manifest")
    return _read(relpath, source, md5)


def patch_names(source: str = "package") -> list[str]:
    """The target patch files the manifest lists (``N.json``), in problem order."""
    return sorted(manifest(source)["targets_md5"], key=lambda name: int(name.split(".")[0]))


def strip_imports(code: str) -> str:
    """Pre-supplied code as Verified's runner injects it: without its import lines."""
    kept = [
        line
        for line in code.splitlines()
        if not line.lstrip().startswith(("import ", "from ")) or line.startswith((" ", "\t"))
    ]
    return "\n".join(kept).strip("\n") + "\n"
