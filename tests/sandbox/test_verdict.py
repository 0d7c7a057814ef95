"""The one verdict rule (``inside/verdict.py``) that our sandbox's supervisor and the container
runner both judge by: each way a program ends, the limit and reason it gets."""

from __future__ import annotations

import signal

import pytest

from scievals.sandbox.ending import LIMITS
from scievals.sandbox.inside.verdict import exit_verdict, full_disk, reason
from scievals.sandbox.limits import Limits

LIM = Limits().wire()
KILL, XCPU, XFSZ = int(signal.SIGKILL), int(signal.SIGXCPU), int(signal.SIGXFSZ)
QUIET = {"stop": None, "oom": False, "refused": False, "disk": None}
CASES = [
    # (signal, code, what the watcher and the counters say) -> (returncode, limit)
    (0, 0, {}, (0, None)),
    (0, 3, {}, (3, None)),
    (KILL, 0, {"stop": ("timeout", "timeout (2 s)")}, (None, "timeout")),
    (0, 0, {"stop": ("output", "output limit")}, (137, "output")),
    (KILL, 0, {"oom": True}, (137, "memory")),
    (0, 1, {"oom": True, "refused": True}, (1, "memory")),
    (XCPU, 0, {"cpu_rlimit": True}, (128 + XCPU, "cpu")),
    (KILL, 0, {"cpu_rlimit": True, "cpu_used": LIM["cpu_seconds"]}, (137, "cpu")),
    (KILL, 0, {"cpu_rlimit": True, "cpu_used": 1.0}, (137, None)),
    (XCPU, 0, {}, (128 + XCPU, None)),
    (XFSZ, 0, {}, (128 + XFSZ, "file_size")),
    (0, 1, {"refused": True}, (1, "processes")),
    (0, 0, {"refused": True, "disk": "disk limit (/tmp full)"}, (0, None)),
    (0, 1, {"disk": "disk limit (/tmp full)"}, (1, "disk")),
]


@pytest.mark.parametrize(("sig", "code", "seen", "want"), CASES)
def test_each_way_a_program_ends(sig, code, seen, want):
    returncode, limit, why = exit_verdict(sig, code, LIM, **{**QUIET, **seen})
    assert (returncode, limit) == want
    if limit is not None:
        assert why
    elif sig:
        assert why == f"signal {signal.Signals(sig).name}"
    else:
        assert why is None


@pytest.mark.parametrize("limit", [k for k in LIMITS if k != "disk"])
def test_every_limit_has_its_reason(limit):
    assert reason(limit, LIM, 2.0).endswith(")")


def test_a_roomy_disk_is_not_full(tmp_path):
    assert full_disk([("/tmp", str(tmp_path)), ("gone", str(tmp_path / "gone"))]) is None
