"""SciCode-Verified's targets: the patch format, the local build, the release fetch, the lookup.

The build is tested on a synthetic original in the official layout holding every step of
Verified's problems file (some with more tests than Verified keeps), a dev step and a step
Verified does not know, patched with every patch file of the shared copy
(``../shared/data/scicode-verified``; set ``SCIEVALS_TEST_SCICODE_VERIFIED`` for another).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest

from scievals.artifacts import ArtifactError
from scievals.cli import main
from scievals.scicode.data import targets, verified
from scievals.scicode.data import verified_targets as vt
from scievals.scicode.data.targets import read_step_targets, write_test_target

from .verified_helpers import VERIFIED_DATA, needs_verified_data

DATA = VERIFIED_DATA
needs_data = needs_verified_data
MISSING_HERE = ["12.json", "28.json", "31.json", "37.json"]
NEEDS_P13_REF = ["13.9", "13.10", "13.11", "13.12", "13.13", "13.15"]
# The synthetic original: variables per test where a step's targets are tuples (43.3: (float,
# array); 79.2/79.3: 4 items; 72.5: (probability, magnetisation change); 8.1: (mask, image));
# 79.4 gets 2 so that an equal-length list is split too.
N_VARS = {"8.1": 2, "43.3": 2, "72.5": 2, "79.2": 4, "79.3": 4, "79.4": 2}
SURPLUS = {"5.1": 2, "11.1": 1, "17.2": 3}  # extra original tests, to be dropped
FEWER = {"22.3": 4}  # the original has 4 tests; the patch adds test5
EXTRA_STEPS = {"1.1": 3, "99.1": 2}  # a dev step (patched) and a step Verified does not list


def _same(a: Any, b: Any) -> bool:
    """Exact equality including types and dtypes."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _inclusive_mask(bandwidth: int, shift: int = 0) -> np.ndarray:
    """8.1's original gold mask (boundary included), 800 x 800, centred (``shift``: wrongly)."""
    k = np.abs(np.arange(800) - 400 + shift)
    return ((k[None, :] >= bandwidth) & (k[:, None] >= bandwidth)).astype(float)


def _original_value(rng: np.random.Generator, n_vars: int) -> Any:
    values = tuple(rng.normal(size=rng.integers(1, 5)) for _ in range(n_vars))
    return values if n_vars > 1 else values[0]


@pytest.fixture(scope="module")
def counts() -> dict[str, int]:
    if not (DATA / "manifest.json").is_file():
        pytest.skip(f"SciCode-Verified copy not found at {DATA}")
    return vt.step_test_counts(verified.verified_file(verified.PROBLEMS_FILE, str(DATA)))


@pytest.fixture(scope="module")
def patches() -> vt.PatchSet:
    return vt.load_patches(str(DATA))


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory, counts: dict[str, int]) -> Path:
    """Every Verified step (pre-supplied ones and 72.6 with 2 tests), mixed value types."""
    path = tmp_path_factory.mktemp("original") / "test_data.h5"
    rng = np.random.default_rng(0)
    with h5py.File(path, "w") as h5:
        for step, count in {**counts, **EXTRA_STEPS}.items():
            n_tests = FEWER.get(step, (count or 2) + SURPLUS.get(step, 0))
            for number in range(1, n_tests + 1):
                value = _original_value(rng, N_VARS.get(step, 1))
                if step == "8.1":
                    value = True if number == 4 else (_inclusive_mask((40, 40, 20)[number - 1]), 0)
                write_test_target(h5, step, number, value)
        write_test_target(h5, "99.1", 3, (1 + 2j, "text", 7, {"a": 1.5}))
    return path


@pytest.fixture(scope="module")
def built(
    tmp_path_factory: pytest.TempPathFactory,
    original: Path,
    patches: vt.PatchSet,
    counts: dict[str, int],
) -> tuple[Path, vt.BuildReport]:
    out = tmp_path_factory.mktemp("built") / "test_data_cleaned.h5"
    return out, vt.build_verified(original, out, patches, counts, allow_missing=True)


def _raw(name: str) -> dict[str, Any]:
    return json.loads((DATA / "targets" / name).read_text())


