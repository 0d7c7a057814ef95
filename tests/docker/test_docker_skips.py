"""The container tests get their base image themselves, or skip with one line: never an error.

The case that made 37 errors: a Docker daemon answers, but no registry is reachable and
debootstrap is missing. Here a fake ``docker`` (it answers ``version`` and ``compose version``,
and nothing else works) and a fake ``apt-get`` (no network) stand in for that machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from scievals.artifacts import ArtifactError

from . import conftest

REPO = Path(__file__).resolve().parents[2]
FAKE_DOCKER = """#!/bin/sh
case "$1 $2" in
  "version --format") echo 26.1.5 ;;
  "compose version") echo 2.40.3 ;;
  *) echo "fake docker: $*: no registry, no such image" >&2; exit 1 ;;
esac
"""
FAKE_APT = '#!/bin/sh\necho "fake apt-get: no network" >&2\nexit 100\n'


def fake_bin(folder: Path) -> Path:
    folder.mkdir()
    for name, text in (("docker", FAKE_DOCKER), ("apt-get", FAKE_APT)):
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    return folder


def test_no_registry_and_no_debootstrap_skips_every_test_with_one_line(tmp_path):
    env = {
        **os.environ,
        # no /usr/sbin: debootstrap is missing even where the machine has it
        "PATH": f"{fake_bin(tmp_path / 'bin')}:{Path(sys.executable).parent}:/usr/bin:/bin",
        "SCIEVALS_CACHE": str(tmp_path / "cache"),
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:xdist",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "tests/docker/test_docker_eval.py",  # every test there needs the runtime image
            "tests/docker/test_docker_hostile.py",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:]
    assert "error" not in out.splitlines()[-1], out[-3000:]
    reasons = {line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("SKIPPED")}
    assert reasons == {"Docker tests skipped: apt-get install debootstrap failed"}, out[-3000:]


def test_the_base_is_made_by_the_setup_script_when_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIEVALS_CACHE", str(tmp_path / "cache"))
    made = tmp_path / "made"
    setup = tmp_path / "setup.sh"
    setup.write_text(f"touch {made}\n")
    calls = []

    def default_base() -> str:
        calls.append(made.exists())
        if not made.exists():
            raise ArtifactError("making the base image with base.sh failed")
        return "scievals-base:bookworm"

    monkeypatch.setattr("scievals.sandbox.image.default_base", default_base)
    assert conftest.base_unavailable(setup) is None
    assert calls == [False, True]  # tried, set up, tried again


def test_a_base_that_cannot_be_made_is_the_skip_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIEVALS_CACHE", str(tmp_path / "cache"))
    setup = tmp_path / "setup.sh"
    setup.write_text(
        f"echo 'apt-get install debootstrap failed' > {tmp_path}/cache/docker/unavailable\n"
    )

    def default_base() -> str:
        raise ArtifactError("making the base image with base.sh failed")

    monkeypatch.setattr("scievals.sandbox.image.default_base", default_base)
    assert conftest.base_unavailable(setup) == "apt-get install debootstrap failed"
