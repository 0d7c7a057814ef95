"""The kernel layer of the inside programs: libc through ctypes, mounts, prctl, raw syscalls,
namespaces, capabilities, the seccomp filter's installation and the execution's private root.

Standard library only; loaded with the program that uses it (``scievals.shipped``). The harness
imports it too, for its mounts (sample directories) and probes.
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS = 1, 4, 22, 38
PR_SET_CHILD_SUBREAPER = 36
SECCOMP_MODE_FILTER = 2
KEYCTL_JOIN_SESSION_KEYRING = 1
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}
SYS_UNSHARE = {"x86_64": 272, "aarch64": 97}
SYS_CLONE3 = {"x86_64": 435, "aarch64": 435}
SHM_OPTIONS = "mode=1777,size=64m,nr_inodes=1024"
ST_FLAGS = {1: MS_RDONLY, 2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC}
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
libc.unshare.argtypes = [ctypes.c_int]
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
libc.syscall.restype = ctypes.c_long


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def check(ret: int, what: str) -> None:
    """Raise the errno of a libc call that returned nonzero."""
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _b(path: str | None) -> bytes | None:
    return None if path is None else os.fsencode(path)


def mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None):
    check(libc.mount(_b(src), _b(dst), _b(fstype), flags, _b(data)), f"mount {dst}")


def umount(path: str, flags: int = 0) -> None:
    check(libc.umount2(os.fsencode(path), flags), f"umount {path}")


def unshare(flags: int, what: str = "unshare") -> None:
    check(libc.unshare(flags), what)


def prctl(option: int, arg: int) -> None:
    check(libc.prctl(option, arg, 0, 0, 0), f"prctl {option}")


def syscall(numbers: dict[str, int], *args: int | None) -> int:
    """A raw syscall (its number per architecture; every argument passed as a full-width long,
    None as a NULL pointer); -1 with errno set on failure."""
    values = [ctypes.c_long(a) if isinstance(a, int) else ctypes.c_void_p(a) for a in args]
    return libc.syscall(ctypes.c_long(numbers[os.uname().machine]), *values)


def join_session_keyring() -> None:
    """A new, empty session keyring: the harness's keys (or an earlier execution's) are not ours."""
    if syscall(SYS_KEYCTL, KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"keyctl(JOIN_SESSION_KEYRING): {os.strerror(err)}")


def install_seccomp(program: bytes) -> None:
    """Install a classic BPF seccomp filter (needs PR_SET_NO_NEW_PRIVS first); inherited by every
    child and kept across execve."""
    fprog = SockFprog(len(program) // 8, program)
    check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0), "seccomp")


def with_floor(program: bytes, marks: list[int], floor: int) -> bytes:
    """The guard filter with its placeholders replaced: the lowest pid it lets a signal reach,
    and that pid's negation (a process group) as a 32-bit word."""
    low, high = marks
    out = bytearray(program)
    for at in range(0, len(out), 8):
        k = int.from_bytes(out[at + 4 : at + 8], "little")
        if k == low:
            out[at + 4 : at + 8] = floor.to_bytes(4, "little")
        elif k == high:
            out[at + 4 : at + 8] = ((1 << 32) - floor).to_bytes(4, "little")
    return bytes(out)


def enter_userns() -> None:
    """Map ourselves to root in a new user namespace, so that later namespaces need no privilege."""
    uid, gid = os.geteuid(), os.getegid()
    unshare(CLONE_NEWUSER, "unshare(user)")
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")
    with open("/proc/self/uid_map", "w") as fh:
        fh.write(f"0 {uid} 1")
    with open("/proc/self/gid_map", "w") as fh:
        fh.write(f"0 {gid} 1")


def drop_capabilities() -> None:
    """Clear every capability set (for userns mode, where we stay uid 0 inside the namespace)."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()
    check(libc.capset(header, data), "capset")


# ---------------------------------------------------------------- the execution's root


def bind(src: str, dst: str, rw: bool = False, dev: bool = False) -> None:
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.exists(dst):
            open(dst, "w").close()
    mount(src, dst, None, MS_BIND | MS_REC)
    keep = 0
    for bit, flag in ST_FLAGS.items():  # flags the source already had must stay (locked in userns)
        if os.statvfs(dst).f_flag & bit:
            keep |= flag
    flags = MS_BIND | MS_REMOUNT | MS_NOSUID | keep | (0 if dev else MS_NODEV)
    if not rw:
        flags |= MS_RDONLY
    mount(None, dst, None, flags)


def within(path: str, tops: tuple[str, ...]) -> bool:
    """``path`` is one of ``tops`` or below one (whole components: /library is not /lib)."""
    return any(path == top or path.startswith(top + "/") for top in tops)


def build_root(new: str, limits: dict, visible: list[str], workdir: str) -> None:
    """A new root at ``new``: system and runtime (``visible``) read-only, private /tmp, /dev and
    /proc, the sample dir (``workdir``) writable. The private mounts are made first and the
    host's paths bound after them, parents before children: a runtime or a sample dir under /tmp
    or /dev/shm (a cache in /tmp, as in many containers) is then bound inside the private mount
    instead of clashing with it or being hidden by it."""
    unshare(CLONE_NEWNS, "unshare(mount)")
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
    for top in SYSTEM_DIRS:
        if os.path.islink(top):
            os.symlink(os.readlink(top), new + top)
        elif os.path.isdir(top):
            bind(top, new + top)
    os.makedirs(new + "/tmp")
    tmp = f"mode=1777,size={limits['tmp_bytes']},nr_inodes={limits['inodes']}"
    mount("tmpfs", new + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, tmp)
    _private_dev(new + "/dev")
    os.makedirs(new + "/proc")
    mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    writable = {p: False for p in visible if os.path.exists(p)}
    writable[workdir] = True
    for path in sorted(writable):
        if within(path, ("/proc",)):
            raise OSError(errno.EINVAL, f"{path} cannot be shown under the sandbox's own /proc")
        if writable[path] or not within(path, SYSTEM_DIRS):
            bind(path, new + path, rw=writable[path])
    os.chdir(new)
    number = SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is None or libc.syscall(number, b".", b".") != 0:
        raise OSError(ctypes.get_errno(), "pivot_root failed")
    check(libc.umount2(b".", MNT_DETACH), "umount old root")
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    socket.sethostname("sandbox")


def _private_dev(dev: str) -> None:
    """A /dev of the harmless devices and a private /dev/shm."""
    os.makedirs(dev)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64")
    for name in ("null", "zero", "full", "random", "urandom"):
        bind("/dev/" + name, f"{dev}/{name}", rw=True, dev=True)
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"{dev}/{name}")
    os.makedirs(dev + "/shm")
    mount("tmpfs", dev + "/shm", "tmpfs", MS_NOSUID | MS_NODEV, SHM_OPTIONS)
