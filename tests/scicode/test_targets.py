"""The h5 targets layout (spec §7): every encoding written and read back, ours and the official's.

Each value is written with our ``write_test_target`` and read back with our ``read_step_targets``
and with the official ``process_hdf5_to_tuple`` (from the nvidia-scicode wheel); the official
writer ``save_data_to_hdf5`` must produce a file both readers decode the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import scipy.sparse
import sympy

from scievals.artifacts import ArtifactError
from scievals.scicode import regenerate
from scievals.scicode.data import targets as targets_module
from scievals.scicode.data.dataset import find_step, load_problems
from scievals.scicode.data.targets import (
    ENV_H5,
    TargetFile,
    read_step_targets,
    write_test_target,
    write_value,
)
from scievals.scicode.data.targets_source import NO_H5, TargetSource

from .conftest import official

DENSE = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0], [4.0, 5.0, 0.0]])


def _same(a: Any, b: Any) -> bool:
    """Exact equality including types (numpy scalars vs Python values, containers, sparse)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    if scipy.sparse.issparse(a):
        return a.shape == b.shape and np.array_equal(a.toarray(), b.toarray())
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


# (id, value written, value read back)
ROUND_TRIPS = [
    ("float", 1.5, np.float64(1.5)),
    ("np-float64", np.float64(-2.25), np.float64(-2.25)),
    ("int", 3, np.int64(3)),
    ("np-int64", np.int64(7), np.int64(7)),
    ("complex", 1 + 2j, np.complex128(1 + 2j)),
    ("bool", True, np.bool_(True)),
    ("np-bool", np.bool_(False), np.bool_(False)),
    ("str", "hello", "hello"),
    ("str-unicode", "Ψ ≈ 1", "Ψ ≈ 1"),
    ("float-array", np.linspace(0, 1, 5), np.linspace(0, 1, 5)),
    ("float-2d", DENSE, DENSE),
    ("int-array", np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3)),
    ("complex-array", np.array([1j, 2 + 0j]), np.array([1j, 2 + 0j])),
    ("bool-array", np.array([True, False]), np.array([True, False])),
    ("list-to-ndarray", [1.0, 2.0, 3.0], np.array([1.0, 2.0, 3.0])),
    ("nested-list-to-ndarray", [[1, 2], [3, 4]], np.array([[1, 2], [3, 4]])),
    (
        "ragged-list-to-list",
        [np.zeros(2), np.ones(3), np.arange(4.0)],
        [np.zeros(2), np.ones(3), np.arange(4.0)],
    ),
    (
        "dict-str-keys",
        {"alpha": 1.0, "beta": np.arange(3)},
        {"alpha": np.float64(1.0), "beta": np.arange(3)},
    ),
    (
        "dict-float-like-keys",
        {"1": 2.0, "2.5": 3.0, "x": 4.0},
        {1.0: np.float64(2.0), 2.5: np.float64(3.0), "x": np.float64(4.0)},
    ),
    (
        "dict-float-and-symbol-keys",
        {np.float64(0.5): 1.0, sympy.Symbol("k"): 2.0},
        {0.5: np.float64(1.0), "k": np.float64(2.0)},
    ),
    # The official writer cannot write a Python float key (TypeError); ours writes str(key).
    ("dict-python-float-key", {0.25: 1.0}, {0.25: np.float64(1.0)}),
    ("dict-string-values", {"name": "spin", "n": 2}, {"name": "spin", "n": np.int64(2)}),
    (
        "dict-sparse-member",
        {"H": scipy.sparse.csr_matrix(DENSE), "n": 1.0},
        {"H": scipy.sparse.csr_matrix(DENSE), "n": np.float64(1.0)},
    ),
    (
        "dict-list-value",
        {"v": [1.0, 2.0]},
        {"v": np.array([1.0, 2.0])},
    ),
    ("csr", scipy.sparse.csr_matrix(DENSE), scipy.sparse.csr_matrix(DENSE)),
    ("coo", scipy.sparse.coo_matrix(DENSE), scipy.sparse.coo_matrix(DENSE)),
    (
        "bsr",
        scipy.sparse.bsr_matrix(np.kron(np.eye(2), np.ones((2, 2)))),
        scipy.sparse.bsr_matrix(np.kron(np.eye(2), np.ones((2, 2)))),
    ),
    # Official quirk: csc is written without a marker and read back as csr (transposed).
    ("csc-read-as-csr", scipy.sparse.csc_matrix(DENSE), scipy.sparse.csr_matrix(DENSE.T)),
    # A one-element tuple is indistinguishable from a bare value.
    ("one-tuple-is-bare", (2.5,), np.float64(2.5)),
    (
        "tuple-var1-varN",
        (np.arange(3.0), 1.5, "s"),
        (np.arange(3.0), np.float64(1.5), "s"),
    ),
    (
        "tuple-of-bools",
        (True, False, True),
        (np.bool_(True), np.bool_(False), np.bool_(True)),
    ),
    (
        "tuple-with-dict-and-list",
        ({"a": 1.0}, [np.zeros(1), np.zeros(2)]),
        ({"a": np.float64(1.0)}, [np.zeros(1), np.zeros(2)]),
    ),
    # write_test_target's placeholder for a test without a target (78.1, 78.2).
    ("none-placeholder", None, np.int64(0)),
]


