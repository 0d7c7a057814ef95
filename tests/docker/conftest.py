"""Docker for the container tests: present and new enough, or every test here skips, saying why.

``scripts/setup_docker.sh`` (run by ``.ci/run``) starts a daemon where none runs and writes why
when it cannot. Where a daemon answers but no base image for the runtime images can be had (no
registry, no debootstrap), the tests run that script themselves, once, to make one; if it still
cannot, they skip with its reason. The runtime images are built here once per session (and
reused across sessions while their pins and base stay the same).
"""

from __future__ import annotations

import fcntl
import subprocess
from pathlib import Path

import pytest
from timing import hang_s

from scievals.artifacts import ArtifactError
from scievals.paths import cache_dir

SETUP_DOCKER = Path(__file__).resolve().parents[2] / "scripts" / "setup_docker.sh"

MIN_ENGINE = (24, 0, 6)  # Inspect's docker sandbox refuses older engines


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("+")[0].split("-")[0].split(".")[:3])


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=hang_s(), check=False
    )


def docker_unavailable() -> str | None:
    """Why Docker cannot run these tests here, or None."""
    why = Path(cache_dir("docker")) / "unavailable"
    hint = f" ({why.read_text().strip()})" if why.exists() else ""
    try:
        server = _run("version", "--format", "{{.Server.Version}}")
        compose = _run("compose", "version", "--short")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"no docker CLI that answers: {exc}{hint}"
    if server.returncode != 0:
        return f"no Docker daemon answers (scripts/setup_docker.sh starts one){hint}"
    if _version(server.stdout.strip()) < MIN_ENGINE:
        return f"Docker Engine {server.stdout.strip()} is older than 24.0.6{hint}"
    if compose.returncode != 0:
        return f"no docker compose v2{hint}"
    return None


def base_unavailable(setup: Path = SETUP_DOCKER) -> str | None:
    """Why no base image for the runtime images can be had, or None: tried as ``scievals sandbox
    image`` would, then once more after ``setup`` (installs debootstrap, makes the base). One
    process at a time (the xdist workers share the result)."""
    from scievals.sandbox.image import default_base

    with open(cache_dir("docker") / "tests-base.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            default_base()
            return None
        except ArtifactError:
            pass
        subprocess.run(["bash", str(setup)], check=False, timeout=1800)
        why = cache_dir("docker") / "unavailable"
        if why.exists():
            return why.read_text().strip()
        try:
            default_base()
        except ArtifactError as exc:
            return str(exc)
        return None


@pytest.fixture(scope="session")
def docker_ready() -> None:
    reason = docker_unavailable() or base_unavailable()
    if reason:
        pytest.skip(f"Docker tests skipped: {reason}")


@pytest.fixture(scope="session")
def runtime_image(docker_ready):
    """The default runtime's image, built once (a file lock keeps xdist workers to one build)."""
    from scievals.sandbox.image import build_image

    return build_image("2024")


@pytest.fixture(scope="session")
def both_images(runtime_image):
    from scievals.sandbox.image import build_image

    return {"2024": runtime_image, "2025": build_image("2025")}


@pytest.fixture(scope="session")
def dev_targets() -> Path:
    from scievals.scicode.regenerate import ensure_dev_targets

    return ensure_dev_targets()
