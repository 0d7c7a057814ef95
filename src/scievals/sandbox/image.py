"""Scoring runtimes as container images, and the compose file that runs them.

``scievals sandbox image`` builds one image per runtime from the same pins as our sandbox's
venv (``runtimes/NAME.txt``), with nothing fetched inside the build: the wheels are downloaded
on the host for the base image's interpreter and platform, checked against the pins and their
sha256 recorded, then installed in the image with ``--no-index --require-hashes``. The image
carries its pins in labels, so a task (and a reader of the log) can tell which packages scored.
The default base is the official Python image when a registry gives it; where none is reachable
``docker/base.sh`` makes one from Debian packages, once.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from scievals.artifacts import ArtifactError, sha256_file
from scievals.paths import cache_dir, write_if_changed
from scievals.sandbox.limits import MEMORY_FLOOR_GIB, Limits
from scievals.sandbox.runtime import (
    DEFAULT_RUNTIME,
    WARM_MODULES,
    check_runtimes,
    pins,
    pins_hash,
    pins_text,
    runtime_environment,
)

REPOSITORY = "scievals-runtime"
"""Images are ``scievals-runtime:NAME`` (what compose files name) and, immutably,
``scievals-runtime:NAME-PINSHASH``."""
OFFICIAL_BASE = "python:3.11-slim-bookworm"
LOCAL_BASE = "scievals-base:bookworm"
LABEL = "org.scievals.runtime"
SANDBOX_UID = 10001
PULL_SECONDS = 60
# A container's limits are our sandbox's per-execution defaults (one source for the numbers),
# applied per sample, with one CPU per sample as inspect_evals runs it.
_LIMITS = Limits()
MEMORY_MIB = int(MEMORY_FLOOR_GIB * 1024)
"""A program's memory where the harness's machine says nothing about the container's: a
Kubernetes pod, and a compose file read without ``MEMORY_VARIABLE`` set."""
MEMORY_VARIABLE = "SCIEVALS_CONTAINER_MEMORY"
"""Our compose file takes a container's memory from this variable, which the harness sets (to
its own per-execution memory, ``Limits().memory_gib``, and the runner's share) before Inspect
starts a container: the packaged file stays one file for every machine."""
CPUS = 1
TMP_TMPFS = f"size={_LIMITS.tmp_mib}m,nr_inodes={_LIMITS.inodes},mode=1777"
WORK_TMPFS = (
    f"size={_LIMITS.disk_mib}m,nr_inodes={_LIMITS.inodes},uid={SANDBOX_UID},gid={SANDBOX_UID},"
    "mode=0755"
)
RUNNER_MIB = 384
"""Memory of the container beyond the program's: its init, the exec's wrapper, the runner and
the warm server (the scientific stack imported once: about 300 MiB resident)."""
RUNNER_PROCESSES = 6
"""Tasks of the container beyond the program's: its init and main process, the exec's
wrapper, the runner, the warm server."""


def container_memory() -> str:
    """A container's memory for this machine: a program's and the runner's share beside it."""
    return f"{int(Limits().memory_gib * 1024) + RUNNER_MIB}m"


def image_tag(runtime: str) -> str:
    check_runtimes([runtime])
    return f"{REPOSITORY}:{runtime}"


def _docker(*args: str, what: str, timeout: float = 1800) -> str:
    try:
        proc = subprocess.run(["docker", *args], capture_output=True, timeout=timeout, check=False)
    except FileNotFoundError as exc:
        raise ArtifactError(f"{what}: no docker CLI on PATH") from exc
    except subprocess.TimeoutExpired as exc:
        raise ArtifactError(f"{what}: docker {args[0]} took over {timeout:.0f} s") from exc
    if proc.returncode != 0:
        tail = (proc.stderr.decode(errors="replace").strip().splitlines() or ["(no output)"])[-1]
        raise ArtifactError(f"{what} failed: {tail}")
    return proc.stdout.decode(errors="replace")


