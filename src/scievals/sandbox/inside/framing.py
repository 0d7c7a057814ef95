"""The framing the harness, the zygote and its supervisors speak over Unix sockets: one
length-prefixed JSON message at a time, a file descriptor riding on its first byte if need be.

Standard library only; the harness imports it too (``engine.py``), so both ends share one text.
"""

from __future__ import annotations

import json
import os
import socket
import struct

MAX_MESSAGE = 1 << 31


def send_msg(sock: socket.socket, obj: dict, fd: int | None = None) -> None:
    """One length-prefixed JSON message; ``fd``, if given, rides on its first byte."""
    data = json.dumps(obj).encode()
    packet = struct.pack(">Q", len(data)) + data
    sent = socket.send_fds(sock, [packet], [fd]) if fd is not None else 0
    sock.sendall(packet[sent:])


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError("peer closed")
        buf += chunk
    return bytes(buf)


def recv_msg(sock: socket.socket) -> dict:
    return _message_after(sock, recv_exact(sock, 8))


def recv_msg_fd(sock: socket.socket) -> tuple[dict, int | None]:
    """A message from ``send_msg`` with the fd it carried (None if it carried none)."""
    head, fds, _, _ = socket.recv_fds(sock, 8, 1)
    try:
        if not head:
            raise EOFError("peer closed")
        msg = _message_after(sock, head + recv_exact(sock, 8 - len(head)))
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return msg, fds[0] if fds else None


def _message_after(sock: socket.socket, head: bytes) -> dict:
    (n,) = struct.unpack(">Q", head)
    if n > MAX_MESSAGE:
        raise ValueError(f"a {n}-byte message: the peer is broken")
    return json.loads(recv_exact(sock, n))
