"""The Kubernetes values and compose files we ship, checked without a cluster or a daemon.

Values are validated against the ``values.schema.json`` of inspect-k8s-sandbox's agent-env
chart at a pinned version (the wheel is fetched once and its sha256 checked), after merging
them into the chart's own ``values.yaml`` as Helm does, since Helm validates the merged values.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from scievals.paths import cache_dir
from scievals.sandbox.image import compose_text, image_tag, k8s_values_text
from scievals.sandbox.runtime import RUNTIMES, runtime_environment

CHART_VERSION = "0.14.0"
WHEEL = f"inspect_k8s_sandbox-{CHART_VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "70bc8de299685e629e6856ea3697bba48112cce15d100d0e114345ac0d39842c"
CHART = "k8s_sandbox/resources/helm/agent-env/"


@pytest.fixture(scope="module")
def chart() -> tuple[dict[str, Any], dict[str, Any]]:
    """The chart's schema and default values, from the pinned wheel."""
    where = cache_dir("k8s-chart")
    wheel = where / WHEEL
    if not wheel.exists():
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        cmd += [f"inspect-k8s-sandbox=={CHART_VERSION}", "-d", str(where)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            pytest.skip(f"inspect-k8s-sandbox {CHART_VERSION} cannot be downloaded here")
    data = wheel.read_bytes()
    assert hashlib.sha256(data).hexdigest() == WHEEL_SHA256, f"{wheel} is not the pinned wheel"
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        schema = json.loads(zf.read(CHART + "values.schema.json"))
        defaults = yaml.safe_load(zf.read(CHART + "values.yaml"))
    return schema, defaults


def helm_merge(defaults: Any, values: Any) -> Any:
    """Helm's coalescing: maps merge key by key, anything else is replaced."""
    if not (isinstance(defaults, dict) and isinstance(values, dict)):
        return values
    return {k: helm_merge(defaults.get(k), v) for k, v in values.items()} | {
        k: v for k, v in defaults.items() if k not in values
    }


def packaged(name: str) -> str:
    return resources.files("scievals.sandbox").joinpath("docker", name).read_text()


CASES = [
    ("packaged", yaml.safe_load(packaged("k8s-values.yaml")), ("2024",)),
    ("both", yaml.safe_load(k8s_values_text(("2024", "2025"), "ghcr.io/me")), ("2024", "2025")),
    ("2025-first", yaml.safe_load(k8s_values_text(("2025", "2024"))), ("2025", "2024")),
]


@pytest.mark.parametrize(("label", "values", "runtimes"), CASES, ids=[c[0] for c in CASES])
def test_k8s_values_fit_the_chart_and_lock_down(chart, label, values, runtimes):
    schema, defaults = chart
    errors = [
        e.message
        for e in jsonschema.Draft7Validator(schema).iter_errors(helm_merge(defaults, values))
    ]
    assert errors == []
    assert list(values["services"]) == [runtime_environment(n, i) for i, n in enumerate(runtimes)]
    assert values["allowDomains"] == values["allowCIDR"] == values["allowEntities"] == []
    for name, service in zip(runtimes, values["services"].values(), strict=True):
        assert service["image"].endswith("/" + image_tag(name))
        assert service["runtimeClassName"] == "gvisor"
        assert service["resources"]["limits"] == service["resources"]["requests"]
        assert set(service["resources"]["limits"]) == {"cpu", "memory"}
        context = service["securityContext"]
        assert context["runAsNonRoot"] is True and context["runAsUser"] != 0
        assert context["allowPrivilegeEscalation"] is False
        assert context["readOnlyRootFilesystem"] is True
        assert context["capabilities"] == {"drop": ["ALL"]}
        mounts = {m["mountPath"] for m in service["volumeMounts"]}
        assert mounts == {"/home/sandbox", "/tmp"}  # the only writable places
        assert all(v["emptyDir"]["sizeLimit"] for v in service["volumes"])


def test_a_wrong_value_is_caught(chart):
    """The check is real: a misspelt key in a service fails the chart's schema."""
    schema, defaults = chart
    values = yaml.safe_load(packaged("k8s-values.yaml"))
    values["services"]["default"]["securitycontext"] = {}
    assert list(jsonschema.Draft7Validator(schema).iter_errors(helm_merge(defaults, values)))


def test_packaged_files_are_the_generated_ones():
    """docker/compose.yaml and docker/k8s-values.yaml are what the image command writes for
    the default runtime (one source for the limits)."""
    assert packaged("compose.yaml") == compose_text(("2024",))
    assert packaged("k8s-values.yaml") == k8s_values_text(("2024",))


@pytest.mark.parametrize("runtimes", [("2024",), ("2024", "2025"), ("2025", "2024")])
def test_compose_locks_every_service_down(runtimes):
    compose = yaml.safe_load(compose_text(runtimes))
    services = compose["services"]
    assert list(services) == [runtime_environment(n, i) for i, n in enumerate(runtimes)]
    for name, service in zip(runtimes, services.values(), strict=True):
        assert service["image"] == image_tag(name) and service["x-local"] is True
        assert service["network_mode"] == "none" and service["read_only"] is True
        assert service["user"] == "10001:10001" and service["cap_drop"] == ["ALL"]
        assert service["mem_limit"] == service["memswap_limit"]  # no swap
        assert service["pids_limit"] > 0 and service["cpus"] > 0
        assert "no-new-privileges:true" in service["security_opt"]
        # The working directory and /tmp are capped tmpfs mounts of the container's own (the
        # runner reads what a program leaves through exec, not Docker's copy-out)
        mounts = {m.partition(":")[0]: m.partition(":")[2] for m in service["tmpfs"]}
        assert set(mounts) == {"/home/sandbox", "/tmp"} and "volumes" not in compose
        assert all("size=" in options and "nr_inodes=" in options for options in mounts.values())
    assert set(RUNTIMES) >= set(runtimes)


def test_compose_for_other_runtimes_is_written_once(tmp_path, monkeypatch):
    from scievals.sandbox.image import compose_file

    monkeypatch.setenv("SCIEVALS_CACHE", str(tmp_path))
    assert (
        compose_file(("2024",))
        == Path(str(resources.files("scievals.sandbox"))) / "docker" / "compose.yaml"
    )
    both = compose_file(("2024", "2025"))
    assert both.parent == tmp_path / "docker" and both.read_text() == compose_text(("2024", "2025"))
    stamp = both.stat().st_mtime_ns
    assert compose_file(("2024", "2025")) == both and both.stat().st_mtime_ns == stamp
