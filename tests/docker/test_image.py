"""The runtime images: offline builds from checked wheels, the pins inside, the containers locked."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from scievals.sandbox.execution import run_program
from scievals.sandbox.image import (
    LABEL,
    Interpreter,
    _wheels,
    build_image,
    inspect_image,
)
from scievals.sandbox.runtime import pins, pins_hash

pytestmark = pytest.mark.slow

CPYTHON = Interpreter("3.11.2", "x86_64", (2, 36))


def _touch(where: Path, *names: str) -> None:
    for name in names:
        (where / name).write_bytes(b"")


def _wheel_names(runtime: str) -> list[str]:
    out = []
    for name, version in pins(runtime).items():
        pure = name in {"mpmath", "sympy", "cycler", "packaging", "pyparsing", "python-dateutil"}
        tags = "py3-none-any" if pure else "cp311-cp311-manylinux_2_17_x86_64"
        out.append(f"{name.replace('-', '_')}-{version}-{tags}.whl")
    return out


def test_wheels_must_be_exactly_the_pins(tmp_path):
    """A folder of wheels is used only if it is one wheel per pin, of the pinned version, for
    the base image's interpreter; anything else is downloaded again."""
    names = _wheel_names("2024")
    _touch(tmp_path, *names)
    assert set(_wheels(tmp_path, pins("2024"), CPYTHON)) == set(pins("2024"))
    (tmp_path / names[0]).unlink()  # numpy missing
    assert _wheels(tmp_path, pins("2024"), CPYTHON) is None
    _touch(tmp_path, "numpy-2.4.2-cp311-cp311-manylinux_2_17_x86_64.whl")  # another version
    assert _wheels(tmp_path, pins("2024"), CPYTHON) is None
    (tmp_path / "numpy-2.4.2-cp311-cp311-manylinux_2_17_x86_64.whl").unlink()
    _touch(tmp_path, "numpy-1.26.4-cp312-cp312-manylinux_2_17_x86_64.whl")  # another python
    assert _wheels(tmp_path, pins("2024"), CPYTHON) is None


def test_platforms_follow_the_base_glibc():
    tags = CPYTHON.platforms()
    assert tags[0] == "manylinux_2_36_x86_64" and tags[-1] == "manylinux2014_x86_64"
    assert "manylinux_2_17_x86_64" in tags and "manylinux_2_37_x86_64" not in tags


def test_image_records_its_pins_and_is_reused(runtime_image):
    labels = runtime_image.labels
    assert labels[f"{LABEL}.name"] == "2024"
    assert labels[f"{LABEL}.pins-hash"] == pins_hash("2024")
    assert labels[f"{LABEL}.pins"].split() == [f"{k}=={v}" for k, v in pins("2024").items()]
    assert labels[f"{LABEL}.python"].startswith("3.11.")
    again = build_image("2024")  # same pins, same base: nothing is built
    assert again.id == runtime_image.id
    assert inspect_image(f"scievals-runtime:2024-{pins_hash('2024')}").id == runtime_image.id


PROBE = (
    "import importlib.metadata as m, json, os, sys; "
    "print(json.dumps({'versions': {d.metadata['Name']: d.version for d in m.distributions()}, "
    "'prefix': sys.prefix, 'uid': os.getuid()}))"
)


def test_image_holds_the_pins_and_nothing_else(runtime_image):
    out = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "--read-only", runtime_image.tag]
        + ["python3", "-c", PROBE],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    facts = json.loads(out.stdout)
    assert facts["prefix"] == "/opt/runtime" and facts["uid"] == 10001
    found = {k.lower().replace("_", "-"): v for k, v in facts["versions"].items()}
    assert found == {k.lower(): v for k, v in pins("2024").items()}  # no pip, nothing extra


CHECKS = r"""
import errno, json, os, socket
facts = {"uid": os.getuid()}
try:
    open("/opt/runtime/planted", "w")
except OSError as exc:
    facts["root"] = errno.errorcode[exc.errno]
for where in ("/tmp", os.getcwd()):
    with open(os.path.join(where, "w"), "w") as f:
        f.write("x")
facts["cwd"] = os.getcwd()
try:
    socket.create_connection(("10.255.255.53", 53), timeout=3)
    facts["net"] = "reached"
except OSError as exc:
    facts["net"] = type(exc).__name__
facts["interfaces"] = sorted(os.listdir("/sys/class/net"))
def read(path):
    try:
        return open(path).read().strip()
    except OSError:
        return None
facts["memory"] = read("/sys/fs/cgroup/memory/memory.limit_in_bytes") or read("/sys/fs/cgroup/memory.max")
facts["pids"] = read("/sys/fs/cgroup/pids/pids.max") or read("/sys/fs/cgroup/pids.max")
print(json.dumps(facts))
"""


def test_containers_are_locked_down(runtime_image):
    """What a step program sees in our compose file's container: a non-root user, a read-only
    root, writable /tmp and working directory only, no network but loopback, this machine's
    per-program memory and 64 pids for the program (the runner's share beside it: RUNNER_MIB,
    RUNNER_PROCESSES)."""
    from scievals.sandbox.environments import open_environments
    from scievals.sandbox.image import RUNNER_MIB, RUNNER_PROCESSES
    from scievals.sandbox.limits import Limits

    async def probe() -> dict:
        async with open_environments("docker") as envs:
            out = await run_program(envs["2024"], ["python3", "-c", CHECKS], timeout=60)
            assert out.returncode == 0, out.stderr
            return json.loads(out.stdout)

    facts = asyncio.run(probe())
    assert facts["uid"] == 10001
    assert facts["root"] == "EROFS"
    assert facts["cwd"] == "/home/sandbox"
    assert facts["net"] in ("OSError", "ConnectionRefusedError") or "Unreachable" in facts["net"]
    assert facts["interfaces"] == ["lo"]
    assert int(facts["memory"]) == int(Limits().memory_gib * 2**30) + (RUNNER_MIB << 20)
    assert facts["pids"] == str(64 + RUNNER_PROCESSES)


def test_each_runtime_gets_its_own_service(both_images):
    """Runtimes 2024,2025: `default` runs 2024's image, `runtime-2025` 2025's (runtime.py's
    naming, which the scorer follows under every provider)."""
    from scievals.sandbox.environments import open_environments

    code = "import numpy, scipy; print(numpy.__version__, scipy.__version__)"

    async def versions() -> dict[str, str]:
        async with open_environments("docker", ("2024", "2025")) as envs:
            outs = {n: await run_program(e, ["python3", "-c", code]) for n, e in envs.items()}
            return {n: o.stdout.strip() for n, o in outs.items()}

    assert asyncio.run(versions()) == {
        "2024": f"{pins('2024')['numpy']} {pins('2024')['scipy']}",
        "2025": f"{pins('2025')['numpy']} {pins('2025')['scipy']}",
    }


def test_a_missing_image_is_named_before_any_sample(docker_ready, monkeypatch, caplog, tmp_path):
    """A bare `docker` resolves to our compose file; a missing image is a clear warning then."""
    from scievals.sandbox import environments as module
    from scievals.sandbox import image

    monkeypatch.setattr(image, "REPOSITORY", "scievals-runtime-absent")
    monkeypatch.setenv("SCIEVALS_CACHE", str(tmp_path))
    with caplog.at_level("WARNING"):
        kind, config = module.sandbox_spec("docker")
    assert kind == "scievals-docker" and Path(config).name.startswith("compose")
    assert "scievals sandbox image --runtime 2024" in caplog.text