def _write(path, values: list[Any], step: str = "9.1") -> None:
    with h5py.File(path, "w") as h5:
        for number, value in enumerate(values, start=1):
            write_test_target(h5, step, number, value)


@pytest.mark.parametrize(
    ("value", "expected"), [c[1:] for c in ROUND_TRIPS], ids=[c[0] for c in ROUND_TRIPS]
)
def test_round_trip(tmp_path, value, expected):
    path = tmp_path / "t.h5"
    _write(path, [value, value])
    with h5py.File(path, "r") as h5:
        ours = read_step_targets(h5, "9.1", 2)
    assert len(ours) == 2
    assert _same(ours[0], expected), (ours[0], expected)
    assert _same(ours[1], expected)
    theirs = official().process_hdf5_to_tuple("9.1", 2, path)
    assert _same(ours[0], theirs[0]), (ours[0], theirs[0])


SINGLE_VALUES = [
    c
    for c in ROUND_TRIPS
    if c[1] is not None and not isinstance(c[1], tuple) and c[0] != "dict-python-float-key"
]


@pytest.mark.parametrize("value", [c[1] for c in SINGLE_VALUES], ids=[c[0] for c in SINGLE_VALUES])
def test_our_writer_matches_official_writer(tmp_path, value):
    """Same value through the official ``save_data_to_hdf5`` (np.float_ shimmed): same reading."""
    ours_path, theirs_path = tmp_path / "ours.h5", tmp_path / "theirs.h5"
    with h5py.File(ours_path, "w") as h5:
        write_value(h5.create_group("9.1/test1"), "var1", value)
    with h5py.File(theirs_path, "w") as h5:
        official().save_data_to_hdf5("var1", value, h5.create_group("9.1/test1"))
    with h5py.File(ours_path, "r") as a, h5py.File(theirs_path, "r") as b:
        assert _same(read_step_targets(a, "9.1", 1), read_step_targets(b, "9.1", 1))


def test_write_value_none_is_string(tmp_path):
    """The official writer stores anything else (e.g. None) as its str()."""
    path = tmp_path / "t.h5"
    with h5py.File(path, "w") as h5:
        group = h5.create_group("9.1/test1")
        write_value(group, "var1", None)
        write_value(group, "var2", sympy.Symbol("x") + 1)
    with h5py.File(path, "r") as h5:
        assert read_step_targets(h5, "9.1", 1) == [("None", "x + 1")]


