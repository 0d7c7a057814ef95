"""Hostile programs against the kernel-enforced limits, through the structured outcome API: each
must end with the right ``limit`` (decided by the engine, never by what the program printed), in
bounded time, with nothing left behind, and the next execution must work."""

from __future__ import annotations

import os
import time

import pytest
from timing import must_end

from scievals.sandbox.engine import engine
from scievals.sandbox.execution import run_program

from .sandbox_helpers import (
    EMPTY_THE_DIRECTORY,
    assert_no_leftovers,
    make_box,
    module_box,
    outcome,
    run,
)

pytestmark = pytest.mark.slow

SMALL = {"memory_gib": 0.5, "disk_mib": 64, "inodes": 2000, "tmp_mib": 32}


@pytest.fixture(scope="module")
def box():
    if engine().enforced.cgroups.memory is None:
        pytest.skip("no memory cgroup on this host (describe()['enforced'] says why)")
    yield from module_box(**SMALL)


@pytest.fixture(autouse=True)
def healthy_after(box):
    """After every hostile program: nothing left, and the sandbox still works."""
    yield
    assert_no_leftovers()
    res = outcome(box, "import numpy; print(numpy.arange(3).sum())")
    assert (res.returncode, res.stdout, res.limit) == (0, "3\n", None)


# ---------------------------------------------------------------- memory the rlimits cannot see

MEMORY_ATTACKS = {
    # 20 memfds of 250 MiB written with write(): never mapped (RLIMIT_AS), in nobody's RSS or PSS
    "memfd_write": """
        import os
        fds, chunk = [], b"x" * 2**20
        for _ in range(20):
            fds.append(os.memfd_create("m"))
            for _ in range(250):
                os.write(fds[-1], chunk)
        print("survived")
    """,
    # ftruncate + mmap + touch, unmapping each one (RLIMIT_AS never sees more than one)
    "memfd_mmap": """
        import mmap, os
        keep = []
        for _ in range(20):
            fd = os.memfd_create("m")
            os.ftruncate(fd, 250 * 2**20)
            with mmap.mmap(fd, 250 * 2**20) as m:
                for i in range(0, len(m), 4096):
                    m[i] = 1
            keep.append(fd)
        print("survived")
    """,
    # each child stays small; together they do not
    "fork_memfd": """
        import os, time
        for _ in range(4):
            if os.fork() == 0:
                fds = [os.memfd_create("m") for _ in range(2)]
                for fd in fds:
                    for _ in range(200):
                        os.write(fd, b"x" * 2**20)
                time.sleep(60)
                os._exit(0)
        time.sleep(60)
    """,
    # plain anonymous memory spread over processes, each under its own RLIMIT_AS
    "fork_anonymous": """
        import os, time
        for _ in range(5):
            if os.fork() == 0:
                x = bytearray(150 * 2**20)
                time.sleep(60)
        time.sleep(60)
    """,
    # files in the private /tmp (a tmpfs: pages charged to the execution) plus small children
    "tmpfs_and_children": """
        import os, time
        for i in range(30):
            open(f"/tmp/f{i}", "wb").write(b"x" * 2**20)
        for _ in range(3):
            if os.fork() == 0:
                x = bytearray(200 * 2**20)
                time.sleep(60)
        time.sleep(60)
    """,
}


@pytest.mark.parametrize("name", sorted(MEMORY_ATTACKS))
def test_memory_cgroup_catches_what_rlimits_miss(box, name):
    with must_end(f"the memory attack {name}"):
        res = outcome(box, MEMORY_ATTACKS[name], timeout=20)
    assert res.limit == "memory", (res, name)  # not its timeout: the cgroup ended it
    assert res.reason == "memory limit (0.5 GiB)"
    assert res.returncode == 137 and "survived" not in res.stdout


def test_tmpfs_in_a_nested_user_namespace_is_refused(box):
    code = """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        print(libc.unshare(0x10000000 | 0x00020000), ctypes.get_errno())  # NEWUSER | NEWNS
        print(libc.mount(b"none", b"/tmp", b"tmpfs", 0, b"size=8g"), ctypes.get_errno())
    """
    res = outcome(box, code)
    assert res.returncode == 0 and res.limit is None
    assert res.stdout.split() == ["-1", "1", "-1", "1"]  # EPERM twice


# ---------------------------------------------------------------- processes


@pytest.mark.parametrize(
    "code",
    [
        "import os\nwhile True:\n    os.fork()\n",
        "import threading, time\nthreading.stack_size(2**16)\nwhile True:\n    threading.Thread(target=time.sleep, args=(60,)).start()\n",
        "import subprocess\nps = [subprocess.Popen(['sleep', '60']) for _ in range(200)]\n",
    ],
    ids=["fork_bomb", "thread_bomb", "subprocess_bomb"],
)
def test_process_limit_is_the_pids_cgroup(box, code):
    with must_end("a process bomb"):
        res = outcome(box, code, timeout=20)
    assert res.limit == "processes", res  # not its timeout: the pids cgroup ended it
    assert res.reason == "process limit (64 processes and threads)"


def test_shell_fork_bomb(box):
    with must_end("a shell fork bomb"):
        res = run(run_program(box, ["bash", "-c", ":(){ :|:& };: ; sleep 100"], timeout=20))
    assert res.limit == "processes" and res.returncode == 137


# ---------------------------------------------------------------- CPU bandwidth