def _say(msg: str) -> None:
    print(f"scievals sandbox image: {msg}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Interpreter:
    """The base image's ``python3``: wheels are chosen for it, not for the host."""

    version: str  # "3.11.2"
    machine: str  # "x86_64"
    glibc: tuple[int, int]

    @property
    def abi(self) -> str:
        major, minor = self.version.split(".")[:2]
        return f"cp{major}{minor}"

    def platforms(self) -> list[str]:
        """Every manylinux tag this glibc runs, newest first (pip's ``--platform``)."""
        major, minor = self.glibc
        tags = [f"manylinux_{major}_{m}_{self.machine}" for m in range(minor, 16, -1)]
        return [*tags, f"manylinux2014_{self.machine}"]


_PROBE_BASE = (
    "import json, platform, sys; "
    "lib, ver = platform.libc_ver(); "
    "print(json.dumps([platform.python_version(), platform.machine(), lib, ver]))"
)


def probe_base(base: str) -> Interpreter:
    out = _docker(
        "run", "--rm", "--network", "none", "--entrypoint", "python3", base, "-c", _PROBE_BASE,
        what=f"probing python3 in {base}",
    )  # fmt: skip
    version, machine, lib, libc = json.loads(out.strip().splitlines()[-1])
    if lib != "glibc":
        raise ArtifactError(f"base image {base}: python3 is not on glibc ({lib or 'unknown'})")
    if not version.startswith("3.11."):
        raise ArtifactError(
            f"base image {base} has python {version}; the scoring runtimes pin cp311 wheels "
            "(our sandbox runs the harness's 3.11): use a Python 3.11 base"
        )
    major, minor = (int(x) for x in libc.split(".")[:2])
    return Interpreter(version, machine, (major, minor))


def default_base() -> str:
    """The official Python image if present or pullable, else one made from Debian packages
    (once: it is used from then on)."""
    for present in (OFFICIAL_BASE, LOCAL_BASE):  # LOCAL_BASE exists: no registry, last time
        if _present(present):
            return present
    try:
        _docker("pull", "--quiet", OFFICIAL_BASE, what="pull", timeout=PULL_SECONDS)
        return OFFICIAL_BASE
    except ArtifactError as exc:
        _say(f"{OFFICIAL_BASE} cannot be pulled ({exc}); making {LOCAL_BASE} from Debian packages")
    script = resources.files("scievals.sandbox").joinpath("docker", "base.sh")
    proc = subprocess.run(["bash", str(script), LOCAL_BASE], stdout=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        raise ArtifactError(f"making the base image with {script} failed (its output is above)")
    return LOCAL_BASE


def _present(image: str) -> bool:
    found = subprocess.run(["docker", "image", "inspect", image], capture_output=True, check=False)
    return found.returncode == 0


_WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-(?P<tags>.+)\.whl$")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def fetch_wheels(runtime: str, interp: Interpreter) -> dict[str, Path]:
    """Package -> its wheel, downloaded once per runtime and platform, every one checked: one
    wheel per pin, of the pinned version, for this interpreter (or pure Python)."""
    pinned = pins(runtime)
    where = cache_dir(
        "wheels", f"{runtime}-{pins_hash(runtime)}-{interp.abi}-{interp.machine}"
    )  # one folder per pins and platform: a changed pin never mixes with old wheels
    with open(where / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _wheels(where, pinned, interp)
        if found is None:
            _say(
                f"downloading {len(pinned)} wheels for runtime {runtime} ({interp.abi}, {interp.machine})"
            )
            requirements = where / "pins.txt"
            requirements.write_text(pins_text(runtime))
            cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
            cmd += ["--only-binary=:all:", "--implementation", "cp", "--abi", interp.abi]
            cmd += ["--python-version", interp.version.rsplit(".", 1)[0].replace(".", "")]
            for platform in interp.platforms():
                cmd += ["--platform", platform]
            cmd += ["-d", str(where), "-r", str(requirements)]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
                raise ArtifactError(f"downloading the wheels of runtime {runtime} failed: {tail}")
            found = _wheels(where, pinned, interp)
            if found is None:
                raise ArtifactError(f"pip download gave wheels that do not match runtime {runtime}")
        return found


def _wheels(where: Path, pinned: dict[str, str], interp: Interpreter) -> dict[str, Path] | None:
    """The wheels in ``where`` if they are exactly the pins (else None: download again)."""
    by_name: dict[str, Path] = {}
    for wheel in sorted(where.glob("*.whl")):
        match = _WHEEL.match(wheel.name)
        if match is None:
            return None
        by_name[_canonical(match["name"])] = wheel
        tags = match["tags"]
        if match["version"] != pinned.get(_canonical(match["name"]), pinned.get(match["name"])):
            return None
        if not (tags.endswith("none-any") or interp.abi in tags or "abi3" in tags):
            return None
    wanted = {_canonical(name) for name in pinned}
    if set(by_name) != wanted:
        return None
    return {name: by_name[_canonical(name)] for name in pinned}


def _probe_script(runtime: str) -> str:
    """Run in the build: every warm module imports, matplotlib draws, versions are the pins."""
    return (
        "import importlib.metadata as m, json\n"
        "import matplotlib; matplotlib.use('Agg')\n"
        f"for name in {WARM_MODULES!r}: __import__(name)\n"
        "import matplotlib.pyplot as plt; plt.figure()\n"
        f"pins = {pins(runtime)!r}\n"
        "wrong = {k: m.version(k) for k in pins if m.version(k) != pins[k]}\n"
        "assert not wrong, f'installed versions differ from the pins: {wrong}'\n"
    )


def _recipe(runtime: str) -> str:
    """The Dockerfile and the build's check, whose change means a rebuild as a pin's does."""
    dockerfile = resources.files("scievals.sandbox").joinpath("docker", "Dockerfile")
    return dockerfile.read_text() + _probe_script(runtime)


def recipe_sha256(runtime: str) -> str:
    return hashlib.sha256(_recipe(runtime).encode()).hexdigest()


def labels(runtime: str, base: str, interp: Interpreter) -> dict[str, str]:
    return {
        f"{LABEL}.recipe-sha256": recipe_sha256(runtime),
        f"{LABEL}.name": runtime,
        f"{LABEL}.pins": " ".join(f"{k}=={v}" for k, v in pins(runtime).items()),
        f"{LABEL}.pins-hash": pins_hash(runtime),
        f"{LABEL}.pins-sha256": hashlib.sha256(pins_text(runtime).encode()).hexdigest(),
        f"{LABEL}.python": interp.version,
        f"{LABEL}.base": base,
    }


@dataclass(frozen=True)
class Image:
    """A built runtime image, as the log records it."""

    runtime: str
    tag: str
    id: str
    labels: dict[str, str]

    def record(self) -> dict[str, Any]:
        return {
            "runtime": self.runtime,
            "image": self.tag,
            "id": self.id,
            "pins_hash": self.labels.get(f"{LABEL}.pins-hash"),
            "python": self.labels.get(f"{LABEL}.python"),
            "base": self.labels.get(f"{LABEL}.base"),
        }


def inspect_image(tag: str) -> Image | None:
    """The image under ``tag`` if it is a scoring runtime image (None if absent)."""
    proc = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{json .}}", tag],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return None
    info = json.loads(proc.stdout)
    found = (info.get("Config") or {}).get("Labels") or {}
    return Image(found.get(f"{LABEL}.name", ""), tag, info["Id"], found)


def image_records(runtimes: tuple[str, ...]) -> list[dict[str, Any]]:
    """What a log records of the images serving ``runtimes`` under our compose file: tag, image
    id, pins hash, python and base (``id`` None where the image is absent or Docker does not
    answer)."""
    out = []
    for name in check_runtimes(runtimes):
        try:
            image = inspect_image(image_tag(name))
        except OSError:
            image = None
        out.append(
            image.record() if image else {"runtime": name, "image": image_tag(name), "id": None}
        )
    return out


def image_problem(runtime: str) -> str | None:
    """Why ``scievals-runtime:NAME`` cannot serve ``runtime`` (missing, other pins), or None
    when it can or when Docker does not answer (nothing can be said then)."""
    tag = image_tag(runtime)
    try:
        proc = subprocess.run(["docker", "info"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    image = inspect_image(tag)
    fix = f"`scievals sandbox image --runtime {runtime}`"
    if image is None:
        return f"no image {tag}: build it with {fix}"
    if image.labels.get(f"{LABEL}.pins-hash") != pins_hash(runtime):
        return f"image {tag} has other pins than runtime {runtime}: rebuild it with {fix}"
    if image.labels.get(f"{LABEL}.recipe-sha256") != recipe_sha256(runtime):
        return f"image {tag} was built from an older recipe: rebuild it with {fix}"
    return None


def build_image(
    runtime: str = DEFAULT_RUNTIME, base: str | None = None, tag: str | None = None
) -> Image:
    """Build (or reuse, when its pins and base are the same) the image of ``runtime``; one
    process at a time builds (the others then find it up to date)."""
    tag = tag or image_tag(runtime)
    with open(cache_dir("docker") / f"build-{runtime}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build_image(runtime, base or default_base(), tag)


def _build_image(runtime: str, base: str, tag: str) -> Image:
    interp = probe_base(base)
    wanted = labels(runtime, base, interp)
    existing = inspect_image(tag)
    if existing is not None and all(existing.labels.get(k) == v for k, v in wanted.items()):
        _say(f"{tag} is up to date ({existing.id[:19]})")
        return existing
    wheels = fetch_wheels(runtime, interp)
    with tempfile.TemporaryDirectory(prefix="scievals-image-") as tmp:
        context = Path(tmp)
        (context / "wheels").mkdir()
        lines = []
        for name, wheel in wheels.items():
            shutil.copy2(wheel, context / "wheels" / wheel.name)
            lines.append(f"{name}=={pins(runtime)[name]} --hash=sha256:{sha256_file(wheel)}")
        (context / "requirements.txt").write_text("\n".join(lines) + "\n")
        (context / "probe.py").write_text(_probe_script(runtime))
        dockerfile = resources.files("scievals.sandbox").joinpath("docker", "Dockerfile")
        (context / "Dockerfile").write_text(dockerfile.read_text())  # _recipe() hashes both
        cmd = ["build", "--network", "none", "--build-arg", f"BASE={base}", "--tag", tag]
        cmd += ["--tag", f"{REPOSITORY}:{runtime}-{pins_hash(runtime)}"]
        for key, value in wanted.items():
            cmd += ["--label", f"{key}={value}"]
        _say(f"building {tag} from {base} (python {interp.version}), offline")
        _docker(*cmd, str(context), what=f"building {tag}")
    for leftover in ("stage", "name"):  # the build stage, and the image this one replaced
        _docker("image", "prune", "--force", "--filter", f"label={LABEL}.{leftover}", what="prune")
    built = inspect_image(tag)
    if built is None:
        raise ArtifactError(f"docker build reported success but {tag} is not there")
    _say(f"{tag} ready ({built.id[:19]}): " + wanted[f"{LABEL}.pins"])
    return built


def compose_text(runtimes: tuple[str, ...], images: dict[str, str] | None = None) -> str:
    """A compose file with one service per runtime, named as ``runtime_environment`` says,
    each locked down: no network, memory (no swap), pids and CPU limits, a non-root user, a
    read-only root, capped tmpfs mounts for the working directory and /tmp. One program runs
    at a time in a container (``container.py``), so its limits are the program's own, plus
    what the runner needs beside it (``RUNNER_MIB``, ``RUNNER_PROCESSES``)."""
    images = images or {}
    services: dict[str, Any] = {}
    memory = f"${{{MEMORY_VARIABLE}:-{MEMORY_MIB + RUNNER_MIB}m}}"
    for index, name in enumerate(check_runtimes(runtimes)):
        services[runtime_environment(name, index)] = {
            "image": images.get(name, image_tag(name)),
            "x-scievals-runtime": name,
            "init": True,
            "network_mode": "none",
            "user": f"{SANDBOX_UID}:{SANDBOX_UID}",
            "working_dir": "/home/sandbox",
            "read_only": True,
            "tmpfs": [f"/home/sandbox:{WORK_TMPFS}", f"/tmp:{TMP_TMPFS}"],
            "shm_size": "64m",
            "mem_limit": memory,
            "memswap_limit": memory,
            "pids_limit": _LIMITS.processes + RUNNER_PROCESSES,
            "cpus": CPUS,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges:true"],
            "ulimits": {"fsize": _LIMITS.file_mib << 20, "nofile": _LIMITS.open_files},
            "stop_grace_period": "1s",
            "x-local": True,  # never pulled: built here by `scievals sandbox image`
        }
    header = (
        "# Scoring runtimes for scievals' docker fleet (sandbox/docker_pool.py) or Inspect's docker\n"
        f"# (written by scievals.sandbox.image.compose_text for runtimes {','.join(runtimes)}).\n"
    )
    body = yaml.safe_dump({"services": services}, sort_keys=False)
    return header + body


def compose_file(runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,)) -> Path:
    """The compose file for ``runtimes``: the packaged one for the default runtime, else one
    written under the cache (the same for the same runtimes). Its containers' memory is this
    machine's (``MEMORY_VARIABLE``, set here unless the environment sets it)."""
    os.environ.setdefault(MEMORY_VARIABLE, container_memory())
    text = compose_text(runtimes)
    packaged = resources.files("scievals.sandbox").joinpath("docker", "compose.yaml")
    if packaged.read_text() == text:
        return Path(str(packaged))
    return write_if_changed(cache_dir("docker") / f"compose-{'-'.join(runtimes)}.yaml", text)


def k8s_values_text(
    runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,), registry: str = "registry.example.org"
) -> str:
    """Helm values for inspect-k8s-sandbox's agent-env chart: the same services as the compose
    file, each from ``REGISTRY/scievals-runtime:NAME``, in gVisor, with no egress, limits equal
    to requests (a guaranteed pod: nothing is overcommitted), a non-root user and a read-only
    root with memory-backed scratch directories."""
    memory, disk, tmp = f"{MEMORY_MIB + RUNNER_MIB}Mi", _LIMITS.disk_mib, _LIMITS.tmp_mib
    services: dict[str, Any] = {}
    for index, name in enumerate(check_runtimes(runtimes)):
        amount = {"cpu": str(CPUS), "memory": memory}
        services[runtime_environment(name, index)] = {
            "runtimeClassName": "gvisor",
            "image": f"{registry.rstrip('/')}/{image_tag(name)}",
            "imagePullPolicy": "IfNotPresent",
            "command": ["sleep", "infinity"],
            "workingDir": "/home/sandbox",
            "securityContext": {
                "runAsUser": SANDBOX_UID,
                "runAsGroup": SANDBOX_UID,
                "runAsNonRoot": True,
                "allowPrivilegeEscalation": False,
                "readOnlyRootFilesystem": True,
                "capabilities": {"drop": ["ALL"]},
            },
            "resources": {"requests": dict(amount), "limits": dict(amount)},
            "volumes": [
                {"name": "work", "emptyDir": {"medium": "Memory", "sizeLimit": f"{disk}Mi"}},
                {"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": f"{tmp}Mi"}},
            ],
            "volumeMounts": [
                {"name": "work", "mountPath": "/home/sandbox"},
                {"name": "tmp", "mountPath": "/tmp"},
            ],
        }
    header = (
        "# Helm values for Inspect's Kubernetes sandbox (inspect-k8s-sandbox's agent-env chart),\n"
        f'# runtimes {",".join(runtimes)}: `--sandbox k8s:THIS_FILE` (docs/sandbox.md, "Clusters").\n'
        "# Written by scievals.sandbox.image.k8s_values_text; push the images to REGISTRY first.\n"
    )
    body = {"services": services, "allowDomains": [], "allowCIDR": [], "allowEntities": []}
    return header + yaml.safe_dump(body, sort_keys=False)
