"""However many steps finish at once, the harness holds none of their records, and the trusted
workers stay within their limits: all 50 dev steps graded on the machine's CPUs, each
program's records filled up to near their bound (``MAX_RECORD_BYTES``) with valid events the
tests never read, against the same run with the gold records alone. The verdicts are the same;
the harness's peak memory grows by no more than ``HARNESS_GROWTH``, each worker's peak stays
under its limit (``pool.memory_limit``). The figures are printed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from scievals.scicode.inside.wire import MAX_RECORD_BYTES
from scievals.trusted.pool import memory_limit

pytestmark = pytest.mark.slow

HARNESS_GROWTH = 256 << 20
"""What the harness may grow by with records near their bound: a few 1 MiB chunks in flight,
nowhere near one step's records (up to 384 MiB), let alone 50."""
FILL = textwrap.dedent(
    """
    import atexit, base64, glob, os

    def _fill():
        (path,) = glob.glob("scievals-records-*.jsonl")
        block = base64.b64encode(bytes(3 << 20)).decode()
        line = (
            '{"e": "change", "n": 1, "path": [], "r": {"ndarray": "|u1", "shape": [%d], '
            '"b64": "%s", "matrix": false}}\\n' % (3 << 20, block)
        )
        with open(path, "a") as fh:
            while os.path.getsize(path) + 2 * len(line) < BOUND:
                fh.write(line)

    atexit.register(_fill)
    """
).replace("BOUND", str(MAX_RECORD_BYTES - (8 << 20)))
"""Appended to every step's gold code: as the program exits, its records are filled to within
8 MiB of the bound with ``change`` events after the last test's end (valid, never replayed)."""
MEASURE = textwrap.dedent(
    """
    import asyncio, json, sys, threading, time
    from pathlib import Path
    from scievals.scicode.data.dataset import load_problems
    from scievals.scicode.grade import grade
    from scievals.trusted.pool import shared_pool

    def status(pid, key):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
        return 0

    fill = sys.stdin.read()
    peaks = {"harness": 0, "worker": 0}
    done = threading.Event()

    def sample():
        while not done.wait(0.05):
            peaks["harness"] = max(peaks["harness"], status("self", "VmRSS"))
            for pid in shared_pool().pids():
                try:
                    peaks["worker"] = max(peaks["worker"], status(pid, "VmHWM"))
                except OSError:
                    pass

    threading.Thread(target=sample, daemon=True).start()
    completions = {
        s.step_id: f"```python\\n{s.gold_code}\\n{fill}\\n```"
        for p in load_problems("dev") for s in p.steps if s.gold_code
    }
    started = time.monotonic()
    verdicts, _ = asyncio.run(grade(completions, split="dev"))
    done.set()
    print(json.dumps({
        "verdicts": {v["step"]: [v["passed"], v["reason_kind"]] for v in verdicts},
        "seconds": time.monotonic() - started,
        **peaks,
    }))
    """
)


def _graded(fill: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE],
        input=fill,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_records_near_the_bound_cost_the_harness_nothing(dev_targets_file):
    gold = _graded("")
    filled = _graded(FILL)
    print(
        f"\ngold records: {gold['seconds']:.0f} s, harness peak {gold['harness'] >> 20} MiB, "
        f"worker peak {gold['worker'] >> 20} MiB"
        f"\nrecords near {MAX_RECORD_BYTES >> 20} MiB in each of {len(filled['verdicts'])} "
        f"steps: {filled['seconds']:.0f} s, harness peak {filled['harness'] >> 20} MiB, "
        f"worker peak {filled['worker'] >> 20} MiB (limit {memory_limit() >> 20} MiB)"
    )
    assert gold["verdicts"] == filled["verdicts"]
    assert all(passed for passed, _ in gold["verdicts"].values())
    assert filled["harness"] <= gold["harness"] + HARNESS_GROWTH
    assert 0 < filled["worker"] < memory_limit()