# ---- the patch format ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [
        (1.5, 1.5),
        ({"__complex__": [0.0, -0.96]}, -0.96j),
        ([[{"__complex__": [1, 2]}, 3.0]], [[1 + 2j, 3.0]]),
        (True, True),
    ],
)
def test_decode(raw: Any, decoded: Any) -> None:
    assert vt.decode(raw) == decoded


def test_decode_refuses_other_objects() -> None:
    with pytest.raises(ValueError, match="__complex__"):
        vt.decode({"__complex__": [1, 2], "x": 1})


@pytest.mark.parametrize(
    ("patch", "values", "transforms"),
    [
        (
            {"problem_id": "9", "note": "n", "_rounds": ["r1"], "9.1": {"0": 1.0, "2": 2.0}},
            {"9.1": {0: 1.0, 2: 2.0}},
            [],
        ),
        (
            {"problem_id": "76", "targets": {"76.2": [7.5, 9.5, 0.0]}},
            {"76.2": {0: 7.5, 1: 9.5, 2: 0.0}},
            [],
        ),
        ({"targets": {"5.1": {"1": [1, 2], "_note": "x"}}}, {"5.1": {1: [1, 2]}}, []),
        ({"targets": {"8.1": {"_transform": "text", "_type": "t", "tests": []}}}, {}, ["8.1"]),
        ({"22.2": {"3": {"__complex__": [1.0, 2.0]}}}, {"22.2": {3: 1 + 2j}}, []),
    ],
    ids=["flat", "nested-list", "nested-dict", "transform", "complex"],
)
def test_patch_shapes(patch: dict, values: dict, transforms: list[str]) -> None:
    found = vt.PatchSet()
    found.add("x.json", patch)
    assert found.values == values
    assert list(found.transforms) == transforms


def test_patch_with_an_unknown_key_is_refused() -> None:
    with pytest.raises(ArtifactError, match=r"x.json: 9.1 has keys \['first'\]"):
        vt.PatchSet().add("x.json", {"9.1": {"first": 1.0}})


@pytest.mark.parametrize(
    ("value", "n_vars", "expected"),
    [
        (0.5, 1, (np.float64(0.5),)),
        ([1.0, 2], 1, (np.array([1.0, 2.0]),)),
        ([1.0, 2], 2, (np.float64(1.0), np.int64(2))),
        ([1.0, [2.0, 3.0]], 2, (np.float64(1.0), np.array([2.0, 3.0]))),
        ([1.0, 2.0, 3.0], 2, (np.array([1.0, 2.0, 3.0]),)),
        ([1 + 2j, 3.0], 1, (np.array([1 + 2j, 3 + 0j]),)),
        ([True, True], 1, (np.array([True, True]),)),
    ],
    ids=["scalar", "array", "tuple", "ragged-tuple", "length-differs", "complex", "bool"],
)
def test_components(value: Any, n_vars: int, expected: tuple) -> None:
    got = tuple(np.asarray(part)[()] for part in vt.components(value, n_vars))
    assert _same(got, tuple(np.asarray(e)[()] for e in expected))


def test_components_refuses_a_ragged_single_variable() -> None:
    with pytest.raises(ValueError):
        vt.components([1.0, [2.0, 3.0]], 1)


# ---- what the shared patch files hold ----------------------------------------------------------


@needs_data
def test_shared_patch_files(patches: vt.PatchSet) -> None:
    assert patches.missing == MISSING_HERE
    assert len(patches.files) == 35
    assert sorted(patches.transforms, key=vt._step_key) == ["8.1", *NEEDS_P13_REF, "40.3"]
    assert {s: vt.unapplicable(patches.transforms[s]) is None for s in patches.transforms} == {
        "8.1": True,
        "40.3": True,
        **dict.fromkeys(NEEDS_P13_REF, False),
    }
    assert len(patches.values) == 50
    assert patches.n_values == 105


@needs_data
def test_release_md5_is_the_manifests() -> None:
    assert verified.manifest(str(DATA))["h5_md5"] == vt.RELEASE_MD5


# ---- the build -------------------------------------------------------------------------------


