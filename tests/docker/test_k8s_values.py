"""The Kubernetes values and compose files we ship, checked without a cluster or a daemon.

Values are validated against the ``values.schema.json`` of inspect-k8s-sandbox's agent-env
chart at a pinned version (the wheel is fetched once and its sha256 checked), after merging
them into the chart's own ``values.yaml`` as Helm does, since Helm validates the merged values.
Then Helm itself renders the chart's templates with them (``helm template``; a pinned Helm from
``scripts/setup_helm.sh`` where none is installed) and the pod spec a cluster would run is
checked: non-root, read-only root, no capabilities, limits equal to requests, gVisor, our
runtime image, capped memory-backed scratch directories, and no egress but the sandbox's own
DNS.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
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
from scievals.sandbox.image import (
    MEMORY_MIB,
    RUNNER_MIB,
    compose_text,
    image_tag,
    k8s_values_text,
)
from scievals.sandbox.runtime import RUNTIMES, runtime_environment

CHART_VERSION = "0.14.0"
WHEEL = f"inspect_k8s_sandbox-{CHART_VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "70bc8de299685e629e6856ea3697bba48112cce15d100d0e114345ac0d39842c"
CHART = "k8s_sandbox/resources/helm/agent-env/"


@pytest.fixture(scope="module")
def wheel() -> bytes:
    """The pinned inspect-k8s-sandbox wheel (fetched once)."""
    where = cache_dir("k8s-chart")
    path = where / WHEEL
    if not path.exists():
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        cmd += [f"inspect-k8s-sandbox=={CHART_VERSION}", "-d", str(where)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            pytest.skip(f"inspect-k8s-sandbox {CHART_VERSION} cannot be downloaded here")
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == WHEEL_SHA256, f"{path} is not the pinned wheel"
    return data


@pytest.fixture(scope="module")
def chart(wheel: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """The chart's schema and default values, from the pinned wheel."""
    with zipfile.ZipFile(io.BytesIO(wheel)) as zf:
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


def helm_binary() -> str:
    found = shutil.which("helm")
    if found:
        return found
    cached = cache_dir("helm") / "helm"
    if cached.exists():
        return str(cached)
    why = cache_dir("helm") / "unavailable"
    pytest.skip(
        f"no helm: {why.read_text().strip() if why.exists() else 'run scripts/setup_helm.sh'}"
    )


def render(wheel: bytes, values: str, where: Path) -> list[dict[str, Any]]:
    """The chart's manifests for ``values``, as ``helm template`` renders them."""
    with zipfile.ZipFile(io.BytesIO(wheel)) as zf:
        for name in zf.namelist():
            if name.startswith(CHART) and not name.endswith("/"):
                zf.extract(name, where)
    (where / "values.yaml").write_text(values)
    proc = subprocess.run(
        [
            helm_binary(),
            "template",
            "scievals",
            str(where / CHART),
            "-f",
            str(where / "values.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return [doc for doc in yaml.safe_load_all(proc.stdout) if doc]


@pytest.mark.parametrize(
    ("runtimes", "registry"), [(("2024",), None), (("2024", "2025"), "ghcr.io/me")]
)
def test_the_chart_renders_a_locked_down_pod_spec(wheel, tmp_path, runtimes, registry):
    values = (
        packaged("k8s-values.yaml") if registry is None else k8s_values_text(runtimes, registry)
    )
    check_pods(render(wheel, values, tmp_path), runtimes, registry or "registry.example.org")


@pytest.mark.parametrize(
    "spoil",
    [
        lambda v: v.update(allowDomains=["pypi.org"]),
        lambda v: v["services"]["default"]["securityContext"].update(readOnlyRootFilesystem=False),
        lambda v: v["services"]["default"]["resources"]["requests"].update(memory="1Gi"),
        lambda v: v["services"]["default"].update(runtimeClassName="runc"),
    ],
    ids=["egress", "writable-root", "overcommitted", "runc"],
)
def test_the_pod_check_catches_a_weaker_spec(wheel, tmp_path, spoil):
    values = yaml.safe_load(packaged("k8s-values.yaml"))
    spoil(values)
    docs = render(wheel, yaml.safe_dump(values), tmp_path)
    with pytest.raises(AssertionError):
        check_pods(docs, ("2024",), "registry.example.org")


def check_pods(docs: list[dict[str, Any]], runtimes: tuple[str, ...], registry: str) -> None:
    sets = {
        d["metadata"]["labels"]["inspect/service"]: d for d in docs if d["kind"] == "StatefulSet"
    }
    assert list(sets) == [runtime_environment(n, i) for i, n in enumerate(runtimes)]
    for name, stateful in zip(runtimes, sets.values(), strict=True):
        pod = stateful["spec"]["template"]["spec"]
        assert pod.get("runtimeClassName") == "gvisor"
        assert pod["automountServiceAccountToken"] is False
        ours = pod["containers"][0]
        assert ours["image"] == f"{registry}/{image_tag(name)}"
        context = ours["securityContext"]
        assert context["runAsNonRoot"] is True and context["runAsUser"] == 10001
        assert context["readOnlyRootFilesystem"] is True
        assert context["allowPrivilegeEscalation"] is False
        assert context["capabilities"] == {"drop": ["ALL"]}
        assert ours["resources"]["limits"] == ours["resources"]["requests"]
        assert ours["resources"]["limits"]["memory"] == f"{MEMORY_MIB + RUNNER_MIB}Mi"
        mounts = {m["mountPath"]: m["name"] for m in ours["volumeMounts"]}
        scratch = {v["name"]: v for v in pod["volumes"] if "emptyDir" in v}
        for path in ("/home/sandbox", "/tmp"):
            volume = scratch[mounts[path]]["emptyDir"]
            assert volume["medium"] == "Memory" and volume["sizeLimit"]
        assert {p for p, n in mounts.items() if n in scratch} == {"/home/sandbox", "/tmp"}
    egress = [
        rule
        for d in docs
        if d["kind"] == "CiliumNetworkPolicy"
        for rule in d["spec"].get("egress", [])
    ]
    assert egress, "the chart always writes its egress policy"
    for rule in egress:  # only the cluster's DNS for the sandbox's own names, and its own pods
        assert not {"toCIDR", "toCIDRSet", "toFQDNs", "toEntities", "toServices"} & set(rule)
        for port in rule.get("toPorts", []):
            for dns in port.get("rules", {}).get("dns", []):
                assert dns["matchPattern"].endswith(".svc.cluster.local")