BUSY_CHILDREN = """
import os, resource, time
started = time.monotonic()
kids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            pass
        os._exit(0)
    kids.append(pid)
for kid in kids:
    os.waitpid(kid, 0)
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(use.ru_utime + use.ru_stime, time.monotonic() - started)
"""


def test_busy_processes_share_the_execution_cpu_quota():
    """Four processes spinning for 1.5 s get a quarter of a CPU between them when the execution
    is given one (cpus=0.25): a program cannot take the machine from its neighbours. (Without
    the cap each would get a share of every core the machine has free.)"""
    if engine().enforced.cgroups.cpu is None:
        pytest.skip("no cpu cgroup on this host (describe()['enforced'] says why)")
    box = make_box(cpus=0.25)
    try:
        res = outcome(box, BUSY_CHILDREN, timeout=60)
    finally:
        box.cleanup()
    assert res.returncode == 0, res
    cpu, wall = (float(x) for x in res.stdout.split())
    assert cpu <= 0.25 * wall * 1.3 + 0.05, (cpu, wall)


# ---------------------------------------------------------------- disk and inodes

DISK_ATTACKS = {
    "big_files": """
        for i in range(8):
            with open(f"big{i}", "wb") as fh:
                for _ in range(200):
                    fh.write(b"x" * 2**20)
    """,
    "many_empty_files": """
        for i in range(200_000):
            open(f"f{i}", "w").close()
    """,
    "many_dirs": """
        import os
        for i in range(200_000):
            os.mkdir(f"d{i}")
    """,
    "tmp_flood": """
        with open("/tmp/flood", "wb") as fh:
            while True:
                fh.write(b"x" * 2**20)
    """,
    "tmp_inodes": """
        for i in range(200_000):
            open(f"/tmp/f{i}", "w").close()
    """,
    "dev_shm_flood": """
        with open("/dev/shm/flood", "wb") as fh:
            while True:
                fh.write(b"x" * 2**20)
    """,
}


@pytest.mark.parametrize("name", sorted(DISK_ATTACKS))
def test_disk_caps_stop_floods_with_enospc(box, name):
    if not engine().disk_caps and not name.startswith(("tmp", "dev")):
        pytest.skip("sample directories are not capped here (not root)")
    with must_end(f"the disk attack {name}"):
        res = outcome(box, DISK_ATTACKS[name], timeout=20)
    assert res.returncode == 1 and "No space left on device" in res.stderr, res
    assert res.limit == "disk" and res.reason.startswith("disk limit ("), res
    assert outcome(box, EMPTY_THE_DIRECTORY).returncode == 0


def test_full_disk_is_not_a_limit_when_the_program_succeeds(box):
    res = outcome(box, "open('/tmp/x', 'wb').write(b'1')")
    assert (res.returncode, res.limit, res.reason) == (0, None, None)


def test_deep_nesting_and_links_are_removed_by_cleanup():
    sb = make_box(**{**SMALL, "inodes": 5000})
    try:
        code = """
            import os
            os.symlink("loop_b", "loop_a")
            os.symlink("loop_a", "loop_b")
            os.symlink("/", "root_link")
            os.mkfifo("fifo")
            for _ in range(3000):
                os.mkdir("d")
                os.chdir("d")
            open("deepest.txt", "w").write("x")
            print("deep")
        """
        res = outcome(sb, code)
        assert res.stdout == "deep\n", res
    finally:
        with must_end("cleaning up deep nesting and links"):
            sb.cleanup()  # must not raise (no RecursionError) and must not follow root_link
    assert not sb.directory.exists()
    assert os.path.exists("/usr/bin")


# ---------------------------------------------------------------- the verdict is the engine's


@pytest.mark.parametrize(
    "line",
    [
        "scievals-sandbox: killed: memory limit (4 GiB)",
        "scievals-sandbox: killed: timeout",
        "scievals-sandbox: killed: process limit (64 processes and threads)",
        "scievals-sandbox: memory limit reached (MemoryError)",
    ],
)
def test_fake_killed_lines_are_not_limits(box, line):
    code = f"""
        import sys
        print({line!r})
        sys.stderr.write({line!r} + "\\n")
        sys.exit(1)
    """
    res = outcome(box, code)
    assert (res.returncode, res.limit, res.reason, res.infrastructure) == (1, None, None, None)
    assert line in res.stderr


def test_every_limit_kind_is_structured():
    sb = make_box(**SMALL, wall_seconds=1, cpu_seconds=1, output_kib=64, file_mib=1)
    try:
        cases = [
            ("import time\ntime.sleep(100)", {}, ("wall_clock", 137)),
            ("while True:\n    pass", {"timeout": 1}, ("timeout", None)),
            ("while True:\n    print('x' * 1000)", {}, ("output", 137)),
        ]
        for code, kw, (limit, returncode) in cases:
            res = outcome(sb, code, **kw)
            assert (res.limit, res.returncode) == (limit, returncode), res
            assert res.reason
            assert "scievals-sandbox" not in res.stderr  # the engine's notes are not the program's
        res = run(run_program(sb, ["bash", "-c", "exec head -c 5000000 /dev/zero > f"]))
        assert res.limit == "file_size" and res.returncode == 128 + 25, res
        res = run(run_program(sb, ["bash", "-c", "while :; do :; done"], timeout=30))
        assert res.limit == "cpu", res
        started = time.monotonic()
        res = outcome(sb, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
        assert (res.limit, res.returncode, res.reason) == (None, 139, "signal SIGSEGV")
        assert 0 <= res.seconds <= time.monotonic() - started  # the program's time, in seconds
    finally:
        sb.cleanup()
