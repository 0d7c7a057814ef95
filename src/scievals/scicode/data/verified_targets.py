"""SciCode-Verified's targets: the release file, or a local build from the original + patches.

Verified grades against ``test_data_cleaned.h5``: the official ``test_data.h5`` with some tests'
targets replaced (the patch files ``targets/N.json``) and test groups past each step's test count
removed. The release asset is the primary way to get it; ``build_verified`` rebuilds it locally.

The build copies the original byte for byte and edits the copy in place, in Verified's order
(literal patches by step and test, then transforms, then trimming), so that untouched data keep
their bytes and the result can match the release's md5 when the inputs are the official ones.
Every deviation from the release (a patch file absent, a transform this module cannot apply, a
differing md5) stops the build unless asked for (``allow_missing``); a file built so records why
in its root attribute ``scievals_partial`` and claims no md5.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from scievals.artifacts import ArtifactError, download
from scievals.paths import cache_dir
from scievals.scicode.data import targets, verified
from scievals.scicode.data.dataset import PRESUPPLIED_STEPS
from scievals.scicode.data.targets import write_test_target

FILE_NAME = "test_data_cleaned.h5"
RELEASE_URL = f"https://github.com/{verified.REPOSITORY}/releases/download/data/{FILE_NAME}"
ENV_VERIFIED_H5 = "SCIEVALS_SCICODE_VERIFIED_H5"
PARTIAL_ATTR = "scievals_partial"
# The release's md5, as Verified's manifest (pinned by md5 in verified.py) gives it.
RELEASE_MD5 = "2b41a7df40ddc23ce651ec05b8ecb6f8"
NO_VERIFIED_H5 = (
    "SciCode-Verified needs its targets test_data_cleaned.h5, which is not here: run "
    "`scievals data fetch --dataset verified` where GitHub is reachable, or build it from the "
    "original with `scievals data build-verified --h5 test_data.h5`, or pass --h5 PATH / set "
    f"{ENV_VERIFIED_H5}"
)
STEP_ID = re.compile(r"^\d+\.\d+$")
Variables = tuple[np.ndarray, ...]  # one test's var1..varN


def _step_key(step: str) -> tuple[int, int]:
    problem, number = step.split(".")
    return int(problem), int(number)


# ---- the patch format ------------------------------------------------------------------------


def decode(value: Any) -> Any:
    """JSON to Python: ``{"__complex__": [re, im]}`` becomes complex, at any depth in lists."""
    if isinstance(value, dict):
        if set(value) == {"__complex__"}:
            real, imag = value["__complex__"]
            return complex(real, imag)
        raise ValueError(f"unexpected object in a target value: keys {sorted(value)}")
    if isinstance(value, list):
        return [decode(item) for item in value]
    return value


def components(value: Any, n_vars: int) -> Variables:
    """One test's new target as the variables var1..varN it is stored in.

    A list of exactly ``n_vars`` items is a tuple of variables when the original test has several
    (``n_vars`` > 1, counted in the step's original ``test1``, as Verified's build counts them);
    anything else is one variable. Each variable becomes one array (0-d for a scalar), so the
    official reader gives back NumPy scalars and arrays of the dtype NumPy infers (float64,
    int64, complex128, bool); a ragged value that is not split raises ValueError.
    """
    parts = value if n_vars > 1 and isinstance(value, list) and len(value) == n_vars else [value]
    return tuple(np.asarray(part) for part in parts)


@dataclass
class PatchSet:
    """What the patch files ask for: literal values, transforms, and what was not available."""

    values: dict[str, dict[int, Any]] = field(default_factory=dict)  # step -> 0-based -> value
    transforms: dict[str, dict[str, Any]] = field(default_factory=dict)  # step -> spec
    files: list[str] = field(default_factory=list)  # patch files read
    missing: list[str] = field(default_factory=list)  # patch files listed but not available

    def add(self, name: str, patch: dict[str, Any]) -> None:
        """One patch file: step ids at the top level or under "targets"; other keys are notes.

        Under a step: a mapping from 0-based test index to value ("_"-keys are notes), a list
        (test i gets item i), or a transform (a mapping with "_transform").
        """
        self.files.append(name)
        nested = patch.get("targets", {})
        for step, body in [*patch.items(), *nested.items()]:
            if not STEP_ID.match(step):
                continue
            if isinstance(body, dict) and "_transform" in body:
                self.transforms[step] = body
                continue
            if isinstance(body, list):
                items = dict(enumerate(body))
            elif isinstance(body, dict):
                unknown = [k for k in body if not (k.isdigit() or k.startswith("_"))]
                if unknown:
                    raise ArtifactError(f"SciCode-Verified {name}: {step} has keys {unknown}")
                items = {int(k): v for k, v in body.items() if k.isdigit()}
            else:
                raise ArtifactError(
                    f"SciCode-Verified {name}: {step} is neither tests nor transform"
                )
            tests = self.values.setdefault(step, {})
            for index, raw in items.items():
                try:
                    tests[index] = decode(raw)
                except ValueError as exc:
                    raise ArtifactError(
                        f"SciCode-Verified {name}: {step} test{index + 1}: {exc}"
                    ) from exc

    @property
    def n_values(self) -> int:
        return sum(len(tests) for tests in self.values.values())


def load_patches(source: str) -> PatchSet:
    """Every patch file the manifest lists, md5-checked; absent files of a local copy are listed
    as missing (a public source downloads them, and fails loudly if it cannot)."""
    found = PatchSet()
    for name in verified.patch_names(source):
        relpath = f"targets/{name}"
        if source not in verified.PUBLIC_SOURCES and not (Path(source) / relpath).is_file():
            found.missing.append(name)
            continue
        found.add(name, json.loads(verified.verified_file(relpath, source)))
    return found


def step_test_counts(problems: bytes) -> dict[str, int]:
    """Each step's test count in Verified's problems file (JSON lines)."""
    counts = {}
    for line in problems.decode("utf-8").splitlines():
        if line.strip():
            for step in json.loads(line)["sub_steps"]:
                counts[str(step["step_number"])] = len(step["test_cases"] or [])
    return counts


# ---- transforms: targets recomputed from a description in the patch ------------------------


def _cross_band_strict(spec: dict[str, Any], before: h5py.Group | None) -> list[Variables]:
    """8.1: (mask, filtered image) with a strict boundary, as the patch's "_transform" says:
    T = (|kx| > bw) & (|ky| > bw) in the centred spectrum; filtered = real(ifft2(ifftshift(
    fftshift(fft2(image)) * T))). The original mask (inclusive boundary) must agree off the
    bandwidth lines, which checks the layout against the original gold's."""
    results = []
    for number, test in enumerate(spec["tests"], start=1):
        image = np.tile(np.array(test["matrix"], dtype=float), test["tile"])
        rows, cols = image.shape
        kx, ky = np.meshgrid(np.arange(cols) - cols // 2, np.arange(rows) - rows // 2)
        bandwidth = test["bandwidth"]
        mask = ((np.abs(kx) > bandwidth) & (np.abs(ky) > bandwidth)).astype(float)
        off_lines = (np.abs(kx) != bandwidth) & (np.abs(ky) != bandwidth)
        old = before.get(f"test{number}/var1") if before is not None else None
        comparable = isinstance(old, h5py.Dataset) and old.shape == mask.shape
        if comparable and not np.array_equal(old[()][off_lines], mask[off_lines]):
            raise ArtifactError(
                f"SciCode-Verified 8.1 test{number}: the recomputed mask differs from the "
                "original's away from the bandwidth lines (a different layout); not applied"
            )
        spectrum = np.fft.fftshift(np.fft.fft2(image))
        results.append((mask, np.real(np.fft.ifft2(np.fft.ifftshift(spectrum * mask)))))
    return results


def _split_operator(spec: dict[str, Any], before: h5py.Group | None) -> list[Variables]:
    """40.3: the final u of the diffusion-reaction solver, as 40.3's prompt now specifies it
    (grid from the CFL target with its actual spacing, step initial condition, Strang splitting
    of u^2 / alpha*u_xx with forward Euler, ghost cells equal to the nearest cell), checked
    against the patch's "verify_first3"."""
    results = []
    for config in spec["configs"]:
        dt, alpha = config["dt"], config["alpha"]
        x = np.linspace(-1, 1, round(2 / (dt / config["CFL"])) + 2)
        dx = x[1] - x[0]
        u = np.where(x < 0, -1.0, 1.0)
        for _ in range(round(config["T"] / dt)):
            half = u + 0.5 * dt * u**2
            ghost = np.pad(half, 1, mode="edge")
            diffused = half + dt * alpha * ((ghost[2:] - 2 * half + ghost[:-2]) / (dx * dx))
            u = diffused + 0.5 * dt * diffused**2
        results.append((u,))
    for number, (expected, (u,)) in enumerate(
        zip(spec["verify_first3"], results, strict=True), start=1
    ):
        if not np.allclose(u[: len(expected)], expected, rtol=0, atol=1e-5):
            raise ArtifactError(
                f"SciCode-Verified 40.3 test{number}: the recomputed target starts "
                f"{u[:3].tolist()}, the patch says {expected}"
            )
    return results


# A transform: (its spec, the step's original group or None) -> each test's new variables.
TRANSFORMS: dict[str, Callable[[dict[str, Any], h5py.Group | None], list[Variables]]] = {
    "cshband_pass_strict": _cross_band_strict,
    "split_operator_physical": _split_operator,
}


def unapplicable(spec: dict[str, Any]) -> str | None:
    """Why a transform cannot be applied here, or None."""
    if spec.get("_type") in TRANSFORMS:
        return None
    if "ref" in spec:
        return f"they need {spec['ref']}, which the patch files do not include"
    return f"transform type {spec.get('_type')!r} is not implemented"


# ---- building --------------------------------------------------------------------------------


def md5_file(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass
class BuildReport:
    """What a build did, and whether its result is the release."""

    out: Path
    patched_tests: int = 0
    transformed_tests: int = 0
    dropped_groups: list[str] = field(default_factory=list)
    partial: dict[str, Any] = field(default_factory=dict)  # why it is not the release
    md5: str | None = None  # the result's md5 when the inputs are the official ones

    @property
    def message(self) -> str:
        done = (
            f"SciCode-Verified targets at {self.out}: {self.patched_tests} tests patched, "
            f"{self.transformed_tests} recomputed, {len(self.dropped_groups)} surplus test "
            "groups dropped"
        )
        if self.partial:
            return done + "; PARTIAL, not the release (md5 not claimed): " + _reasons(self.partial)
        return done + f"; md5 {self.md5} matches the release"


def _some(items: list[str], shown: int = 8) -> str:
    """A list for a one-line message, cut short when long."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def _reasons(partial: dict[str, Any]) -> str:
    parts = []
    if "missing_patches" in partial:
        parts.append("patch files missing: " + ", ".join(partial["missing_patches"]))
    by_reason: dict[str, list[str]] = {}
    for step, reason in partial.get("unapplied_transforms", {}).items():
        by_reason.setdefault(reason, []).append(step)
    for reason, steps in by_reason.items():
        parts.append(
            f"transforms of {', '.join(steps)} not applied ({reason}; their targets removed)"
        )
    if "lacking_tests" in partial:
        parts.append("tests without a target: " + _some(partial["lacking_tests"]))
    parts += [partial[key] for key in ("original", "md5") if key in partial]
    return "; ".join(parts)


def build_verified(
    original: Path,
    out: Path,
    patches: PatchSet,
    counts: dict[str, int],
    allow_missing: bool = False,
) -> BuildReport:
    """Build the Verified targets from the original file; atomic (a temporary file, renamed).

    ``counts``: each step's test count in Verified's problems file; groups past it are removed
    (pre-supplied steps are left as they are). Raises ArtifactError, before any copying where
    it can, when the result could not be the release and ``allow_missing`` is false.
    """
    original, out = Path(original), Path(out)
    report = BuildReport(out)
    unapplied = {
        step: reason for step, spec in patches.transforms.items() if (reason := unapplicable(spec))
    }
    if patches.missing:
        report.partial["missing_patches"] = patches.missing
    if unapplied:
        report.partial["unapplied_transforms"] = unapplied
    if report.partial and not allow_missing:
        raise ArtifactError(
            "SciCode-Verified targets cannot be built as released: "
            + _reasons(report.partial)
            + ". Fetch the release (`scievals data fetch --dataset verified`), or pass "
            "--allow-missing to build a partial file"
        )
    official = targets.sha256_file(original) == targets.OFFICIAL_SHA256
    if not official:
        report.partial["original"] = f"{original} is not the official test_data.h5 (sha256)"
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        shutil.copyfile(original, tmp)
        with h5py.File(tmp, "a") as h5:
            _edit(h5, patches, unapplied, counts, report)
        if "lacking_tests" in report.partial and not allow_missing:
            raise ArtifactError(
                "SciCode-Verified targets: no target for "
                + _some(report.partial["lacking_tests"])
                + " (the original file lacks them); pass --allow-missing to build anyway"
            )
        if official and not report.partial:
            report.md5 = md5_file(tmp)
            if report.md5 != RELEASE_MD5:
                report.partial["md5"] = f"md5 {report.md5} differs from the release's"
                if not allow_missing:
                    raise ArtifactError(
                        "SciCode-Verified targets built from the official inputs differ from "
                        f"the release (md5 {report.md5}, expected {RELEASE_MD5}); not installed. "
                        "Fetch the release (`scievals data fetch --dataset verified`) or pass "
                        "--allow-missing to keep the build"
                    )
        if report.partial:
            with h5py.File(tmp, "a") as h5:
                h5.attrs[PARTIAL_ATTR] = json.dumps(report.partial, sort_keys=True)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return report


def _replace(h5: h5py.File, step: str, number: int, variables: Variables) -> None:
    path = f"{step}/test{number}"
    if path in h5:
        del h5[path]
    write_test_target(h5, step, number, variables)


def _edit(
    h5: h5py.File,
    patches: PatchSet,
    unapplied: dict[str, str],
    counts: dict[str, int],
    report: BuildReport,
) -> None:
    """Patches, transforms, trimming, in Verified's order (the order decides the bytes)."""
    for step in sorted(patches.values, key=_step_key):
        if f"{step}/test1" not in h5:
            raise ArtifactError(f"SciCode-Verified: {step}/test1 is not in the original file")
        n_vars = len(h5[f"{step}/test1"])
        for index, value in sorted(patches.values[step].items()):
            try:
                variables = components(value, n_vars)
            except ValueError as exc:
                raise ArtifactError(
                    f"SciCode-Verified {step} test{index + 1}: the patched value does not fit "
                    f"the original's {n_vars} variable(s): {exc}"
                ) from exc
            _replace(h5, step, index + 1, variables)
            report.patched_tests += 1
    for step in sorted(patches.transforms, key=_step_key):
        if step in unapplied:
            if step in h5:
                del h5[step]
            continue
        spec = patches.transforms[step]
        recomputed = TRANSFORMS[spec["_type"]](spec, h5.get(step))
        for number, variables in enumerate(recomputed, start=1):
            _replace(h5, step, number, variables)
            report.transformed_tests += 1
    for step in sorted(counts, key=_step_key):
        if step in PRESUPPLIED_STEPS or step not in h5:
            continue
        for name in list(h5[step]):
            if name.startswith("test") and int(name[4:]) > counts[step]:
                del h5[f"{step}/{name}"]
                report.dropped_groups.append(f"{step}/{name}")
    lacking = [
        f"{step}/test{number}"
        for step, count in sorted(counts.items(), key=lambda item: _step_key(item[0]))
        if step not in PRESUPPLIED_STEPS
        for number in range(1, count + 1)
        if f"{step}/test{number}" not in h5
    ]
    if lacking:
        report.partial["lacking_tests"] = lacking


# ---- the release file, and where the targets are ---------------------------------------------


def cached_path() -> Path:
    return cache_dir("scicode") / FILE_NAME


def verified_h5(explicit: str | None = None) -> Path | None:
    """The Verified targets, if here: ``--h5``, ``$SCIEVALS_SCICODE_VERIFIED_H5``, the cache."""
    if explicit and not Path(explicit).exists():
        raise ArtifactError(f"--h5 {explicit}: no such file")
    for candidate in (explicit, os.environ.get(ENV_VERIFIED_H5), cached_path()):
        if candidate and Path(candidate).exists():
            return Path(candidate)
    return None


def fetch_release(timeout: float = 30.0) -> Path:
    """Download the release asset into the cache (resumable), verified by the manifest's md5.

    A file already there that is not the release (a local build) is replaced only once the
    download is complete and verified.
    """
    dest = cached_path()
    if dest.exists() and md5_file(dest) == RELEASE_MD5:
        return dest
    staged = dest.with_name(dest.name + ".download")
    try:
        download(RELEASE_URL, staged, timeout=timeout)
    except ArtifactError as exc:
        raise ArtifactError(
            f"SciCode-Verified targets: {exc}. Build them from the original instead "
            "(`scievals data build-verified --h5 test_data.h5`) or pass --h5 PATH / set "
            f"{ENV_VERIFIED_H5}"
        ) from exc
    actual = md5_file(staged)
    if actual != RELEASE_MD5:
        staged.unlink()
        raise ArtifactError(
            f"SciCode-Verified targets from {RELEASE_URL}: md5 {actual}, expected {RELEASE_MD5}"
            " (removed; run the fetch again)"
        )
    staged.replace(dest)
    return dest


def partial_note(path: Path) -> dict[str, Any] | None:
    """Why a local build is not the release (its ``scievals_partial`` attribute), or None."""
    with h5py.File(path, "r") as h5:
        note = h5.attrs.get(PARTIAL_ATTR)
    return json.loads(note) if note is not None else None


def describe_verified(path: Path, verify: bool = False) -> str:
    """One line for ``scievals data status``: size, whether a partial build, md5 if asked."""
    note = f"{path} ({path.stat().st_size:,} bytes"
    try:
        partial = partial_note(path)
    except OSError:
        return note + ", NOT a readable HDF5 file)"
    if partial:
        note += ", a PARTIAL local build: " + _reasons(partial)
    if verify:
        note += ", md5 " + ("ok" if md5_file(path) == RELEASE_MD5 else "differs from the release")
    return note + ")"
