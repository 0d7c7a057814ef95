"""Reading and writing files in a sample's directory, which a hostile program controls.

The program may have replaced any path with a symlink (to the targets, to /etc/shadow), a FIFO
(an open for reading blocks until a writer comes: forever), a socket, a directory, or a file far
too large to load. Every open here walks the path one component at a time with ``O_NOFOLLOW``
from the sample directory, opens with ``O_NONBLOCK`` (a FIFO cannot block it), and checks with
``fstat`` that it got a regular file, and its size, before reading a byte.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from scievals.sandbox.kept import KeptFile, keep_fd

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFLNK: "a symlink",
}


class NotRegularFileError(PermissionError):
    """The path is not a regular file inside the sample directory (symlink, FIFO, outside...)."""

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind  # "a directory", "a FIFO", ... when something is there


class FileTooLargeError(OSError):
    """The file is larger than the caller's bound; nothing was read."""

    def __init__(self, path: str, size: int, max_bytes: int) -> None:
        super().__init__(errno.EFBIG, f"{path}: {size} bytes, over the {max_bytes}-byte bound")
        self.size, self.max_bytes = size, max_bytes


def open_inside(root: Path, file: str, flags: int, create_dirs: bool = False) -> int:
    """An fd for ``file`` (relative to ``root``, or absolute under it), never following a
    symlink, never blocking, and only if it is a regular file."""
    path = Path(file)
    if path.is_absolute():
        try:
            path = path.relative_to(root)
        except ValueError:
            raise NotRegularFileError(f"{file}: outside the sandbox's directory") from None
    parts = [p for p in path.parts if p not in ("", ".")]
    if not parts or ".." in parts:
        raise NotRegularFileError(f"{file}: not a file inside the sandbox's directory")
    dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            if create_dirs:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o2775, dir_fd=dir_fd)
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    kind = _kind(part, dir_fd) or "a file"
                    raise NotRegularFileError(
                        f"{file}: {part} is {kind}, not a directory"
                    ) from None
                raise
            os.close(dir_fd)
            dir_fd = nxt
        try:
            fd = os.open(
                parts[-1], flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, 0o664, dir_fd=dir_fd
            )
        except OSError:
            # A symlink (ELOOP), socket or FIFO (ENXIO), directory (EISDIR), device on a nodev
            # mount (EACCES): say what it is rather than the errno's words.
            kind = _kind(parts[-1], dir_fd)
            if kind is not None:
                raise NotRegularFileError(f"{file}: not a regular file ({kind})", kind) from None
            raise
    finally:
        os.close(dir_fd)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise NotRegularFileError(f"{file}: not a regular file ({kind})", kind)
    os.set_blocking(fd, True)
    return fd


def _kind(name: str, dir_fd: int) -> str | None:
    """What ``name`` is if it exists and is not a regular file."""
    try:
        mode = os.lstat(name, dir_fd=dir_fd).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def read_regular(root: Path, file: str, max_bytes: int) -> bytes:
    """The contents of a regular file, refused before reading if over ``max_bytes``."""
    fd = open_inside(root, file, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise FileTooLargeError(file, size, max_bytes)
        chunks, got = [], 0
        while got <= max_bytes:  # the file may still grow: never read past the bound
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > max_bytes:
            raise FileTooLargeError(file, got, max_bytes)
        return b"".join(chunks)
    finally:
        os.close(fd)


def keep_regular(root: Path, file: str, max_bytes: int) -> KeptFile:
    """A regular file copied into the harness's spool (``kept.py``), refused before copying if
    over ``max_bytes``; a file that grows past the bound while it is copied is refused too."""
    fd = open_inside(root, file, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise FileTooLargeError(file, size, max_bytes)
        try:
            return keep_fd(fd, max_bytes)
        except OverflowError:
            raise FileTooLargeError(file, max_bytes + 1, max_bytes) from None
    finally:
        os.close(fd)


def write_regular(root: Path, file: str, data: bytes) -> None:
    """Create or replace the contents of a regular file (a planted FIFO or symlink is refused)."""
    fd = open_inside(root, file, os.O_WRONLY | os.O_CREAT, create_dirs=True)
    try:
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
