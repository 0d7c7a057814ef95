"""What a program leaves behind: reading it never blocks nor follows anything but a regular file;
removing it works whatever it is; leftovers of dead harness processes are swept, live ones not."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from timing import must_end

from scievals.sandbox import cgroups, sampledir
from scievals.sandbox.engine import engine
from scievals.sandbox.execution import read_regular_file
from scievals.sandbox.files import FileTooLargeError, NotRegularFileError
from scievals.sandbox.inside.kernel import MS_NOSUID, mount, umount

from .sandbox_helpers import (
    EMPTY_THE_DIRECTORY,
    assert_no_leftovers,
    make_box,
    module_box,
    outcome,
    run,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def box():
    yield from module_box()


@pytest.fixture(autouse=True)
def healthy_after(box):
    yield
    assert_no_leftovers()


PLANTS = {
    # what the program puts where the harness will look for its records
    "fifo": "import os; os.mkfifo('records.jsonl')",
    "socket": "import socket; socket.socket(socket.AF_UNIX).bind('records.jsonl')",
    "symlink_to_secret": "import os; os.symlink('/etc/shadow', 'records.jsonl')",
    "symlink_to_fifo": "import os; os.mkfifo('f'); os.symlink('f', 'records.jsonl')",
    "symlink_loop": "import os; os.symlink('b', 'records.jsonl'); os.symlink('records.jsonl', 'b')",
    "directory": "import os; os.mkdir('records.jsonl')",
    "symlinked_parent": "import os; os.symlink('/etc', 'sub'); open('mine', 'w')",
}


@pytest.mark.parametrize("name", sorted(PLANTS))
def test_planted_non_files_are_refused_without_blocking(box, name):
    res = outcome(box, PLANTS[name])
    assert res.returncode == 0, res.stderr
    path = "sub/passwd" if name == "symlinked_parent" else "records.jsonl"
    with must_end(f"reads and a write of a planted {name}"):
        with pytest.raises(NotRegularFileError):
            run(read_regular_file(box, path, 1 << 20))
        with pytest.raises((PermissionError, IsADirectoryError)):  # read_file: the same safe read
            run(box.read_file(path))
        with pytest.raises(PermissionError):  # and writing through a plant is refused too
            run(box.write_file(path, "x"))
    assert outcome(box, EMPTY_THE_DIRECTORY).returncode == 0


def test_device_nodes_are_refused(box):
    os.mknod(box.directory / "dev", 0o666 | 0o020000, os.makedev(1, 3))  # root, from outside
    with pytest.raises(NotRegularFileError, match="character device"):
        run(read_regular_file(box, "dev", 100))
    os.unlink(box.directory / "dev")


def test_size_is_bounded_before_reading(box):
    res = outcome(box, "open('records.jsonl', 'wb').write(b'x' * 5000)")
    assert res.returncode == 0
    assert run(read_regular_file(box, "records.jsonl", 5000)) == b"x" * 5000
    with pytest.raises(FileTooLargeError, match="over the 4999-byte bound"):
        run(read_regular_file(box, "records.jsonl", 4999))
    run(box.write_file("records.jsonl", b"ok"))
    assert run(box.read_file("records.jsonl")) == "ok"


def test_reading_from_a_foreign_sandbox_is_bounded():
    from inspect_ai.util._sandbox.local import LocalSandboxEnvironment

    env = LocalSandboxEnvironment()
    try:
        Path(env.directory.name, "r.txt").write_bytes(b"12345")
        assert run(read_regular_file(env, "r.txt", 5)) == b"12345"
        with pytest.raises(FileTooLargeError):
            run(read_regular_file(env, "r.txt", 4))
    finally:
        env.directory.cleanup()


# ---------------------------------------------------------------- removal


def _deep(root: Path, levels: int) -> None:
    fd = os.open(root, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    os.close(fd)


@pytest.fixture
def scratch(tmp_path):
    """A tmpfs when root: this machine's disk takes milliseconds per rmdir (discard)."""
    if os.geteuid() == 0:
        mount("tmpfs", str(tmp_path), "tmpfs", MS_NOSUID, "size=64m")
    yield tmp_path
    if os.geteuid() == 0:
        umount(str(tmp_path))


def test_remove_tree_handles_any_depth_links_and_modes(scratch):
    outside = scratch / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    tree = scratch / "tree"
    tree.mkdir()
    _deep(tree, 3000)  # shutil.rmtree raises RecursionError on this in 3.11
    (tree / "link_out").symlink_to(outside)
    (tree / "loop").symlink_to(tree / "loop")
    os.mkfifo(tree / "fifo")
    socket.socket(socket.AF_UNIX).bind(str(tree / "sock"))
    for i in range(300):
        (tree / f"many{i}").mkdir()
        (tree / f"many{i}" / "f").write_text("x")
    locked = tree / "locked"
    locked.mkdir()
    (locked / "f").write_text("x")
    locked.chmod(0)
    with must_end("removing a deep tree of loops, a FIFO and a socket"):
        sampledir.remove_tree(tree)
    assert not tree.exists()
    assert (outside / "keep.txt").read_text() == "keep"
    sampledir.remove_tree(tree)  # already gone: fine


def test_cleanup_never_raises():
    sb = make_box()
    sb.cleanup()
    sb.cleanup()  # twice: nothing left, no error
    gone = make_box()
    for point in sampledir.mounts_under(gone.directory):  # removed behind the provider's back
        umount(point)
    gone.directory.rmdir()
    gone.cleanup()
    assert not gone.directory.exists()


# ---------------------------------------------------------------- sweeping what dead harnesses left


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_sweep_removes_only_dead_harnesses_leftovers(tmp_path):
    dead = _dead_pid()
    live = os.getpid()
    sample = tmp_path / f"scievals-sample-{dead}-abc"
    zygote = tmp_path / f"scievals-zygote-{dead}-abc"
    mine = tmp_path / f"scievals-sample-{live}-abc"
    other = tmp_path / "scievals-zygote-oldstyle"  # no pid in the name: never touched
    for d in (sample, zygote, mine, other):
        d.mkdir()
    (zygote / "zygote.log").write_text("x")
    if os.geteuid() == 0:
        mount("tmpfs", str(sample), "tmpfs", MS_NOSUID, "size=1m")
        mount("tmpfs", str(sample), "tmpfs", MS_NOSUID, "size=1m")  # stacked twice
    _deep(sample, 1500)
    sampledir.sweep(tmp_path)
    assert not sample.exists() and not zygote.exists()
    assert mine.exists() and other.exists()
    assert sampledir.mounts_under(sample) == []

    groups = engine().enforced.cgroups
    if groups.memory is None:
        return
    stale = groups.memory / f"scievals-{dead}-7"
    ours = groups.memory / f"scievals-{live}-999999"
    stale.mkdir()
    ours.mkdir()
    try:
        groups.sweep()
        assert not stale.exists() and ours.exists()
    finally:
        for d in (stale, ours):
            if d.exists():
                d.rmdir()


def test_pid_alive():
    assert cgroups.pid_alive(os.getpid())
    assert not cgroups.pid_alive(_dead_pid())