def test_tuple_members_read_in_name_order(tmp_path):
    """Official quirk: var10 sorts before var2 (h5py name order)."""
    values = tuple(float(i) for i in range(1, 11))
    path = tmp_path / "t.h5"
    _write(path, [values])
    with h5py.File(path, "r") as h5:
        (got,) = read_step_targets(h5, "9.1", 1)
    assert [float(v) for v in got] == [1.0, 10.0, *range(2, 10)]
    assert _same(got, official().process_hdf5_to_tuple("9.1", 1, path)[0])


def test_missing_paths_raise_key_error(tmp_path):
    path = tmp_path / "t.h5"
    _write(path, [1.0, 2.0])
    with h5py.File(path, "a") as h5:
        h5.create_dataset("9.2/test1", data=1.0)  # not a group
    with h5py.File(path, "r") as h5:
        with pytest.raises(KeyError, match="8.1/test1"):
            read_step_targets(h5, "8.1", 1)
        with pytest.raises(KeyError, match="9.1/test3"):
            read_step_targets(h5, "9.1", 3)
        with pytest.raises(KeyError, match="9.2/test1"):
            read_step_targets(h5, "9.2", 1)
        assert read_step_targets(h5, "9.1", 0) == []


def test_target_file_reads_one_step_only(tmp_path):
    """A broken other step does not matter: only the asked step is decoded."""
    path = tmp_path / "t.h5"
    _write(path, [np.arange(3.0), (1.0, 2.0)], step="1.1")
    with h5py.File(path, "a") as h5:
        # A nested dict: the reader looks for <member>/sparse_matrix and fails on it.
        h5.create_group("2.1/test1/var1/outer").create_dataset("inner", data=1.0)
    targets = TargetFile(path)
    try:
        assert targets.has_step("1.1") and targets.has_step("2.1")
        assert not targets.has_step("3.1")
        got = targets.step("1.1", 2)
        assert _same(got[0], np.arange(3.0))
        assert _same(got[1], (np.float64(1.0), np.float64(2.0)))
        with pytest.raises(KeyError):
            targets.step("2.1", 1)
    finally:
        targets.close()


def test_target_file_closes_as_context_manager(tmp_path):
    path = tmp_path / "t.h5"
    _write(path, [1.0])
    with TargetFile(path) as targets:
        assert targets.step("9.1", 1) == [np.float64(1.0)]
    assert not targets._h5.id.valid


def test_target_file_missing(tmp_path):
    with pytest.raises(ArtifactError, match="does not exist"):
        TargetFile(tmp_path / "absent.h5")


def test_regenerated_dev_file_layout(dev_targets_file):
    """The cached regenerated dev file: every dev step readable; member census as spec §8."""
    problems = load_problems("dev")
    targets = TargetFile(dev_targets_file)
    census: dict[str, int] = {}
    try:
        for problem in problems:
            for step in problem.scored_steps:
                values = targets.step(step.step_id, len(step.tests))
                assert len(values) == len(step.tests)
        with h5py.File(dev_targets_file, "r") as h5:
            steps = [s.step_id for p in problems for s in p.scored_steps]
            assert sorted(h5.keys()) == sorted(steps)
            for step in steps:
                for test in h5[step].values():
                    members = list(test.values())
                    kind = _member_kind(members[0]) if len(members) == 1 else f"{len(members)}-var"
                    census[kind] = census.get(kind, 0) + 1
    finally:
        targets.close()
    assert sum(census.values()) == 167
    assert census["2-var"] == 22
    assert census["3-var"] == 1
    assert census["list"] == 3  # 70.6, ragged
    assert census["complex"] == 3
    assert census["complex-array"] == 12
    assert census["bool"] == 5
    assert census["int"] == 9  # incl. the 6 placeholders of 78.1/78.2
    assert census["float-array"] == 68
    assert census["float"] == 40
    assert census["int-array"] == 4


def _member_kind(member: Any) -> str:
    if isinstance(member, h5py.Group):
        return next(iter(member.keys()))
    kind = {"f": "float", "i": "int", "c": "complex", "b": "bool", "S": "str", "O": "str"}
    name = kind[member.dtype.kind]
    return name + ("-array" if member.shape else "")


