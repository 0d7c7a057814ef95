"""An Inspect sandbox provider looked up by its registered name (``docker``, ``k8s``, ours).

Inspect has no public lookup of a provider class by name; this is the one its eval uses, kept in
one place below both the face (``environments.provider_class``) and the Docker fleet, which
wraps Inspect's own ``docker``.
"""

from __future__ import annotations

from inspect_ai.util import SandboxEnvironment

from scievals.inputs import InputError


def registered_provider(kind: str) -> type[SandboxEnvironment]:
    """The provider class Inspect registered under ``kind``; a one-line refusal if none is."""
    from inspect_ai.util._sandbox.registry import (  # inspect-evals-lint: ignore[private_api_imports] -- no public lookup of a provider by name exists
        registry_find_sandboxenv,
    )

    try:
        return registry_find_sandboxenv(kind)
    except ValueError as exc:
        raise InputError(f"unknown sandbox {kind}: {exc}") from exc
