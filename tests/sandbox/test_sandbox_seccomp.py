"""The seccomp filter and the fresh session keyring: the scientific stack, threads and subprocesses
work; namespaces, mounts, keys, io_uring, tracing and the other escape hatches fail inside."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import pytest

from scievals.sandbox import seccomp
from scievals.sandbox.engine import engine
from scievals.sandbox.execution import run_program

from .sandbox_helpers import assert_no_leftovers, module_box, outcome, run

pytestmark = pytest.mark.slow

KEY_SPEC_SESSION_KEYRING, KEYCTL_REVOKE = -3, 3
SYS = {
    "x86_64": {"add_key": 248, "keyctl": 250},
    "aarch64": {"add_key": 217, "keyctl": 219},
}[os.uname().machine]


@pytest.fixture(scope="module")
def box():
    if engine().enforced.seccomp is None:
        pytest.skip(f"seccomp unavailable here: {engine().enforced.seccomp_note}")
    yield from module_box()


@pytest.fixture(autouse=True)
def healthy_after(box):
    yield
    assert_no_leftovers()


def test_filter_has_both_architectures():
    for machine in ("x86_64", "aarch64"):
        program = seccomp.build(machine)
        assert len(program) % 8 == 0 and len(program) // 8 < 256
    with pytest.raises(ValueError):
        seccomp.build("riscv64")


def test_the_scientific_stack_threads_and_subprocesses_work(box):
    code = """
        import subprocess, sys, threading
        import numpy as np, scipy.linalg, sympy, matplotlib.pyplot as plt
        a = np.random.default_rng(0).normal(size=(200, 200))
        print(round(float(np.linalg.det(a @ a.T + np.eye(200)) > 0)), scipy.linalg.norm(np.eye(2)) ** 2)
        print(sympy.integrate(sympy.Symbol("x") ** 2, sympy.Symbol("x")))
        plt.plot([1, 2]); plt.savefig("/tmp/p.png")
        out = []
        ts = [threading.Thread(target=out.append, args=(i,)) for i in range(8)]
        [t.start() for t in ts]; [t.join() for t in ts]
        print(sorted(out) == list(range(8)))
        print(subprocess.run(["bash", "-c", "echo shell"], capture_output=True, text=True).stdout.strip())
        print(subprocess.run([sys.executable, "-c", "print('child')"], capture_output=True, text=True).stdout.strip())
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(2) as pool:
            print(sum(pool.map(abs, [-1, -2, 3])))
        import os; os.mkfifo("/tmp/fifo"); print("fifo")
    """
    res = outcome(box, code, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split("\n")[:-1] == [
        "1 2.0000000000000004",
        "x**3/3",
        "True",
        "shell",
        "child",
        "6",
        "fifo",
    ]


@pytest.mark.parametrize(
    "cmd",
    [
        ["unshare", "-Urm", "true"],
        ["unshare", "-n", "true"],
        ["unshare", "-p", "-f", "true"],
        ["bash", "-c", "exec unshare -U -r bash -c 'mount -t tmpfs none /tmp'"],
        ["mount", "-t", "tmpfs", "none", "/tmp"],
        ["/usr/sbin/chroot", "/", "true"],
    ],
)
def test_namespace_and_mount_tools_fail(box, cmd):
    res = run(run_program(box, cmd))
    assert res.returncode != 0 and res.limit is None, res
    assert "Operation not permitted" in res.stderr or "must be superuser" in res.stderr, res


SYSCALL_ATTACKS = {
    # name: (code calling it through ctypes, errno it must fail with)
    "unshare_user": ("l.unshare(0x10000000)", "EPERM"),
    "unshare_mount": ("l.unshare(0x00020000)", "EPERM"),
    "setns": ("l.setns(os.open('/proc/self/ns/net', os.O_RDONLY), 0)", "EPERM"),
    "clone_newuser": ("l.syscall(N['clone'], 0x10000000 | 17, 0, 0, 0, 0)", "EPERM"),
    "clone_newns": ("l.syscall(N['clone'], 0x00020000 | 17, 0, 0, 0, 0)", "EPERM"),
    "clone3": ("l.syscall(435, 0, 0)", "ENOSYS"),
    "mount": ("l.mount(b'none', b'/tmp', b'tmpfs', 0, None)", "EPERM"),
    "umount": ("l.umount2(b'/tmp', 2)", "EPERM"),
    "keyctl": ("l.syscall(N['keyctl'], 0, -3, 0)", "EPERM"),
    "add_key": ("l.syscall(N['add_key'], b'user', b'k', b'v', 1, ctypes.c_long(-3))", "EPERM"),
    "io_uring_setup": ("l.syscall(425, 8, ctypes.create_string_buffer(120))", "EPERM"),
    "ptrace": ("l.ptrace(0, 0, 0, 0)", "EPERM"),
    "bpf": ("l.syscall(N['bpf'], 0, 0, 0)", "EPERM"),
    "perf_event_open": ("l.syscall(N['perf_event_open'], 0, 0, -1, -1, 0)", "EPERM"),
    "userfaultfd": ("l.syscall(N['userfaultfd'], 0)", "EPERM"),
    "process_vm_readv": ("l.syscall(N['process_vm_readv'], 1, 0, 0, 0, 0, 0)", "EPERM"),
    "init_module": ("l.syscall(N['init_module'], 0, 0, 0)", "EPERM"),
    "reboot": ("l.syscall(N['reboot'], 0, 0, 0, 0)", "EPERM"),
    "mknod_char_device": ("l.mknod(b'/tmp/null', 0o20666, 0x103)", "EPERM"),
    "personality": ("l.personality(0x0040000)", "EPERM"),
    "x32_abi": ("l.syscall(0x40000000 | N['unshare'], 0x10000000)", "ENOSYS"),
}


@pytest.mark.parametrize("name", sorted(SYSCALL_ATTACKS))
def test_escape_syscalls_fail_inside(box, name):
    call, want = SYSCALL_ATTACKS[name]
    if name == "x32_abi" and os.uname().machine != "x86_64":
        pytest.skip("x32 is an x86_64 ABI")
    names = seccomp.DENIED[os.uname().machine] | {"clone": seccomp.CLONE[os.uname().machine]}
    code = f"""
        import ctypes, errno, os
        N = {names!r}
        l = ctypes.CDLL(None, use_errno=True)
        l.syscall.restype = ctypes.c_long
        ret = {call}
        print(ret, errno.errorcode.get(ctypes.get_errno()))
    """
    res = outcome(box, code)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["-1", want], (name, res.stdout)


def _syscall(name: str, *args) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    values = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    return libc.syscall(ctypes.c_long(SYS[name]), *values)


def test_harness_keys_are_invisible_and_no_key_survives(box, monkeypatch):
    secret = b"scievals-harness-key-payload"
    key = _syscall("add_key", b"user", b"scievals-harness-key", secret, len(secret), -3)
    assert key > 0, os.strerror(ctypes.get_errno())
    try:
        assert "scievals-harness-key" in Path("/proc/keys").read_text()  # the harness sees it
        pool = engine().uids
        if pool is not None:  # every execution below runs as the same uid
            uid, lock = pool.acquire()
            lock.close()
            monkeypatch.setattr(pool, "acquire", lambda: (uid, None))
        code = f"""
            import ctypes, errno
            l = ctypes.CDLL(None, use_errno=True)
            l.syscall.restype = ctypes.c_long
            buf = ctypes.create_string_buffer(256)
            print(l.syscall({SYS["keyctl"]}, 11, {key}, buf, 256), errno.errorcode.get(ctypes.get_errno()))
            for ring in (-3, -4, -5):
                r = l.syscall({SYS["add_key"]}, b"user", b"planted", b"x", 1, ctypes.c_long(ring))
                print(r, errno.errorcode.get(ctypes.get_errno()))
            print("KEYS", open("/proc/keys").read().replace("\\n", "|"))
        """
        first = outcome(box, code)
        assert first.returncode == 0, first.stderr
        lines = first.stdout.splitlines()
        assert lines[:4] == ["-1 EPERM"] * 4, first.stdout
        later = outcome(box, "print(open('/proc/keys').read())")
        for res in (first, later):
            assert "scievals-harness-key" not in res.stdout and secret.decode() not in res.stdout
            assert "planted" not in res.stdout
    finally:
        _syscall("keyctl", KEYCTL_REVOKE, key)
