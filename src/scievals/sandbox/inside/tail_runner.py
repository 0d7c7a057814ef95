"""Runs a command and keeps only the last bytes of each of its output streams.

Shipped as source into a foreign sandbox (docker, k8s), whose ``exec`` would otherwise fail a
step program that prints more than Inspect's output limit: ``python3 -c SOURCE CAP CMD...``.
The exit status is the command's, or 128 + the signal that killed it, as a shell reports it.
"""

import os
import subprocess
import sys
import threading


def _drain(fd, keep, cap):
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return
        keep += chunk
        del keep[: max(0, len(keep) - cap)]


def main():
    cap, cmd = int(sys.argv[1]), sys.argv[2:]
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    kept = [bytearray(), bytearray()]
    threads = [
        threading.Thread(target=_drain, args=(s.fileno(), k, cap))
        for s, k in zip((child.stdout, child.stderr), kept, strict=True)
    ]
    for thread in threads:
        thread.start()
    code = child.wait()
    for thread in threads:
        thread.join()
    sys.stdout.buffer.write(kept[0])
    sys.stderr.buffer.write(kept[1])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(128 - code if code < 0 else code)


main()
