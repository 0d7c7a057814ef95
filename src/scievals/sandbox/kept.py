"""Files a program left that the harness keeps for later (a step's records): on disk, not in
memory.

A kept file is copied out of the program's reach, in chunks, into a spool directory of the
harness's own (mode 0700, removed at exit), and waits there until its reader is free; whoever
reads it opens it by path. So however many programs have finished and wait for a trusted
worker, the harness holds none of their bytes: at most one chunk per copy in flight.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

CHUNK_BYTES = 1 << 20
"""What a copy holds in memory at once."""
_lock = threading.Lock()
_spools: list[Path] = []


def spool() -> Path:
    """This process's spool directory, made on first use and removed when it exits."""
    with _lock:
        if not _spools:
            path = Path(tempfile.mkdtemp(prefix="scievals-kept-"))
            _spools.append(path)
            atexit.register(shutil.rmtree, path, True)
        return _spools[0]


@dataclass(frozen=True)
class KeptFile:
    """A kept file in the spool: its path and size. Its bytes are untrusted; ``discard``
    removes it once read."""

    path: Path
    size: int

    def tail(self, count: int) -> bytes:
        """Its last ``count`` bytes (at most)."""
        with open(self.path, "rb") as fh:
            fh.seek(max(0, self.size - count))
            return fh.read(count)

    def discard(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


class KeptWriter:
    """Writes one kept file into the spool, chunk by chunk, never past ``max_bytes``."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.path = spool() / f"{uuid.uuid4().hex}.kept"
        self.size = 0
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.max_bytes:
            raise OverflowError(f"kept file over {self.max_bytes} bytes")
        view = memoryview(chunk)
        while view:
            view = view[os.write(self._fd, view) :]

    def close(self) -> KeptFile:
        os.close(self._fd)
        return KeptFile(self.path, self.size)

    def abandon(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def keep_fd(fd: int, max_bytes: int) -> KeptFile:
    """Copy what is left of an open file into the spool (a file that grows past ``max_bytes``
    while it is read raises ``OverflowError``)."""
    return _keep(iter(lambda: os.read(fd, CHUNK_BYTES), b""), max_bytes)


def keep_bytes(data: bytes) -> KeptFile:
    """Bytes already in memory (a foreign sandbox's read), spooled so they wait on disk."""
    return _keep([data], len(data))


def _keep(chunks: Iterable[bytes], max_bytes: int) -> KeptFile:
    writer = KeptWriter(max_bytes)
    try:
        for chunk in chunks:
            writer.write(chunk)
    except BaseException:
        writer.abandon()
        raise
    return writer.close()