# (step, 0-based test, what the official reader gives back), written out by hand from the files.
READ_BACK = [
    ("18.2", 0, np.float64(0.48387096774193544)),
    ("22.2", 3, np.complex128(complex(-0.15553096772612052, 0.24222513055971262))),
    ("22.3", 4, np.complex128(complex(-0.08823177618755645, 0.11764236825007526))),
    ("39.2", 0, np.complex128(complex(0.0, -0.9624236501192069))),
    ("46.3", 1, np.bool_(True)),
    ("52.1", 0, np.array([-1e-05, -1.0198])),
    ("52.4", 2, np.array([True, True])),
    ("72.5", 1, (np.float64(1.0), np.int64(2))),
    ("76.2", 2, np.float64(0.0)),
    ("9.1", 2, np.array([0.002039328187730998, 0.0006648956220036478])),
    (
        "1.1",
        1,
        np.array(
            [
                0.012223858615611195,
                0.03460972017673049,
                0.11192930780559647,
                0.4131075110456554,
                0.11192930780559647,
                0.03460972017673049,
                0.012223858615611195,
            ]
        ),
    ),
]


@needs_data
@pytest.mark.parametrize(("step", "index", "expected"), READ_BACK, ids=[r[0] for r in READ_BACK])
def test_patched_values_read_back_exactly(
    built: tuple[Path, vt.BuildReport], step: str, index: int, expected: Any
) -> None:
    with h5py.File(built[0], "r") as h5:
        assert _same(read_step_targets(h5, step, index + 1)[index], expected)


@needs_data
def test_tuple_targets_read_back_as_tuples(built: tuple[Path, vt.BuildReport]) -> None:
    with h5py.File(built[0], "r") as h5:
        power, profile = read_step_targets(h5, "43.3", 1)[0]
        assert isinstance(power, np.float64) and power == 85.08683611871655
        assert profile.shape == (100,) and profile.dtype == np.float64
        nhc = read_step_targets(h5, "79.2", 3)[2]
        assert [np.shape(v) for v in nhc] == [(), (2,), (2,), (2,)]
        assert _same(nhc[1], np.array([6.861174887684814, -0.8797664327428218]))


@needs_data
def test_every_literal_patch_reads_back(
    built: tuple[Path, vt.BuildReport], patches: vt.PatchSet
) -> None:
    """All 105 values of the 35 files, against the JSON decoded independently of the module."""
    expected: dict[tuple[str, int], Any] = {}
    for name in patches.files:
        patch = json.loads(
            (DATA / "targets" / name).read_text(),
            object_hook=lambda o: complex(*o["__complex__"]) if "__complex__" in o else o,
        )
        for step, body in [*patch.items(), *patch.get("targets", {}).items()]:
            if step[0].isdigit() and not (isinstance(body, dict) and "_transform" in body):
                items = enumerate(body) if isinstance(body, list) else body.items()
                expected.update({(step, int(k)): v for k, v in items if str(k).isdigit()})
    assert len(expected) == built[1].patched_tests == 105
    with h5py.File(built[0], "r") as h5:
        for (step, index), value in expected.items():
            got = read_step_targets(h5, step, index + 1)[index]
            n_vars = N_VARS.get(step, 1)
            split = n_vars > 1 and isinstance(value, list) and len(value) == n_vars
            parts = value if split else [value]
            want = tuple(np.asarray(p)[()] for p in parts)
            assert _same(got if n_vars > 1 else (got,), want), (step, index)


@needs_data
def test_transform_strict_cross_band(built: tuple[Path, vt.BuildReport]) -> None:
    spec = _raw("8.json")["targets"]["8.1"]
    with h5py.File(built[0], "r") as h5:
        got = read_step_targets(h5, "8.1", 4)
    for (mask, image_out), test in zip(got[:3], spec["tests"], strict=True):
        bandwidth, centre = test["bandwidth"], 400
        assert mask.shape == (800, 800) and mask.dtype == np.float64
        # the bandwidth frequency itself is masked on both axes, the next one passes
        assert mask[centre + bandwidth, centre + bandwidth + 1] == 0
        assert mask[centre - bandwidth - 1, centre + bandwidth + 1] == 1
        assert mask.sum() == (800 - 2 * bandwidth - 1) ** 2
        image = np.tile(np.array(test["matrix"], dtype=float), test["tile"])
        spectrum = np.fft.fftshift(np.fft.fft2(image)) * mask
        assert np.allclose(image_out, np.fft.ifft2(np.fft.ifftshift(spectrum)).real, atol=1e-12)
    assert got[3] == np.bool_(True)  # test4 is the original's


