"""Test targets: the official ``test_data.h5`` layout, read and written, and where files live.

Reading follows the official ``process_hdf5_to_tuple`` decoding exactly (spec §7), including its
quirks (one member -> bare value, several -> tuple in name order, dict keys that parse as float
become floats). A file is opened for the steps one read needs, and closed after it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import scipy.sparse
import sympy

from scievals.artifacts import ArtifactError, download, sha256_file
from scievals.paths import cache_dir
from scievals.scicode.inside.compare import SPARSE_TYPES

OFFICIAL_SHA256 = "48b0272a88b17dbd29777c217e1b4fb2b019b92e11cc2add847409db9541b890"
# The official file's hosts, tried in this order. Google Drive (the file id of the SciCode
# README) refuses downloads once the file's sharing quota is spent; the Hugging Face mirror holds
# the same bytes (the sha256 above), pinned at a commit, as inspect_evals 0.28.0 downloads them.
MIRROR_REPO = "xantheocracy/scicode-mirror"
MIRROR_REVISION = "2f903a64a1c4eb62c7c649b0caf7ecb2c0217590"
MIRROR_URL = f"https://huggingface.co/datasets/{MIRROR_REPO}/resolve/{MIRROR_REVISION}/test_data.h5"
DRIVE_URL = "https://drive.usercontent.google.com/download?id=17G_k65N_6yFFZ2O-jQH00Lh6iaw3z-AW&export=download&confirm=t"
ENV_H5 = "SCIEVALS_SCICODE_H5"
ENV_MIRROR_URL = "SCIEVALS_SCICODE_H5_MIRROR_URL"
ENV_DRIVE_URL = "SCIEVALS_SCICODE_H5_DRIVE_URL"
"""Either host's URL replaced (a copy on a local server): the sha256 is checked all the same."""


# ---- reading (official decoding) -------------------------------------------------------------


def _dataset_value(dataset: h5py.Dataset) -> Any:
    value = dataset[()]
    return value.decode("utf-8", errors="strict") if isinstance(value, bytes) else value


def _sparse(group: h5py.Group) -> Any:
    data = group["data"][()]
    shape = tuple(group["shape"][()])
    if "row" in group and "col" in group:
        return scipy.sparse.coo_matrix((data, (group["row"][()], group["col"][()])), shape=shape)
    if "blocksize" in group:
        return scipy.sparse.bsr_matrix(
            (data, group["indices"][()], group["indptr"][()]),
            shape=shape,
            blocksize=tuple(group["blocksize"][()]),
        )
    return scipy.sparse.csr_matrix((data, group["indices"][()], group["indptr"][()]), shape=shape)


def _dict(group: h5py.Group) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for key, member in group.items():
        if isinstance(member, h5py.Group):
            out[key] = _sparse(member["sparse_matrix"])
            continue
        value = member[()]
        if isinstance(value, bytes):
            out[key] = value.decode("utf-8", errors="strict")
            continue
        try:
            out[float(key)] = value
        except ValueError:
            out[key] = value
    return out


def _datagroup(group: h5py.Group) -> Any:
    """Decided by the first member's name only, as the official reader does."""
    for key in group:
        if key == "list":
            return [member[()] for member in group["list"].values()]
        if key == "sparse_matrix":
            return _sparse(group[key])
        return _dict(group)
    return _dict(group)


def _member(obj: h5py.Dataset | h5py.Group) -> Any:
    return _dataset_value(obj) if isinstance(obj, h5py.Dataset) else _datagroup(obj)


def read_step_targets(h5: h5py.File, step_id: str, n_tests: int) -> list[Any]:
    """The targets of one step's tests, decoded as the official harness decodes them."""
    targets = []
    for number in range(1, n_tests + 1):
        path = f"{step_id}/test{number}"
        if path not in h5 or not isinstance(h5[path], h5py.Group):
            raise KeyError(f"{path} not found in the targets file")
        members = list(h5[path].values())
        if len(members) == 1:
            targets.append(_member(members[0]))
        else:
            targets.append(tuple(_member(m) for m in members))
    return targets


