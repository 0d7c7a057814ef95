"""``scievals sandbox setup``, ``scievals sandbox status`` and ``scievals sandbox image``."""

from __future__ import annotations

import argparse
import json

PROOF = "import os, sys, numpy; print(numpy.__version__, os.access(sys.prefix, os.W_OK))"


def prove(name: str) -> str | None:
    """Run one real program in runtime ``name``'s sandbox: None if it ran there (the runtime's
    numpy, read-only), else why not, in one line. Being built is not being usable: a runtime
    the sandbox cannot show fails here, not in the first eval."""
    import anyio

    from scievals.sandbox.engine import engine
    from scievals.sandbox.provider import ScievalsSandbox, ScievalsSandboxConfig

    async def once() -> str | None:
        eng = engine(name)
        box = ScievalsSandbox(ScievalsSandboxConfig(runtimes=(name,)), eng)
        try:
            out = await box.execute(["python3", "-c", PROOF], timeout=120)
        finally:
            box.cleanup()
        if out.infrastructure:
            return out.infrastructure
        expected = f"{eng.runtime.versions.get('numpy')} False"
        if out.returncode != 0 or out.stdout.strip() != expected:
            said = (out.stderr.strip().splitlines() or [out.stdout.strip() or "no output"])[-1]
            return f"a test program failed (exit {out.returncode}, {out.reason or said})"
        return None

    return anyio.run(once)


def _setup(ns: argparse.Namespace) -> int:
    from scievals.sandbox import describe
    from scievals.sandbox.engine import engine
    from scievals.sandbox.runtime import RUNTIMES

    failed = 0
    for name in RUNTIMES:  # builds each runtime if needed, probes the isolation mode
        eng = engine(name)
        hello = eng.ensure_started()
        print(f"runtime {name}: {eng.runtime.root}")
        versions = ", ".join(f"{k} {v}" for k, v in hello["versions"].items())
        print(f"  python {hello['python']}; {versions}")
        failed += _report_proof(name)
    info = describe()
    print(
        f"isolation mode: {info['mode']}" + (f" ({info['mode_note']})" if info["mode_note"] else "")
    )
    return 1 if failed else 0


def _report_proof(name: str) -> int:
    """Print whether a program runs in runtime ``name``'s sandbox; 1 if it does not."""
    why = prove(name)
    print(f"  sandbox: {'a test program ran' if why is None else 'UNUSABLE: ' + why}")
    return 0 if why is None else 1


def _status(ns: argparse.Namespace) -> int:
    from scievals.sandbox import describe
    from scievals.sandbox.runtime import RUNTIMES

    info = describe()
    if ns.json:
        print(json.dumps(info, indent=1))
        return 0
    print(f"isolation mode: {info['mode']}")
    if info["mode_note"]:
        print(f"  note: {info['mode_note']}")
    print(f"  {info['isolation']}")
    failed = 0
    for name in RUNTIMES:
        runtime = describe(name)
        built = "built" if runtime["runtime_built"] else "not built yet (scievals sandbox setup)"
        print(f"runtime {name} ({runtime['runtime_hash']}): {built}")
        print("  " + ", ".join(f"{k} {v}" for k, v in runtime["runtime"].items()))
        if runtime["runtime_built"]:
            failed += _report_proof(name)
    print("limits: " + ", ".join(f"{k}={v}" for k, v in info["limits"].items()))
    print("enforced by:")
    for what, how in info["enforced"].items():
        print(f"  {what}: {how}")
    return 1 if failed else 0


def _image(ns: argparse.Namespace) -> int:
    from pathlib import Path

    from scievals.inputs import InputError
    from scievals.sandbox.image import build_image, compose_text, k8s_values_text
    from scievals.sandbox.runtime import DEFAULT_RUNTIME, check_runtimes

    runtimes = check_runtimes(ns.runtime or [DEFAULT_RUNTIME])
    if ns.tag and len(runtimes) > 1:
        raise InputError("--tag names one image: give one --runtime with it")
    images = {name: build_image(name, ns.base, ns.tag) for name in runtimes}
    for image in images.values():
        print(json.dumps(image.record()))
    if ns.compose:
        tags = {name: image.tag for name, image in images.items()}
        Path(ns.compose).write_text(compose_text(runtimes, tags))
        print(f"compose file: {ns.compose} (--sandbox docker:{ns.compose})")
    if ns.k8s_values:
        Path(ns.k8s_values).write_text(k8s_values_text(runtimes, ns.registry))
        print(f"k8s values: {ns.k8s_values} (push the images to {ns.registry} first)")
    return 0


def register(groups: dict) -> None:
    """Add ``sandbox setup``, ``sandbox status`` and ``sandbox image`` under the root command."""
    sandbox = groups["root"].add_parser("sandbox", help="the code-execution sandbox")
    sub = sandbox.add_subparsers(dest="sandbox_command", required=True)
    setup = sub.add_parser(
        "setup", help="build the pinned scoring runtimes and run a program in each one's sandbox"
    )
    setup.set_defaults(func=_setup)
    status = sub.add_parser(
        "status", help="isolation mode, runtimes (a program run in each built one) and limits"
    )
    status.add_argument(
        "--json",
        action="store_true",
        help="print describe() as JSON (what logs record; runs nothing)",
    )
    status.set_defaults(func=_status)
    image = sub.add_parser(
        "image",
        help="build the scoring runtime images for Docker and Kubernetes (offline build)",
        description="Wheels are fetched and verified on the host; nothing is fetched in the "
        "build. An image whose pins and base are unchanged is reused.",
    )
    image.add_argument(
        "--runtime", action="append", help="a runtime to build (repeat; default: 2024)"
    )
    image.add_argument(
        "--base",
        default=None,
        help="base image with python 3.11 (default: python:3.11-slim-bookworm, else one made "
        "from Debian packages)",
    )
    image.add_argument("--tag", default=None, help="image name (default: scievals-runtime:NAME)")
    image.add_argument(
        "--compose", default=None, help="also write a compose file for these runtimes"
    )
    image.add_argument(
        "--k8s-values", default=None, help="also write Helm values for the k8s sandbox"
    )
    image.add_argument(
        "--registry", default="registry.example.org", help="where the k8s values pull images from"
    )
    image.set_defaults(func=_image)
