"""Per-sample directories: capped in bytes and inodes, removed completely, swept after a crash.

When the harness is root, a sample's directory is a tmpfs of its own (``size=``, ``nr_inodes=``):
a program that writes huge files or a million small ones gets ENOSPC instead of filling the
machine's disk, and removal is one unmount whatever it left (3000 nested directories, symlink
loops, FIFOs). Pages written there are charged to the writing execution's memory cgroup. Without
root the directory is a plain one, removed by ``remove_tree`` (iterative, no symlink is ever
followed), and only the per-file size rlimit bounds it. Names carry the harness's pid
(``scievals-sample-<pid>-*``) so that ``sweep`` removes only what dead harness processes left.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import stat
import sys
import tempfile
from pathlib import Path

from scievals.sandbox.cgroups import pid_alive
from scievals.sandbox.inside.kernel import MNT_DETACH, MS_NODEV, MS_NOSUID, mount, umount

OWNED = re.compile(r"^scievals-(?:sample|zygote)-(\d+)-")
_live: set[Path] = set()


def create(gid: int | None, disk_bytes: int, inodes: int, tmpfs: bool) -> Path:
    """A new sample directory; ``gid`` (the sandbox uids' group) may write into it."""
    path = Path(tempfile.mkdtemp(prefix=f"scievals-sample-{os.getpid()}-"))
    _live.add(path)
    try:
        if tmpfs:
            owner = f",uid=0,gid={gid}" if gid is not None else ""
            mode = "2770" if gid is not None else "0700"
            options = f"size={disk_bytes},nr_inodes={inodes},mode={mode}{owner}"
            mount("tmpfs", str(path), "tmpfs", MS_NOSUID | MS_NODEV, options)
        elif gid is not None:
            os.chown(path, 0, gid)
            path.chmod(0o2770)
    except BaseException:
        remove(path)
        raise
    return path


def remove(path: Path) -> None:
    """Unmount and remove a sample directory; never raises (a failure is reported, and the next
    engine start sweeps what is left)."""
    try:
        _unmount_all(path)
        remove_tree(path)
    except OSError as exc:
        print(f"scievals sandbox: warning: could not remove {path}: {exc}", file=sys.stderr)
    _live.discard(path)


def live() -> set[Path]:
    """Sample directories of this process not removed yet."""
    return set(_live)


def mounts_under(path: Path) -> list[str]:
    """Mount points at or below ``path`` (this process's mount namespace), deepest first."""
    prefix = str(path)
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = _unescape(line.split()[4])
        if point == prefix or point.startswith(prefix + "/"):
            found.append(point)
    return sorted(found, key=len, reverse=True)


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), field)


def _unmount_all(path: Path) -> None:
    for _ in range(100):  # mounts may be stacked on one point
        points = mounts_under(path)
        if not points:
            return
        for point in points:
            with contextlib.suppress(OSError):
                umount(point, MNT_DETACH)


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything below it: one directory fd open at a time, no recursion
    (any depth), no symlink followed (a planted link to / removes only the link)."""
    try:
        top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return
    except OSError:
        os.unlink(path)  # a symlink or a file where the directory was
        return
    cur = top
    names: list[str] = []  # the path from ``path`` down to ``cur``
    idents = [_ident(cur)]
    pending = [_clear_files(cur)]  # subdirectories still to remove, per level
    try:
        while pending:
            if pending[-1]:
                name = pending[-1].pop()
                try:
                    nxt = _open_dir(name, cur)
                except FileNotFoundError:
                    continue
                except NotADirectoryError:
                    os.unlink(name, dir_fd=cur)
                    continue
                os.close(cur)
                cur = nxt
                names.append(name)
                idents.append(_ident(cur))
                pending.append(_clear_files(cur))
                continue
            more = _clear_files(cur)  # anything created meanwhile
            if more:
                pending[-1] = more
                continue
            pending.pop()
            idents.pop()
            if not names:
                break
            up = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=cur)
            if _ident(up) != idents[-1]:
                os.close(up)
                raise OSError(f"{path}: a directory moved during removal")
            os.close(cur)
            cur = up
            os.rmdir(names.pop(), dir_fd=cur)
    finally:
        os.close(cur)
    os.rmdir(path)


def _ident(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _open_dir(name: str, parent: int) -> int:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        return os.open(name, flags, dir_fd=parent)
    except PermissionError:  # not root: a directory the program made unreadable (ours anyway)
        os.chmod(name, 0o700, dir_fd=parent)
        return os.open(name, flags, dir_fd=parent)
    except OSError as exc:
        if exc.errno == 40:  # ELOOP: a symlink
            raise NotADirectoryError(name) from None
        raise


def _clear_files(fd: int) -> list[str]:
    """Unlink everything in directory ``fd`` but subdirectories; return their names."""
    dirs = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                dirs.append(entry.name)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.name, dir_fd=fd)
    return dirs


def sweep(tmp: Path | None = None) -> None:
    """Remove sample and zygote directories (and their mounts) of dead harness processes."""
    tmp = tmp or Path(tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for entry in os.scandir(tmp):
            match = OWNED.match(entry.name)
            if not match or pid_alive(int(match[1])):
                continue
            path = Path(entry.path)
            with contextlib.suppress(OSError):
                if stat.S_ISDIR(os.lstat(path).st_mode):
                    _unmount_all(path)
                    remove_tree(path)


@atexit.register
def _remove_live() -> None:
    for path in list(_live):
        remove(path)
