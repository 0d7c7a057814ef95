"""The seccomp filter every sandboxed program runs under: a classic BPF program, built here.

Namespaces, mounts, kernel keyrings, io_uring, tracing, BPF, kernel modules and the like are how
a program would get out of its namespaces, past its memory cgroup or at the harness's keys; SciCode
and SciBench code never needs them. They fail with EPERM (clone3 with ENOSYS, so that glibc falls
back to clone, whose flags the filter can inspect). Everything else is allowed. The zygote only
installs the bytes built here (``prctl(PR_SET_SECCOMP)``, after ``PR_SET_NO_NEW_PRIVS``).
"""

from __future__ import annotations

import errno
import os
import struct

# Denied syscalls: name -> (x86_64 number, aarch64 number); aarch64 uses the generic table and
# has no iopl, ioperm or uselib (None).
NUMBERS: dict[str, tuple[int, int | None]] = {
    "unshare": (272, 97), "setns": (308, 268), "mount": (165, 40), "umount2": (166, 39),
    "pivot_root": (155, 41), "chroot": (161, 51), "keyctl": (250, 219), "add_key": (248, 217),
    "request_key": (249, 218), "io_uring_setup": (425, 425), "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427), "ptrace": (101, 117), "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271), "process_madvise": (440, 440), "pidfd_getfd": (438, 438),
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294), "init_module": (175, 105),
    "finit_module": (313, 273), "delete_module": (176, 106), "swapon": (167, 224),
    "swapoff": (168, 225), "reboot": (169, 142), "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264), "fsopen": (430, 430), "fsconfig": (431, 431),
    "fsmount": (432, 432), "fspick": (433, 433), "move_mount": (429, 429), "open_tree": (428, 428),
    "open_tree_attr": (467, 467), "mount_setattr": (442, 442), "quotactl": (179, 60),
    "quotactl_fd": (443, 443), "acct": (163, 89), "settimeofday": (164, 170),
    "clock_settime": (227, 112), "adjtimex": (159, 171), "clock_adjtime": (305, 266),
    "lookup_dcookie": (212, 18), "syslog": (103, 116), "fanotify_init": (300, 262),
    "vhangup": (153, 58), "memfd_secret": (447, 447), "iopl": (172, None), "ioperm": (173, None),
    "uselib": (134, None),
}  # fmt: skip
DENIED: dict[str, dict[str, int]] = {
    machine: {name: pair[i] for name, pair in NUMBERS.items() if pair[i] is not None}
    for i, machine in enumerate(("x86_64", "aarch64"))
}
# Syscalls allowed or denied by their arguments: (number, index of the inspected argument).
CLONE = {"x86_64": 56, "aarch64": 220}  # flags: args[0] on both
CLONE3 = {"x86_64": 435, "aarch64": 435}
MKNOD = {"x86_64": [(133, 1), (259, 2)], "aarch64": [(33, 2)]}  # mknod(path, mode), mknodat
PERSONALITY = {"x86_64": 135, "aarch64": 92}
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000

CLONE_NAMESPACES = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
)
S_IFMT, S_IFCHR, S_IFBLK = 0o170000, 0o020000, 0o060000
# personality(): querying, and the values glibc/setarch use for plain Linux processes.
PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)

# Classic BPF opcodes and seccomp return values.
LD_ABS, JEQ, JGT, JGE, JSET, AND, RET = 0x20, 0x15, 0x25, 0x35, 0x45, 0x54, 0x06
ALLOW = 0x7FFF0000
ERRNO = 0x00050000
NR, ARCH, ARGS = 0, 4, 16  # offsets in struct seccomp_data (args are 8 bytes; low half first)
if struct.pack("=I", 1) != struct.pack("<I", 1):
    raise ImportError("the seccomp filter is built for little-endian machines only")


