"""Hostile completions: each must fail its own execution with a clear reason, leave nothing
behind, change nothing outside, and leave the sandbox working for the next one."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import textwrap
from pathlib import Path

import pytest
from timing import must_end

from scievals.sandbox.engine import engine

from .sandbox_helpers import SECRET, assert_no_leftovers, make_box, module_box, outcome, run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def box():
    yield from module_box()


@pytest.fixture(autouse=True)
def healthy_after(box):
    """After every hostile program: nothing left running, and the sandbox still works."""
    yield
    assert_no_leftovers()
    res = run(box.exec(["python3", "-c", "import numpy; print(numpy.arange(3).sum())"]))
    assert (res.returncode, res.stdout) == (0, "3\n")


def py(box, code: str, **kw):
    return run(box.exec(["python3", "-c", textwrap.dedent(code)], **kw))


def test_fork_bomb_python(box):
    res = py(box, "import os\nwhile True:\n    os.fork()\n")
    assert res.returncode != 0
    assert "process limit" in res.stderr


def test_fork_bomb_shell(box):
    res = run(box.exec(["bash", "-c", ":(){ :|:& };: ; sleep 100"], timeout=60))
    assert res.returncode == 137
    assert res.stderr.rstrip().endswith("killed: process limit (64 processes and threads)")


def test_memory_bomb_single_allocation(box):
    """More than the machine has at once: the kernel refuses it (MemoryError, the program's own)."""
    res = py(box, "x = bytearray(1 << 46)")
    assert res.returncode == 1
    assert "MemoryError" in res.stderr and "memory limit" in res.stderr


def test_memory_bomb_single_allocation_touched():
    """One allocation over the limit, written to: stopped at the limit, which the reason names."""
    sb = make_box(memory_gib=1)
    try:
        res = py(sb, "x = b'x' * (2 * 2**30)")
        assert res.returncode == 137, res
        assert res.stderr.rstrip().endswith("killed: memory limit (1 GiB)")
    finally:
        sb.cleanup()


def test_memory_bomb_growing():
    sb = make_box(memory_gib=1)
    try:
        res = py(sb, "import numpy as np\nl = []\nwhile True:\n    l.append(np.ones(2**24))\n")
        assert res.returncode != 0
        assert "memory limit" in res.stderr
    finally:
        sb.cleanup()


def test_memory_bomb_across_processes():
    """Each process stays under its own rlimit; the whole tree does not."""
    sb = make_box(memory_gib=1)
    try:
        code = """
            import os, time
            for _ in range(3):
                if os.fork() == 0:
                    x = b"x" * (600 * 2**20)
                    time.sleep(60)
            time.sleep(60)
        """
        res = py(sb, code)
        assert res.returncode == 137
        assert res.stderr.rstrip().endswith("killed: memory limit (1 GiB)")
    finally:
        sb.cleanup()


def test_infinite_loop_timeout(box):
    with pytest.raises(TimeoutError):
        py(box, "while True:\n    pass\n", timeout=2)


def test_sleeping_forever_hits_wall_clock():
    sb = make_box(wall_seconds=1)
    try:
        res = py(sb, "import time\ntime.sleep(1000)")
        assert res.returncode == 137
        assert "killed: wall-clock limit" in res.stderr
    finally:
        sb.cleanup()


def test_cpu_burning_threads():
    sb = make_box(cpu_seconds=1)
    try:
        code = """
            import threading
            def burn():
                while True:
                    pass
            for _ in range(4):
                threading.Thread(target=burn, daemon=True).start()
            burn()
        """
        res = py(sb, code, timeout=120)
        assert res.returncode == 137
        assert res.stderr.rstrip().endswith("killed: cpu time limit (1 s)")
    finally:
        sb.cleanup()


def test_cpu_burning_processes_that_leave_the_tree():
    """Children that start sessions of their own and outlive their parent each stay under a
    per-process limit; the execution's CPU seconds are counted together and stop them all."""
    sb = make_box(cpu_seconds=2, cpus=0)
    try:
        code = """
            import os, time
            for _ in range(3):
                if os.fork() == 0:
                    os.setsid()
                    if os.fork() == 0:
                        while True:
                            pass
                    os._exit(0)
            time.sleep(600)
        """
        with must_end("three session leaders spinning under a 2 s CPU limit"):
            res = py(sb, code, timeout=120)
        assert res.returncode == 137, res
        assert res.stderr.rstrip().endswith("killed: cpu time limit (2 s)")  # not the timeout
    finally:
        sb.cleanup()


def test_a_program_raising_sigxcpu_itself_is_no_limit(box):
    res = outcome(box, "import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)")
    assert (res.returncode, res.limit, res.reason) == (128 + 24, None, "signal SIGXCPU")


def test_output_flood(box):
    res = py(box, "while True:\n    print('x' * 1000)\n")
    assert res.returncode == 137
    assert "killed: output limit" in res.stderr
    assert "[stdout truncated" in res.stdout
    assert len(res.stdout) < 1024 * 1024 + 200


def test_stderr_flood_from_a_subprocess(box):
    res = run(box.exec(["bash", "-c", "yes error >&2"]))
    assert res.returncode == 137
    assert "killed: output limit" in res.stderr


def test_no_network_not_even_loopback(box):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    code = f"""
        import socket
        for addr in [("127.0.0.1", {port}), ("1.1.1.1", 53), ("pypi.org", 443)]:
            try:
                socket.create_connection(addr, timeout=3)
                print("CONNECTED", addr)
            except OSError as exc:
                print("refused", addr, exc)
    """
    res = py(box, code)
    listener_accepted = True
    try:
        listener.accept()
    except TimeoutError:
        listener_accepted = False
    finally:
        listener.close()
    assert "CONNECTED" not in res.stdout
    assert not listener_accepted


def test_environment_secrets_invisible(box):
    assert os.environ["SCIEVALS_TEST_API_KEY"] == SECRET
    code = """
        import os, glob
        print(dict(os.environ))
        for p in glob.glob("/proc/*/environ"):
            try:
                print(p, open(p, "rb").read())
            except OSError as exc:
                print(p, exc)
    """
    res = py(box, code)
    assert res.returncode == 0
    assert SECRET not in res.stdout + res.stderr
    for key in os.environ:
        if "KEY" in key or "TOKEN" in key or "SECRET" in key:
            assert key not in res.stdout


def test_cannot_read_outside(box, tmp_path):
    secret_file = tmp_path / "targets.h5"
    secret_file.write_text("the answers")
    other = make_box()
    cache = box.engine.runtime.root.parents[1]  # wherever SCIEVALS_CACHE or HOME puts it
    try:
        run(other.write_file("target.json", "other sample's target"))
        paths = [
            str(secret_file),
            str(other.directory / "target.json"),
            str(Path(__file__)),
            str(cache / "wheels"),
            str(cache / "scicode"),
            "/etc/shadow",
            "/work",
            str(Path.cwd() / "pyproject.toml"),
            f"/proc/{os.getpid()}/environ",
            f"/proc/{os.getpid()}/cmdline",
        ]
        code = f"""
            import os
            for p in {paths!r}:
                try:
                    if os.path.isdir(p):
                        print("LISTED", p, os.listdir(p))
                    else:
                        print("READ", p, open(p).read()[:50])
                except OSError as exc:
                    print("denied", p, type(exc).__name__)
        """
        res = py(box, code)
        assert res.returncode == 0
        assert "READ" not in res.stdout and "LISTED" not in res.stdout, res.stdout
        assert "the answers" not in res.stdout and "other sample" not in res.stdout
        listed = py(box, f"import os; print(os.listdir({str(cache)!r}))")
        assert listed.stdout == "['runtime']\n"  # only the runtime, read-only
    finally:
        other.cleanup()


def test_cannot_write_outside(box, tmp_path):
    canary = tmp_path / "canary.txt"
    canary.write_text("untouched")
    runtime = engine().runtime.root
    before = hashlib.sha256(canary.read_bytes()).hexdigest()
    targets = [
        str(canary),
        "/usr/evil",
        f"{runtime}/evil.py",
        f"{runtime}/bin/python",
        "/etc/passwd",
        "/evil",
        "/proc/sys/kernel/hostname",
    ]
    code = f"""
        import os
        for p in {targets!r}:
            try:
                with open(p, "a") as fh:
                    fh.write("pwned")
                print("WROTE", p)
            except OSError as exc:
                print("denied", p, type(exc).__name__)
        open("/tmp/private.txt", "w").write("fine")
        open("mine.txt", "w").write("fine")
    """
    res = py(box, code)
    assert res.returncode == 0, res.stderr
    assert "WROTE" not in res.stdout, res.stdout
    assert hashlib.sha256(canary.read_bytes()).hexdigest() == before
    assert not (runtime / "evil.py").exists() and not Path("/usr/evil").exists()
    assert run(box.read_file("mine.txt")) == "fine"


def test_cannot_kill_the_harness_or_the_zygote(box):
    zygote = engine().hello["pid"]
    code = f"""
        import os, signal
        for pid in (os.getppid(), 1, {os.getpid()}, {zygote}, -1):
            try:
                os.kill(pid, signal.SIGKILL)
                print("sent", pid)
            except OSError as exc:
                print("denied", pid, exc)
    """
    py(box, code)
    os.kill(zygote, 0)  # still alive (raises if not)
    assert engine()._zygote.poll() is None


def test_background_daemon_is_killed(box):
    code = """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(1000)
            os._exit(0)
        print("parent done")
    """
    res = py(box, code)
    assert res.returncode == 0 and res.stdout == "parent done\n"


@pytest.mark.parametrize(
    "code, returncode, reason",
    [
        ("import sys; sys.exit(0)", 0, None),
        ("import sys; sys.exit(3)", 3, None),
        ("raise SystemExit('bye')", 1, None),
        ("import os; os._exit(0)", 0, None),
        ("import os; os._exit(7)", 7, None),
        ("import os; os.abort()", 128 + signal.SIGABRT, "signal SIGABRT"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", 137, "signal SIGKILL"),
        ("import ctypes; ctypes.string_at(0)", 128 + signal.SIGSEGV, "signal SIGSEGV"),
        ("raise KeyError('x')", 1, None),
    ],
)
def test_early_exits_reported_faithfully(box, code, returncode, reason):
    res = py(box, code)
    assert res.returncode == returncode, res.stderr
    if reason:
        assert res.stderr.rstrip().endswith(f"killed: {reason}")
    else:
        assert "scievals-sandbox" not in res.stderr


def test_monkeypatching_does_not_leak_between_executions(box):
    code = """
        import builtins, numpy as np, sys
        np.allclose = lambda *a, **k: True
        builtins.print = lambda *a, **k: None
        sys.modules["numpy"].array_equal = lambda *a: True
        sys.exit = lambda *a: None
    """
    assert py(box, code).returncode == 0
    res = py(box, "import numpy as np\nprint(np.allclose(1, 2), np.array_equal([1], [2]))")
    assert res.stdout == "False False\n"


def test_no_inherited_descriptors(box):
    res = py(box, "import os\nprint(sorted(os.listdir('/proc/self/fd')))")
    assert res.stdout == "['0', '1', '2', '3']\n"  # 3: the directory being listed


def test_fake_success_marker_stays_inside(box):
    """A program cannot plant files where the harness keeps results, nor symlink out of its dir."""
    code = """
        import os
        os.symlink("/etc/passwd", "link")
        os.symlink("/proc/self/environ", "env")
        print("ALL TESTS PASSED")
    """
    res = py(box, code)
    assert res.returncode == 0
    with pytest.raises(PermissionError):
        run(box.read_file("link"))
    with pytest.raises(PermissionError):
        run(box.write_file("link", "x"))
    assert Path("/etc/passwd").read_text() != "x"


def test_cancellation_kills_the_tree(box):
    import asyncio

    async def go():
        task = asyncio.create_task(box.exec(["python3", "-c", "import time; time.sleep(1000)"]))
        await asyncio.sleep(1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(go())
