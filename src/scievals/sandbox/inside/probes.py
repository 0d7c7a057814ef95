"""What this host lets an execution do, asked once by the harness before it starts a zygote:
whether a mode's namespaces and mounts work, whether an execution gets a fresh session keyring
and the seccomp filter. Each is tried in a child, as an execution's init would.

Run by the harness's own interpreter, ``python -I -S -c PROGRAM probe MODE SCRATCH`` or
``... features FILTER``; standard library only (``scievals.shipped`` assembles it).
"""

from __future__ import annotations

import base64
import ctypes
import errno
import json
import os
import sys

from . import kernel
from .kernel import CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWUTS


def probe(mode: str, scratch: str) -> None:
    """Exit 0 if ``mode``'s namespaces and mounts work here (run by the harness, once)."""
    if mode == "userns":
        kernel.enter_userns()
    kernel.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    pid = os.fork()
    if pid == 0:
        try:
            kernel.mount(None, "/", None, kernel.MS_REC | kernel.MS_PRIVATE)
            kernel.mount("tmpfs", scratch, "tmpfs", kernel.MS_NOSUID | kernel.MS_NODEV, "size=1m")
            flags = kernel.MS_NOSUID | kernel.MS_NODEV | kernel.MS_NOEXEC
            kernel.mount("proc", scratch, "proc", flags)
        except OSError as exc:
            sys.stderr.write(f"{exc}\n")
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))


def features(program_b64: str) -> None:
    """Print (JSON) whether an execution here gets a fresh session keyring and the seccomp filter,
    and if not why: tried in a child, as an execution's init would."""
    pid = os.fork()
    if pid == 0:
        out = {"keyring": "", "seccomp": ""}
        try:
            kernel.join_session_keyring()
        except OSError as exc:
            out["keyring"] = str(exc)
        try:
            kernel.prctl(kernel.PR_SET_NO_NEW_PRIVS, 1)
            kernel.install_seccomp(base64.b64decode(program_b64))
            checks = [
                ("unshare", kernel.SYS_UNSHARE, [kernel.CLONE_NEWUSER], errno.EPERM),
                ("clone3", kernel.SYS_CLONE3, [None, 0], errno.ENOSYS),
            ]
            for label, number, args, want in checks:
                if kernel.syscall(number, *args) != -1 or ctypes.get_errno() != want:
                    raise OSError(f"the filter let {label} through")
        except OSError as exc:
            out["seccomp"] = str(exc)
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
        os._exit(0)
    os.waitpid(pid, 0)


def main() -> None:
    if sys.argv[1] == "probe":
        probe(sys.argv[2], sys.argv[3])
    else:
        features(sys.argv[2])
