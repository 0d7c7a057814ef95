"""What the harness and a trusted worker say to each other, and the bounds on it.

Each message is a frame: an 8-byte big-endian length, then that many bytes. Harness to worker:
a pickled ``(job name, arguments, CPU seconds, positions of raw arguments)`` (the harness is
trusted), then each ``bytes`` argument as a raw frame of its own (``pool.request``), so a
records file is not copied through pickle. Worker to harness: JSON only, never pickle, at most
``MAX_ANSWER_BYTES``, checked before it is read: first ``{"ready": true}`` (or ``{"ready":
false, "error": ...}``) once its imports are done, then per job ``{"ok": result}`` or
``{"failed": "memory" | "answer" | "error", "message": ...}``.
"""

from __future__ import annotations

import os
import struct

HEADER = struct.Struct(">Q")
MAX_ANSWER_BYTES = 512 << 20
"""The largest answer the harness reads: solved values as large as the largest records fit."""


def frame(body: bytes) -> bytes:
    return HEADER.pack(len(body)) + body


def write_all(fd: int, data: bytes) -> None:
    """Write every byte to a blocking ``fd``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_exact(fd: int, size: int) -> bytearray | None:
    """Exactly ``size`` bytes from a blocking ``fd``, or None at end of file."""
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        count = os.readv(fd, [view[got:]])
        if not count:
            return None
        got += count
    return buffer