@needs_data
@needs_data
def test_transform_refuses_a_mask_layout_unlike_the_originals(
    tmp_path: Path, counts: dict[str, int]
) -> None:
    original = tmp_path / "test_data.h5"
    with h5py.File(original, "w") as h5:
        for number, bandwidth in enumerate((40, 40, 20), start=1):
            write_test_target(h5, "8.1", number, (_inclusive_mask(bandwidth, shift=1), 0))
        write_test_target(h5, "8.1", 4, True)
    patch = vt.PatchSet()
    patch.add("8.json", _raw("8.json"))
    with pytest.raises(ArtifactError, match=r"8.1 test1: the recomputed mask differs"):
        vt.build_verified(original, tmp_path / "out.h5", patch, {"8.1": 4})


def test_transform_split_operator(built: tuple[Path, vt.BuildReport]) -> None:
    spec = _raw("40.json")["targets"]["40.3"]
    with h5py.File(built[0], "r") as h5:
        got = read_step_targets(h5, "40.3", 3)
    assert [u.shape for u in got] == [(42,), (14,), (22,)]
    for u, first in zip(got, spec["verify_first3"], strict=True):
        assert np.allclose(u[:3], first, rtol=0, atol=1e-5)


def test_transform_self_check_fails_loudly() -> None:
    spec = {
        "_type": "split_operator_physical",
        "configs": [{"CFL": 0.2, "T": 0.1, "dt": 0.01, "alpha": 0.1}],
        "verify_first3": [[-0.5, -0.5, -0.5]],
    }
    with pytest.raises(ArtifactError, match=r"40.3 test1: the recomputed target"):
        vt._split_operator(spec, None)


@needs_data
def test_build_counts_and_partial_record(
    built: tuple[Path, vt.BuildReport], counts: dict[str, int]
) -> None:
    out, report = built
    assert report.transformed_tests == 6  # 8.1 and 40.3, three tests each
    note = vt.partial_note(out)
    assert note is not None and note["missing_patches"] == MISSING_HERE
    assert sorted(note["unapplied_transforms"], key=vt._step_key) == NEEDS_P13_REF
    assert "p13_ref.py" in note["unapplied_transforms"]["13.9"]
    assert "is not the official test_data.h5" in note["original"]
    # the tests of the steps whose transforms were not applied, and only those, lack a target
    assert note["lacking_tests"] == [
        f"{step}/test{n}" for step in NEEDS_P13_REF for n in range(1, counts[step] + 1)
    ]
    assert report.md5 is None
    assert "PARTIAL, not the release (md5 not claimed)" in report.message
    assert "12.json, 28.json, 31.json, 37.json" in report.message


@needs_data
def test_surplus_and_unbuildable_groups_removed(
    built: tuple[Path, vt.BuildReport], counts: dict[str, int]
) -> None:
    out, report = built
    with h5py.File(out, "r") as h5:
        for step, extra in SURPLUS.items():
            assert sorted(h5[step]) == [f"test{n}" for n in range(1, counts[step] + 1)]
            assert {f"{step}/test{counts[step] + n}" for n in range(1, extra + 1)} <= set(
                report.dropped_groups
            )
        assert len(h5["72.6"]) == 0  # no tests of its own in Verified
        assert len(h5["13.6"]) == 2  # pre-supplied steps are left alone
        assert len(h5["1.1"]) == 3 and len(h5["99.1"]) == 3  # steps Verified does not list
        for step in NEEDS_P13_REF:
            assert step not in h5
        assert len(h5["22.3"]) == 5


@needs_data
def test_untouched_data_unchanged_bitwise(
    built: tuple[Path, vt.BuildReport], original: Path, patches: vt.PatchSet
) -> None:
    out, report = built
    changed = {f"{s}/test{i + 1}" for s, tests in patches.values.items() for i in tests}
    changed |= {f"{s}/test{n}" for s in ("8.1", "40.3") for n in (1, 2, 3)}
    removed = set(report.dropped_groups)
    compared = 0
    with h5py.File(original, "r") as before, h5py.File(out, "r") as after:

        def check(name: str, obj: h5py.HLObject) -> None:
            nonlocal compared
            group = "/".join(name.split("/")[:2])
            if not isinstance(obj, h5py.Dataset) or group in changed | removed:
                return
            if name.split("/")[0] in NEEDS_P13_REF:
                return
            new = after[name]
            assert new.dtype == obj.dtype and new.shape == obj.shape, name
            assert np.asarray(new[()]).tobytes() == np.asarray(obj[()]).tobytes(), name
            compared += 1

        before.visititems(check)
    assert compared > 500


