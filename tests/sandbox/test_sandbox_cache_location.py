"""The sandbox works wherever the cache is: under /tmp (CI runners, containers: ``HOME=/tmp/...``
or ``SCIEVALS_CACHE=/tmp/...``), /dev/shm, beside the sample directories, or reached through a
symlink; ``sandbox setup``/``status`` prove it with a real program, and a setup failure names
its exception in the reason's first line.

The main cache is never touched: a cache under /tmp gets hard links to the built runtimes (no
copy, no build), and the other locations a tiny runtime of their own (a bare venv).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import pytest
from timing import HANG_S

from scievals.sandbox import engine as engine_module
from scievals.sandbox.engine import Engine, failure_text
from scievals.sandbox.inside.kernel import within
from scievals.sandbox.provider import ScievalsSandbox, ScievalsSandboxConfig
from scievals.sandbox.runtime import RUNTIMES, Runtime, runtime_dir

from .cache_helpers import linked_cache

pytestmark = pytest.mark.slow

SCIEVALS = str(Path(sys.executable).with_name("scievals"))
SHOW = "import os, sys; print(sys.prefix, os.access(sys.prefix, os.W_OK), os.listdir({parent!r}))"


@pytest.fixture(scope="module")
def tmp_cache(tmp_path_factory) -> Path:
    """A cache under /tmp holding the built runtimes and the SciCode data and targets."""
    cache = tmp_path_factory.mktemp("cache-in-tmp")
    assert str(cache).startswith(tempfile.gettempdir())
    return linked_cache(cache)


def run_cli(cache: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SCIEVALS_CACHE": str(cache)}
    return subprocess.run(
        [SCIEVALS, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=HANG_S
    )


def test_sandbox_status_runs_a_program_in_each_runtime_under_tmp(tmp_cache):
    proc = run_cli(tmp_cache, "sandbox", "status")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("  sandbox: a test program ran\n") == len(RUNTIMES)


def test_grading_with_the_cache_under_tmp(tmp_cache, tmp_path):
    """A real grading run (the path README command 1 failed on): gold code passes."""
    from scievals.scicode.data.dataset import find_step

    steps = ("51.1", "51.2")
    lines = [
        json.dumps({"step": s, "completion": f"```python\n{find_step(s, 'dev')[1].gold_code}\n```"})
        for s in steps
    ]
    (tmp_path / "c.jsonl").write_text("\n".join(lines) + "\n")
    proc = run_cli(tmp_cache, "grade", "scicode", "c.jsonl", "--out", "v.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    verdicts = [json.loads(x) for x in (tmp_path / "v.jsonl").read_text().splitlines()[:-1]]
    assert [(v["step"], v["passed"]) for v in verdicts] == [(s, True) for s in steps]


def test_the_runtime_path_is_resolved(tmp_path, monkeypatch):
    """A cache spelled through a symlink or /proc/self/root is shown where it really is."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    for spelling in (tmp_path / "link", Path("/proc/self/root") / str(real).lstrip("/")):
        monkeypatch.setenv("SCIEVALS_CACHE", str(spelling))
        assert runtime_dir("2024").parent == real / "runtime"


# ---- a tiny runtime where a cache may be ---------------------------------------------------


def tiny_runtime(root: Path) -> Runtime:
    """A bare venv of the harness's interpreter (no packages: the zygote warns and runs)."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(root)], check=True)
    (root / "mplconfig").mkdir()
    return Runtime(
        "2024", root.resolve(), root.resolve() / "bin" / "python", Path(sys.base_prefix), {}
    )


def run_in(runtime: Runtime, code: str, monkeypatch, visible: list[str] | None = None):
    monkeypatch.setattr(engine_module, "ensure_runtime", lambda name: runtime)
    if visible is not None:
        monkeypatch.setattr(Engine, "visible", lambda self: visible)
    eng = Engine()
    box = ScievalsSandbox(ScievalsSandboxConfig(), eng)
    try:
        return anyio.run(lambda: box.execute(["python3", "-c", code], timeout=60))
    finally:
        box.cleanup()
        eng.close()


@pytest.fixture(params=["tmp", "dev-shm", "beside-sample-dirs"])
def cache_place(request, tmp_path):
    if request.param == "tmp":
        yield tmp_path / "cache"
    elif request.param == "dev-shm":
        place = Path(tempfile.mkdtemp(prefix="scievals-test-cache-", dir="/dev/shm"))
        yield place / "cache"
        shutil.rmtree(place)
    else:  # in the very directory that holds the sample directories
        place = Path(tempfile.mkdtemp(prefix="scievals-test-cache-"))
        yield place
        shutil.rmtree(place)


def test_a_runtime_anywhere_is_shown_read_only_and_alone(cache_place, monkeypatch):
    runtime = tiny_runtime(cache_place / "runtime" / "tiny")
    parent = str(runtime.root.parent)
    out = run_in(runtime, SHOW.format(parent=parent), monkeypatch)
    assert (out.returncode, out.infrastructure) == (0, None), out
    assert out.stdout == f"{runtime.root} False ['tiny']\n"


def test_a_setup_failure_names_its_exception(tmp_path, monkeypatch):
    runtime = tiny_runtime(tmp_path / "tiny")
    visible = [str(runtime.root), "/proc/self"]  # nothing can be bound under the sandbox's /proc
    out = run_in(runtime, "pass", monkeypatch, visible)
    assert out.infrastructure is not None
    first = out.infrastructure.splitlines()[0]
    assert "Traceback" not in first
    assert (
        "the sandbox's setup failed: OSError: [Errno 22] /proc/self cannot be shown under the "
        "sandbox's own /proc"
    ) in first


def test_sandbox_status_fails_with_the_reason(tmp_path, monkeypatch, capsys):
    """``status`` says a runtime is unusable, and why, and exits 1."""
    from scievals.sandbox import cli

    runtime = tiny_runtime(tmp_path / "tiny")
    monkeypatch.setattr(engine_module, "ensure_runtime", lambda name: runtime)
    monkeypatch.setattr(Engine, "visible", lambda self: [str(runtime.root), "/proc/self"])
    monkeypatch.setattr(engine_module, "_engines", {})
    try:
        assert cli._status(argparse.Namespace(json=False)) == 1
    finally:
        for eng in engine_module._engines.values():
            eng.close()
    unusable = [x for x in capsys.readouterr().out.splitlines() if "UNUSABLE" in x]
    assert len(unusable) == len(RUNTIMES)
    assert unusable[0].startswith("  sandbox: UNUSABLE: the sandbox failed twice: sandbox ")
    assert "cannot be shown under the sandbox's own /proc" in unusable[0]


def test_failure_text_brings_the_exception_forward():
    tb = (
        "the sandbox's setup failed: Traceback (most recent call last):\n"
        '  File "x.py", line 1, in <module>\n'
        "FileExistsError: [Errno 17] File exists: '/tmp/z/root/tmp'\n"
    )
    assert failure_text(tb).splitlines()[0] == (
        "the sandbox's setup failed: FileExistsError: [Errno 17] File exists: '/tmp/z/root/tmp'"
    )
    assert failure_text("Traceback (most recent call last):\n  x\nKeyError: 'a'").startswith(
        "KeyError: 'a'\n"
    )
    assert failure_text("the sandbox's init process died (signal SIGKILL)") == (
        "the sandbox's init process died (signal SIGKILL)"
    )


def test_within_takes_whole_components():
    assert within("/lib/x", ("/lib",)) and within("/lib", ("/lib",))
    assert not within("/library/cache", ("/lib",))
