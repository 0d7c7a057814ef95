"""``scievals data fetch``: the official test_data.h5 from the pinned Hugging Face mirror first,
Google Drive second, each verified by sha256; one line naming both when neither gives it.

Local HTTP servers stand in for both hosts (their URLs replaced through the environment, as a
user with a local copy would): one that answers, one that is down, one that errs, and one that
serves what Drive serves once its sharing quota is spent (a page, not the file).
"""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from timing import HANG_S

from scievals.scicode.data import targets
from scievals.scicode.data.targets import ENV_DRIVE_URL, ENV_MIRROR_URL, fetch_official

SCIEVALS = str(Path(sys.executable).with_name("scievals"))
FILE = bytes(range(256)) * 4096  # 1 MiB standing in for test_data.h5
SHA256 = hashlib.sha256(FILE).hexdigest()
QUOTA_PAGE = b"<html>Too many users have viewed or downloaded this file recently.</html>"


class Host:
    """A local server answering every GET with ``status`` and ``body``; what it was asked."""

    def __init__(self, status: int, body: bytes) -> None:
        self.asked: list[str] = []
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                host.asked.append(self.path)
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/test_data.h5"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def down_url() -> str:
    """A URL nothing listens at (a port just freed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/test_data.h5"


@pytest.fixture
def hosts() -> Iterator[dict[str, Host]]:
    made = {
        "file": Host(200, FILE),
        "quota": Host(200, QUOTA_PAGE),
        "error": Host(503, b"unavailable"),
    }
    yield made
    for host in made.values():
        host.close()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SCIEVALS_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "scicode"


def test_the_pinned_mirror_comes_first_then_drive() -> None:
    (mirror, first), (drive, second) = targets.official_hosts()
    assert first == (
        "https://huggingface.co/datasets/xantheocracy/scicode-mirror/resolve/"
        "2f903a64a1c4eb62c7c649b0caf7ecb2c0217590/test_data.h5"
    )
    assert mirror == "the Hugging Face mirror xantheocracy/scicode-mirror@2f903a6"
    assert (drive, second) == ("Google Drive", targets.DRIVE_URL)
    assert "drive.usercontent.google.com" in second
    assert targets.OFFICIAL_SHA256 == (
        "48b0272a88b17dbd29777c217e1b4fb2b019b92e11cc2add847409db9541b890"
    )


@pytest.mark.parametrize(
    ("mirror", "drive", "served_by"),
    [
        ("file", "quota", "mirror"),  # Drive is never asked
        ("error", "file", "drive"),
        ("quota", "file", "drive"),  # the mirror's bytes are not the file: Drive's are
        ("down", "file", "drive"),
    ],
)
def test_the_first_host_that_gives_the_verified_file_serves_it(
    hosts: dict[str, Host], cache: Path, mirror: str, drive: str, served_by: str
) -> None:
    urls = {"mirror": hosts[mirror].url if mirror != "down" else down_url()}
    urls["drive"] = hosts[drive].url
    path = fetch_official(5, [("mirror", urls["mirror"]), ("Google Drive", urls["drive"])], SHA256)
    assert path == cache / "test_data.h5" and path.read_bytes() == FILE
    assert sorted(p.name for p in cache.iterdir()) == ["test_data.h5"]
    assert bool(hosts[drive].asked) == (served_by == "drive")


def test_neither_host_is_one_line_naming_both(hosts: dict[str, Host], tmp_path: Path) -> None:
    """The real command, each host's URL replaced through the environment: the file checked
    against the official sha256, which neither host's bytes have."""
    env = {
        "SCIEVALS_CACHE": str(tmp_path / "cache"),
        ENV_MIRROR_URL: down_url(),
        ENV_DRIVE_URL: hosts["quota"].url,
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run(
        [SCIEVALS, "data", "fetch", "--timeout", "5"],
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "scievals: error: test_data.h5 could not be fetched (the Hugging Face mirror "
        "xantheocracy/scicode-mirror@2f903a6: <urlopen error [Errno 111] Connection refused>; "
        "Google Drive: it served another file (its sha256 differs)): download it elsewhere "
        "(the SciCode README links it) and pass --h5 PATH or set SCIEVALS_SCICODE_H5"
    ]
    assert hosts["quota"].asked == ["/test_data.h5"]
    assert list((tmp_path / "cache" / "scicode").iterdir()) == []  # nothing half-fetched kept


def test_an_erring_host_is_named_with_its_answer(hosts: dict[str, Host], cache: Path) -> None:
    with pytest.raises(targets.ArtifactError) as failed:
        fetch_official(5, [("mirror", hosts["error"].url), ("Google Drive", down_url())], SHA256)
    assert str(failed.value).startswith(
        "test_data.h5 could not be fetched (mirror: HTTP Error 503: Service Unavailable; "
        "Google Drive: <urlopen error [Errno 111] Connection refused>)"
    )