@needs_data
def test_build_refuses_a_partial_result_unless_asked(
    tmp_path: Path, original: Path, patches: vt.PatchSet, counts: dict[str, int]
) -> None:
    out = tmp_path / "out.h5"
    with pytest.raises(ArtifactError) as caught:
        vt.build_verified(original, out, patches, counts)
    message = str(caught.value)
    assert "\n" not in message
    assert "patch files missing: 12.json, 28.json, 31.json, 37.json" in message
    assert "13.9, 13.10, 13.11, 13.12, 13.13, 13.15 not applied" in message
    assert "--allow-missing" in message and "scievals data fetch --dataset verified" in message
    assert list(tmp_path.iterdir()) == []


@needs_data
def test_build_refuses_a_value_that_does_not_fit(tmp_path: Path, counts: dict[str, int]) -> None:
    original = tmp_path / "test_data.h5"
    with h5py.File(original, "w") as h5:
        write_test_target(h5, "43.3", 1, 1.0)
    patch = vt.PatchSet()
    patch.add("43.json", {"43.3": {"0": [1.0, [2.0, 3.0]]}})
    with pytest.raises(ArtifactError, match=r"43.3 test1: the patched value does not fit"):
        vt.build_verified(original, tmp_path / "out.h5", patch, {"43.3": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["test_data.h5"]


@needs_data
def test_build_refuses_lacking_targets(tmp_path: Path) -> None:
    original = tmp_path / "test_data.h5"
    with h5py.File(original, "w") as h5:
        write_test_target(h5, "9.1", 1, 1.0)
    with pytest.raises(ArtifactError, match=r"no target for 9.1/test2, 9.1/test3 \(the orig"):
        vt.build_verified(original, tmp_path / "out.h5", vt.PatchSet(), {"9.1": 3})
    with pytest.raises(ArtifactError, match=r"9.1/test9 and 12 more \(the original file lacks"):
        vt.build_verified(original, tmp_path / "out.h5", vt.PatchSet(), {"9.1": 21})


@pytest.fixture
def as_official(monkeypatch: pytest.MonkeyPatch, original: Path) -> None:
    """Treat the synthetic original as the official file."""
    monkeypatch.setattr(targets, "OFFICIAL_SHA256", targets.sha256_file(original))


@needs_data
def test_official_inputs_md5_mismatch_and_match(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    original: Path,
    counts: dict[str, int],
    as_official: None,
) -> None:
    """Full inputs: a differing md5 is an error (nothing installed) unless asked; the same
    inputs give the same bytes, so a build matching the expected md5 is claimed as the release."""
    full = vt.PatchSet()
    for name in sorted(p.name for p in (DATA / "targets").iterdir()):
        if name != "13.json":  # its transforms need code the patches do not include
            full.add(name, _raw(name))
    out = tmp_path / "cleaned.h5"
    with pytest.raises(
        ArtifactError, match=r"differ from the release \(md5 [0-9a-f]{32}, expected"
    ):
        vt.build_verified(original, out, full, counts)
    assert not out.exists()
    kept = vt.build_verified(original, out, full, counts, allow_missing=True)
    assert vt.partial_note(out) == {"md5": f"md5 {kept.md5} differs from the release's"}

    monkeypatch.setattr(vt, "RELEASE_MD5", kept.md5)
    again = vt.build_verified(original, tmp_path / "again.h5", full, counts)
    assert again.message.endswith(f"md5 {kept.md5} matches the release")
    assert vt.md5_file(tmp_path / "again.h5") == kept.md5
    assert vt.partial_note(tmp_path / "again.h5") is None


# ---- fetching and finding ----------------------------------------------------------------------


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the Verified targets are cached, moved to a temporary folder (nothing else is)."""
    folder = tmp_path / "cache"
    folder.mkdir()
    monkeypatch.setattr(vt, "cached_path", lambda: folder / vt.FILE_NAME)
    monkeypatch.delenv(vt.ENV_VERIFIED_H5, raising=False)
    return folder


def test_fetch_unreachable_is_one_clear_line(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vt, "RELEASE_URL", "http://127.0.0.1:9/test_data_cleaned.h5")
    with pytest.raises(ArtifactError) as caught:
        vt.fetch_release(timeout=5)
    message = str(caught.value)
    assert "\n" not in message and "cannot download http://127.0.0.1:9/" in message
    assert "scievals data build-verified --h5 test_data.h5" in message
    assert not (cache / vt.FILE_NAME).exists()


def test_fetch_unreachable_through_the_cli(
    cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(vt, "RELEASE_URL", "http://127.0.0.1:9/test_data_cleaned.h5")
    assert main(["data", "fetch", "--dataset", "verified", "--timeout", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("scievals: error: SciCode-Verified targets:")


def test_fetch_verifies_md5_and_replaces_a_local_build(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asset = tmp_path / "asset.h5"
    asset.write_bytes(b"release bytes")
    monkeypatch.setattr(vt, "RELEASE_URL", asset.as_uri())
    with pytest.raises(ArtifactError, match=r"md5 [0-9a-f]{32}, expected 2b41a7df"):
        vt.fetch_release()
    assert list(cache.iterdir()) == []

    monkeypatch.setattr(vt, "RELEASE_MD5", hashlib.md5(b"release bytes").hexdigest())
    (cache / vt.FILE_NAME).write_bytes(b"a local build")
    assert vt.fetch_release() == cache / vt.FILE_NAME
    assert (cache / vt.FILE_NAME).read_bytes() == b"release bytes"
    assert sorted(p.name for p in cache.iterdir()) == [vt.FILE_NAME]


def test_lookup_order(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert vt.verified_h5(None) is None
    cached = cache / vt.FILE_NAME
    cached.write_bytes(b"x")
    assert vt.verified_h5(None) == cached
    from_env = tmp_path / "env.h5"
    from_env.write_bytes(b"x")
    monkeypatch.setenv(vt.ENV_VERIFIED_H5, str(from_env))
    assert vt.verified_h5(None) == from_env
    assert vt.verified_h5(str(cached)) == cached
    with pytest.raises(ArtifactError, match="--h5 nowhere.h5: no such file"):
        vt.verified_h5("nowhere.h5")


def test_no_verified_h5_message_names_every_way() -> None:
    assert "\n" not in vt.NO_VERIFIED_H5
    for way in (
        "scievals data fetch --dataset verified",
        "scievals data build-verified --h5 test_data.h5",
        "--h5 PATH",
        vt.ENV_VERIFIED_H5,
    ):
        assert way in vt.NO_VERIFIED_H5


# ---- the commands ------------------------------------------------------------------------------


@needs_data
def test_cli_build_and_status(
    cache: Path, tmp_path: Path, original: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["data", "build-verified", "--h5", str(original), "--source", str(DATA)]
    assert main(args) == 2
    assert "--allow-missing" in capsys.readouterr().err
    assert not (cache / vt.FILE_NAME).exists()

    assert main([*args, "--allow-missing"]) == 0
    err = capsys.readouterr().err
    assert f"targets at {cache / vt.FILE_NAME}: 105 tests patched, 6 recomputed" in err
    assert "PARTIAL" in err

    out = tmp_path / "elsewhere.h5"
    assert main([*args, "--allow-missing", "--out", str(out)]) == 0
    assert vt.partial_note(out) == vt.partial_note(cache / vt.FILE_NAME)
    capsys.readouterr()

    assert main(["data", "status", "--verify"]) == 0
    line = next(
        ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("SciCode-Verified")
    )
    assert str(cache / vt.FILE_NAME) in line
    assert "a PARTIAL local build: patch files missing: 12.json" in line
    assert line.endswith("md5 differs from the release)")


def test_status_line_for_a_file_that_is_not_hdf5(tmp_path: Path) -> None:
    broken = tmp_path / vt.FILE_NAME
    broken.write_bytes(b"<html>rate limited</html>")
    assert vt.describe_verified(broken, verify=True).endswith(
        "(25 bytes, NOT a readable HDF5 file)"
    )


def test_cli_status_without_verified_targets(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["data", "status"]) == 0
    assert "SciCode-Verified test_data_cleaned.h5: absent" in capsys.readouterr().out
