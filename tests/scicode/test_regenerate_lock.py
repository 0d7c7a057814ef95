"""Two runs sharing one cache regenerate the dev targets once: the second waits for the first
(a file lock), then uses its file, instead of both writing the same ``.part`` file."""

from __future__ import annotations

import contextlib
import threading
import time

from timing import HANG_S

from scievals.scicode import regenerate


def test_two_runs_at_once_regenerate_once(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIEVALS_CACHE", str(tmp_path))
    built = []

    async def slow_build(env, dest, progress):
        built.append(dest)
        time.sleep(0.5)  # the other run arrives meanwhile
        dest.write_bytes(b"targets")

    @contextlib.asynccontextmanager
    async def no_sandbox():
        yield None

    monkeypatch.setattr(regenerate, "regenerate_dev", slow_build)
    monkeypatch.setattr("scievals.sandbox.session", no_sandbox)
    said: list[str] = []
    found = []
    runs = [
        threading.Thread(target=lambda: found.append(regenerate.ensure_dev_targets(said.append)))
        for _ in range(2)
    ]
    for run in runs:
        run.start()
        time.sleep(0.1)
    for run in runs:
        run.join(timeout=HANG_S)
    assert len(built) == 1
    assert found == [built[0], built[0]] and built[0].read_bytes() == b"targets"
    assert any("another process is regenerating the dev targets" in line for line in said)