class TargetFile:
    """A targets file opened read-only; a context manager that closes it on exit."""

    def __init__(self, path: Path):
        self.path = Path(path)
        if not self.path.exists():
            raise ArtifactError(f"targets file {self.path} does not exist")
        self._h5 = h5py.File(self.path, "r")

    def step(self, step_id: str, n_tests: int) -> list[Any]:
        return read_step_targets(self._h5, step_id, n_tests)

    def has_step(self, step_id: str) -> bool:
        return f"{step_id}/test1" in self._h5

    def close(self) -> None:
        self._h5.close()

    def __enter__(self) -> TargetFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---- writing (the official writer's layout, without its NumPy 2 crash) -----------------------


def write_value(group: h5py.Group, key: str, value: Any) -> None:
    """Store one value the way the official ``save_data_to_hdf5`` does."""
    if isinstance(value, dict):
        _write_dict(group.create_group(key), value)
    elif isinstance(value, list | tuple):
        try:
            group.create_dataset(key, data=np.array(value))
        except Exception:
            items = group.create_group(key).create_group("list")
            for i, item in enumerate(value):
                write_value(items, f"var{i + 1}", item)
    elif isinstance(value, SPARSE_TYPES):
        _write_sparse(group.create_group(key).create_group("sparse_matrix"), value)
    elif isinstance(value, int | float | str | complex | bool | np.bool_ | np.int_ | np.ndarray):
        group.create_dataset(key, data=value)
    else:
        group.create_dataset(key, data=str(value))


def _write_sparse(group: h5py.Group, value: Any) -> None:
    group.create_dataset("data", data=value.data)
    group.create_dataset("shape", data=value.shape)
    if isinstance(value, scipy.sparse.coo_matrix):
        group.create_dataset("row", data=value.row)
        group.create_dataset("col", data=value.col)
    else:
        group.create_dataset("indices", data=value.indices)
        group.create_dataset("indptr", data=value.indptr)
        if isinstance(value, scipy.sparse.bsr_matrix):
            group.create_dataset("blocksize", data=value.blocksize)


def _write_dict(group: h5py.Group, mapping: dict[Any, Any]) -> None:
    for key, value in mapping.items():
        if isinstance(key, sympy.Symbol | np.floating | float):
            key = str(key)
        if isinstance(value, dict):
            _write_dict(group.create_group(key), value)
        elif isinstance(value, list | tuple):
            group.create_dataset(key, data=np.array(value))
        elif isinstance(value, int | float | str | complex | bool | np.bool_ | np.ndarray):
            group.create_dataset(key, data=value)
        elif isinstance(value, SPARSE_TYPES):
            _write_sparse(group.create_group(key).create_group("sparse_matrix"), value)
        else:
            group.create_dataset(key, data=str(value))


def write_test_target(h5: h5py.File, step_id: str, number: int, target: Any) -> None:
    """One test's group: a tuple becomes var1..varN, anything else var1 (None: a placeholder)."""
    group = h5.create_group(f"{step_id}/test{number}")
    items = target if isinstance(target, tuple) else (0 if target is None else target,)
    for i, item in enumerate(items):
        write_value(group, f"var{i + 1}", item)


# ---- where the files are ---------------------------------------------------------------------


def official_h5(explicit: str | os.PathLike | None = None) -> Path | None:
    """The official targets file, if the user has one: ``--h5``, ``$SCIEVALS_SCICODE_H5``, cache."""
    if explicit:  # a path the user named is used or refused, never swapped for another file
        if not Path(explicit).exists():
            raise ArtifactError(f"--h5 {explicit}: no such file")
        return Path(explicit)
    for candidate in (os.environ.get(ENV_H5), cache_dir("scicode") / "test_data.h5"):
        if candidate and Path(candidate).exists():
            return Path(candidate)
    return None


def official_hosts() -> list[tuple[str, str]]:
    """(name, URL) of each host of the official file, in the order tried."""
    return [
        (
            f"the Hugging Face mirror {MIRROR_REPO}@{MIRROR_REVISION[:7]}",
            os.environ.get(ENV_MIRROR_URL) or MIRROR_URL,
        ),
        ("Google Drive", os.environ.get(ENV_DRIVE_URL) or DRIVE_URL),
    ]


def fetch_official(
    timeout: float = 30.0,
    hosts: Sequence[tuple[str, str]] | None = None,
    sha256: str = OFFICIAL_SHA256,
) -> Path:
    """Download the official file into the cache (resumable, also from one host to the next),
    from the first host that gives it whole and verified by sha256; else one line naming each
    host and why it did not."""
    dest = cache_dir("scicode") / "test_data.h5"
    failed = []
    for name, url in official_hosts() if hosts is None else hosts:
        try:
            return download(url, dest, sha256, timeout=timeout)
        except ArtifactError as exc:
            cause = exc.__cause__
            why = str(cause) if cause else "it served another file (its sha256 differs)"
            failed.append(f"{name}: {why}")
    raise ArtifactError(
        f"test_data.h5 could not be fetched ({'; '.join(failed)}): download it elsewhere (the "
        f"SciCode README links it) and pass --h5 PATH or set {ENV_H5}"
    )


def describe_official(path: Path, verify: bool = False) -> str:
    size = path.stat().st_size
    note = f"{path} ({size:,} bytes"
    if verify:
        note += ", sha256 " + ("ok" if sha256_file(path) == OFFICIAL_SHA256 else "MISMATCH")
    return note + ")"