class _Asm:
    """A tiny assembler with forward labels (classic BPF jumps are 8-bit and forward-only)."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int | str, int | str, int]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int, jt: int | str = 0, jf: int | str = 0) -> None:
        self.code.append((code, jt, jf, k))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> bytes:
        out = bytearray()
        for i, (code, jt, jf, k) in enumerate(self.code):
            offsets = []
            for target in (jt, jf):
                off = self.labels[target] - i - 1 if isinstance(target, str) else target
                if not 0 <= off <= 255:
                    raise ValueError(f"BPF jump out of range at {i}: {off}")
                offsets.append(off)
            out += struct.pack("=HBBI", code, offsets[0], offsets[1], k)
        return bytes(out)


def build(machine: str | None = None) -> bytes:
    """The filter for ``machine`` (default: this one), as ``struct sock_filter`` bytes."""
    machine = machine or os.uname().machine
    if machine not in DENIED:
        raise ValueError(f"no seccomp syscall table for {machine}")
    a = _Asm()
    a.op(LD_ABS, ARCH)
    a.op(JEQ, AUDIT_ARCH[machine], "native", 0)
    a.op(RET, ERRNO | errno.ENOSYS)  # another ABI (i386 via int 0x80, arm32): nothing works
    a.label("native")
    a.op(LD_ABS, NR)
    if machine == "x86_64":
        a.op(JGE, X32_SYSCALL_BIT, "enosys", 0)  # the x32 ABI's numbers would bypass the list
    a.op(JEQ, CLONE[machine], "clone", 0)
    a.op(JEQ, CLONE3[machine], "enosys", 0)
    a.op(JEQ, PERSONALITY[machine], "personality", 0)
    for number, arg in MKNOD[machine]:
        a.op(JEQ, number, f"mknod{arg}", 0)
    for number in sorted(set(DENIED[machine].values())):
        a.op(JEQ, number, "eperm", 0)
    a.op(RET, ALLOW)
    # Argument checks come before the shared returns: classic BPF only jumps forward.
    a.label("clone")
    a.op(LD_ABS, ARGS)
    a.op(JSET, CLONE_NAMESPACES, "eperm", 0)
    a.op(RET, ALLOW)
    a.label("personality")
    a.op(LD_ABS, ARGS)
    for value in PERSONALITIES:
        a.op(JEQ, value, "allow", 0)
    a.op(RET, ERRNO | errno.EPERM)
    for arg in sorted({arg for _, arg in MKNOD[machine]}):
        a.label(f"mknod{arg}")  # FIFOs and sockets are fine; device nodes are not
        a.op(LD_ABS, ARGS + 8 * arg)
        a.op(AND, S_IFMT)
        a.op(JEQ, S_IFCHR, "eperm", 0)
        a.op(JEQ, S_IFBLK, "eperm", 0)
        a.op(RET, ALLOW)
    a.label("eperm")
    a.op(RET, ERRNO | errno.EPERM)
    a.label("enosys")
    a.op(RET, ERRNO | errno.ENOSYS)
    a.label("allow")
    a.op(RET, ALLOW)
    return a.assemble()


# The guard, a second filter for every program (each the leader of a session of its own):
# signals, rlimit changes and pidfds may only reach processes started after the program
# (pid >= FLOOR), or its own process group (0); asynchronous-I/O signal owners, which would make
# the kernel signal someone else for it, may not be set at all. So a program that shares its
# uid with what watches it (a container's runner, the userns and rlimits-only modes) cannot stop
# it, and every mode answers a signal to an older process alike (EPERM). FLOOR is a placeholder
# replaced with the program's pid (and NEG_FLOOR with its negation) just before it runs.
FLOOR_MARKS = (0x3FFFFF01, (1 << 32) - 0x3FFFFF01)
TARGETED = {
    "x86_64": {"kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129,
               "rt_tgsigqueueinfo": 297, "prlimit64": 302, "pidfd_open": 434},
    "aarch64": {"kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138,
                "rt_tgsigqueueinfo": 240, "prlimit64": 261, "pidfd_open": 434},
}  # fmt: skip
PIDFD_SEND_SIGNAL = {"x86_64": 424, "aarch64": 424}  # takes /proc/PID directories too
FCNTL = {"x86_64": 72, "aarch64": 25}
IOCTL = {"x86_64": 16, "aarch64": 29}
F_SETOWN, F_SETSIG, F_SETOWN_EX = 8, 10, 15
FIOSETOWN, SIOCSPGRP = 0x8901, 0x8902


def guard(machine: str | None = None) -> bytes:
    """The guard filter for ``machine``, with ``FLOOR_MARKS`` where the floor goes."""
    machine = machine or os.uname().machine
    if machine not in TARGETED:
        raise ValueError(f"no seccomp syscall table for {machine}")
    floor, neg_floor = FLOOR_MARKS
    a = _Asm()
    a.op(LD_ABS, ARCH)
    a.op(JEQ, AUDIT_ARCH[machine], "native", 0)
    a.op(RET, ERRNO | errno.ENOSYS)
    a.label("native")
    a.op(LD_ABS, NR)
    for number in sorted(TARGETED[machine].values()):
        a.op(JEQ, number, "target", 0)
    a.op(JEQ, PIDFD_SEND_SIGNAL[machine], "eperm", 0)
    a.op(JEQ, FCNTL[machine], "fcntl", 0)
    a.op(JEQ, IOCTL[machine], "ioctl", 0)
    a.op(RET, ALLOW)
    a.label("target")  # the low 32 bits of args[0] are the pid_t the kernel reads
    a.op(LD_ABS, ARGS)
    a.op(JEQ, 0, "allow", 0)
    a.op(JGE, 0x80000000, "group", 0)
    a.op(JGE, floor, "allow", "eperm")
    a.label("group")  # -pgid: allowed when pgid >= FLOOR, that is the word <= 2**32 - FLOOR
    a.op(JGT, neg_floor, "eperm", "allow")
    a.label("fcntl")
    a.op(LD_ABS, ARGS + 8)
    for cmd in (F_SETOWN, F_SETSIG, F_SETOWN_EX):
        a.op(JEQ, cmd, "eperm", 0)
    a.op(RET, ALLOW)
    a.label("ioctl")
    a.op(LD_ABS, ARGS + 8)
    for cmd in (FIOSETOWN, SIOCSPGRP):
        a.op(JEQ, cmd, "eperm", 0)
    a.op(RET, ALLOW)
    a.label("eperm")
    a.op(RET, ERRNO | errno.EPERM)
    a.label("allow")
    a.op(RET, ALLOW)
    return a.assemble()


def denied_count(machine: str | None = None) -> int:
    """Syscalls the filter refuses outright (clone3 included; clone, mknod and personality are
    refused only for some arguments)."""
    return len(DENIED[machine or os.uname().machine]) + 1
