"""The log says which limits really applied, and a host without cgroups, seccomp or tmpfs
mounts falls back to rlimits and the watcher, and says so."""

from __future__ import annotations

import argparse
import json
import os

import pytest

from scievals.sandbox import describe
from scievals.sandbox.cgroups import Cgroups
from scievals.sandbox.enforce import Enforcement, enforcement
from scievals.sandbox.engine import Engine
from scievals.sandbox.execution import run_program
from scievals.sandbox.limits import Limits
from scievals.sandbox.provider import ScievalsSandbox, ScievalsSandboxConfig

from .sandbox_helpers import outcome, run


def test_describe_says_what_enforces_each_limit():
    enforced = describe()["enforced"]
    assert set(enforced) == {
        "memory",
        "pids",
        "cpu",
        "cpu_seconds",
        "seccomp",
        "keyring",
        "disk",
        "tmp",
    }
    facts = enforcement()
    if facts.cgroups.cpu is not None:
        assert enforced["cpu"].startswith(f"cgroup v{facts.cgroups.version} cpu")
        assert enforced["cpu"].endswith(": 1 CPU per execution")
    else:
        assert enforced["cpu"].startswith("no cap (no cpu cgroup: ")
    if facts.cgroups.memory is not None:
        assert enforced["memory"].startswith(f"cgroup v{facts.cgroups.version} memory")
        assert f"{Limits().memory_gib:g} GiB" in enforced["memory"]
    else:
        assert enforced["memory"].startswith("rlimit+watcher (no memory cgroup: ")
    assert enforced["seccomp"].startswith("on (") or enforced["seccomp"].startswith("off: ")
    if os.geteuid() == 0:
        assert enforced["disk"] == "tmpfs 512 MiB, 10000 inodes"
    if facts.cgroups.cpuacct is not None:
        assert enforced["cpu_seconds"].startswith("supervisor: 600 s for the whole execution")
        assert "no RLIMIT_CPU" in enforced["cpu_seconds"]


def test_status_prints_the_enforcement(capsys):
    from scievals.sandbox import cli

    parser = argparse.ArgumentParser()
    cli.register({"root": parser.add_subparsers()})
    ns = parser.parse_args(["sandbox", "status"])
    assert ns.func(ns) == 0
    out = capsys.readouterr().out
    assert "enforced by:" in out and "  seccomp: " in out and "  memory: " in out
    assert "runtime 2024 (" in out and "runtime 2025 (" in out  # every scoring runtime
    ns = parser.parse_args(["sandbox", "status", "--json"])
    ns.func(ns)
    assert "enforced" in json.loads(capsys.readouterr().out)


NOTHING = Enforcement(
    cgroups=Cgroups(None, None, None, False, "simulated host", "simulated host"),
    seccomp=None,
    seccomp_note="simulated host",
    keyring_note="",
    disk_note="simulated host",
)


def test_fallback_is_described_honestly():
    said = NOTHING.describe(Limits(), "unshare")
    assert said["memory"] == "rlimit+watcher (no memory cgroup: simulated host)"
    assert said["pids"].startswith("RLIMIT_NPROC on the execution's uid + watcher (no pids cgroup")
    assert said["seccomp"] == "off: simulated host"
    assert said["cpu_seconds"].startswith("supervisor: 600 s for the process tree")
    assert "RLIMIT_CPU" not in said["cpu_seconds"]
    weakest = NOTHING.describe(Limits(), "rlimits-only")["cpu_seconds"]
    assert "RLIMIT_CPU 600 s per process too" in weakest
    assert said["keyring"] == "fresh session keyring"
    assert (
        said["disk"]
        == f"no cap (simulated host); only RLIMIT_FSIZE {Limits().file_mib} MiB per file"
    )


@pytest.mark.slow
def test_without_cgroups_seccomp_and_tmpfs_the_watcher_still_stops_attacks():
    eng = Engine(enforced=NOTHING)
    sb = ScievalsSandbox(ScievalsSandboxConfig(memory_gib=0.5), eng)
    try:
        assert not os.path.ismount(sb.directory)
        spread = """
            import os, time
            for _ in range(5):
                if os.fork() == 0:
                    x = b"x" * (150 * 2**20)
                    time.sleep(60)
            time.sleep(60)
        """
        res = outcome(sb, spread, timeout=30)
        assert (res.limit, res.reason) == ("memory", "memory limit (0.5 GiB)"), res
        res = outcome(sb, "import os\nwhile True:\n    os.fork()\n", timeout=30)
        # RLIMIT_NPROC refusals are counted nowhere: if the program dies of one before the watcher
        # polls, the engine cannot say "processes" (a pids cgroup can)
        assert res.limit == "processes" or "BlockingIOError" in res.stderr, res
        res = outcome(sb, "import os\nos.makedirs('/'.join(['d'] * 200))\nprint('ok')")
        assert res.stdout == "ok\n"
        res = run(run_program(sb, ["python3", "-c", "print(open('/proc/self/status').read())"]))
        assert "Seccomp:\t0" in res.stdout  # and the log said so
        burner = ScievalsSandbox(ScievalsSandboxConfig(cpu_seconds=1), eng)
        try:
            code = "import os\nos.fork()\nos.fork()\nwhile True:\n    pass\n"
            res = run(run_program(burner, ["python3", "-c", code], timeout=60))
            assert (res.limit, res.reason) == ("cpu", "cpu time limit (1 s)"), res  # /proc times
        finally:
            burner.cleanup()
    finally:
        sb.cleanup()
        eng.close()
    assert not sb.directory.exists()


def _fake_v2(root, controllers: str, enabled: str, procs: str):
    root.mkdir(exist_ok=True)
    (root / "cgroup.controllers").write_text(controllers)
    (root / "cgroup.subtree_control").write_text(enabled)
    (root / "cgroup.procs").write_text(procs)
    return root


def test_cgroup_v2_delegation_decisions(tmp_path):
    """cgroup v2 cannot run here (the memory controller is bound to v1); its decisions can."""
    from scievals.sandbox.cgroups import _probe_v2

    here = _fake_v2(tmp_path, "cpu io memory pids", "", f"{os.getpid()}\n")
    found = _probe_v2(here)
    assert (found.version, found.memory, found.pids, found.cpu) == (2, here, here, here)
    assert (here / f"scievals-{os.getpid()}-harness" / "cgroup.procs").read_text() == "0"
    assert (here / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert "pids.max=64" in found.describe_pids(64)
    assert found.describe_cpu(1.5) == "cgroup v2 cpu.max: 1.5 CPU per execution"
    assert found.wire()["cpu"] == str(here)

    crowded = _fake_v2(tmp_path / "b", "memory pids", "", f"{os.getpid()}\n1\n")
    found = _probe_v2(crowded)
    assert found.memory is None and "holds other processes" in found.memory_note

    bare = _fake_v2(tmp_path / "c", "io", "", f"{os.getpid()}\n")
    found = _probe_v2(bare)
    assert found.memory is None and "not delegated" in found.memory_note
    assert found.cpu is None and found.describe_cpu(1.0).startswith("no cap (no cpu cgroup: ")
    assert found.describe_memory(2**30).startswith("rlimit+watcher (no memory cgroup: cgroup v2")