# ---- which file serves which step (TargetSource) --------------------------------------------


def _open_h5_files() -> int:
    return h5py.h5f.get_obj_count(h5py.h5f.OBJ_ALL, h5py.h5f.OBJ_FILE)


@pytest.mark.parametrize(
    ("split", "choice", "h5", "note"),
    [
        ("test", "auto", None, "official h5 (test_data.h5)"),
        ("dev", "auto", None, "dev regenerated from gold code"),
        ("dev", "regenerated", None, "dev regenerated from gold code"),
        ("dev", "official", "/data/mine.h5", "official h5 (mine.h5)"),
        (
            "all",
            "auto",
            None,
            "official h5 (test_data.h5) for test steps, dev regenerated from gold code",
        ),
    ],
)
def test_target_source_note_needs_no_files(split, choice, h5, note):
    assert TargetSource(split, choice, h5).note == note


def test_target_source_missing(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_H5, raising=False)
    monkeypatch.setattr(targets_module, "cache_dir", lambda *parts: tmp_path.joinpath(*parts))
    assert TargetSource("test").missing() == NO_H5
    assert TargetSource("dev").missing() is None
    assert TargetSource("dev", "official").missing() == NO_H5
    absent = tmp_path / "absent.h5"
    assert TargetSource("test", "auto", str(absent)).missing() == f"--h5 {absent}: no such file"
    with pytest.raises(ArtifactError, match="test_data.h5"):
        TargetSource("all").prepare()


def test_target_source_without_a_regenerator_says_so():
    """The data floor cannot build dev targets itself: whoever builds the source passes the
    grader's regenerator, and a source without one refuses in one line."""
    with pytest.raises(ArtifactError, match="nothing was given to build them"):
        TargetSource("dev").prepare()


def test_target_source_reads_each_step_from_its_file_and_closes(tmp_path):
    official_path, regenerated_path = tmp_path / "test_data.h5", tmp_path / "dev.h5"
    _write(official_path, ["official"] * 3, step="77.1")
    with h5py.File(official_path, "a") as h5:
        for number in range(1, 4):
            write_test_target(h5, "1.1", number, "official")
    _write(regenerated_path, ["regenerated"] * 3, step="1.1")
    calls = []

    def build() -> Path:
        calls.append(1)
        return regenerated_path

    test_step = find_step("77.1", "test")[1]
    dev_step = find_step("1.1", "dev")[1]
    before = _open_h5_files()
    both = TargetSource("all", "auto", str(official_path), regenerate=build)
    assert calls == []  # nothing happens before scoring asks
    read = both.read([test_step, dev_step])
    assert read["77.1"] == ["official"] * len(test_step.tests)
    assert read["1.1"] == ["regenerated"] * 3
    assert TargetSource("dev", "official", str(official_path)).read([dev_step]) == {
        "1.1": ["official"] * 3
    }
    both.read([dev_step])
    assert calls == [1]  # prepared once
    assert _open_h5_files() == before


def test_target_source_regenerates_absent_dev_targets_with_progress(
    monkeypatch, tmp_path, capfd, dev_targets_file
):
    """First use builds the regenerated file (here a copy stands in for the sandbox run)."""
    dest = tmp_path / "dev_regenerated.h5"

    async def regenerate_dev(env, path, progress=None):
        progress("  regenerated 1.1 (1/50)")
        path.write_bytes(dev_targets_file.read_bytes())

    monkeypatch.setattr(regenerate, "dev_targets_path", lambda: dest)
    monkeypatch.setattr(regenerate, "regenerate_dev", regenerate_dev)
    source = TargetSource("dev", regenerate=regenerate.ensure_dev_targets)
    assert not dest.exists()
    source.prepare()
    assert dest.exists()
    err = capfd.readouterr().err
    assert "regenerating SciCode dev targets" in err and "(1/50)" in err
    assert len(source.read([find_step("1.1", "dev")[1]])["1.1"]) == 3
