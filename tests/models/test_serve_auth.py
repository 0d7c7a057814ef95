"""``scievals serve local`` with an API key, through the real command on 127.0.0.1.

The server runs under ``timeout`` so that it stops by itself whatever the test does; every
request is bounded. Addresses other machines can reach are warned about on stderr, more strongly
without a key; those checks use an address this machine does not have, so nothing is exposed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from timing import HANG_S

from scievals.models.cli import API_KEY_ENV, exposure_warning, is_loopback

from .test_local_eval import HAVE_LLAMA, MODEL, free_port

SCIEVALS = Path(sys.executable).with_name("scievals")
KEY = "s3cret-key"
# The server exits by itself after this, whatever happens here: its start and the module's
# requests each end within the hang bound.
SERVER_LIFETIME_S = 4 * HANG_S
UNROUTABLE = "192.0.2.1"  # TEST-NET-1: not this machine's, so binding fails and nothing listens

needs_llama = pytest.mark.skipif(
    not HAVE_LLAMA and not os.environ.get("CI"),
    reason="llama-cpp-python is not installed (scripts/build_llama.sh builds it)",
)


def _request(url: str, auth: str | None = None, body: dict | None = None) -> tuple[int, dict, str]:
    """(status, headers, body text) of one bounded request."""
    headers = {"Content-Type": "application/json"}
    if auth is not None:
        headers["Authorization"] = auth
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=HANG_S) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A keyed server for the test model on a free loopback port (the key from the environment)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("serve") / "server.log"
    env = {**os.environ, API_KEY_ENV: KEY}
    argv = [
        "timeout",
        f"{SERVER_LIFETIME_S:.0f}",
        str(SCIEVALS),
        "serve",
        "local",
        "--model",
        MODEL,
    ]
    argv += ["--port", str(port), "--n-threads", "1", "--n-ctx", "512"]
    with open(log, "wb") as fh:
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + HANG_S
        while _status(f"{base}/v1/models", f"Bearer {KEY}") != 200:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"server not ready:\n{log.read_text()}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    printed = log.read_text()
    assert "(API key required)" in printed and KEY not in printed  # the key is never echoed
    assert f"LOCAL_API_KEY=${API_KEY_ENV}" in printed and "WARNING" not in printed


def _status(url: str, auth: str | None) -> int | None:
    try:
        return _request(url, auth)[0]
    except OSError:
        return None


@needs_llama
@pytest.mark.slow
@pytest.mark.parametrize(
    "auth",
    [None, "Bearer wrong", f"Bearer {KEY}x", f"Basic {KEY}", KEY, "Bearer ", f"Bearer{KEY}"],
)
@pytest.mark.parametrize("path", ["/v1/models", "/docs", "/openapi.json"])
def test_requests_without_the_key_get_401(server: str, auth: str | None, path: str) -> None:
    status, headers, body = _request(server + path, auth)
    assert status == 401
    assert headers.get("www-authenticate") == "Bearer"
    assert json.loads(body)["error"]["code"] == "invalid_api_key"


@needs_llama
@pytest.mark.slow
def test_requests_with_the_key_are_served(server: str) -> None:
    for auth in (f"Bearer {KEY}", f"bearer {KEY}"):  # the scheme is case-insensitive
        status, _, body = _request(f"{server}/v1/models", auth)
        assert status == 200 and json.loads(body)["data"][0]["id"] == MODEL
    chat = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4}
    status, _, body = _request(f"{server}/v1/chat/completions", f"Bearer {KEY}", chat)
    assert status == 200 and json.loads(body)["choices"][0]["message"]["role"] == "assistant"
    status, _, _ = _request(f"{server}/v1/chat/completions", None, chat)
    assert status == 401


@needs_llama
@pytest.mark.slow
@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (None, f"WARNING: listening on {UNROUTABLE} with no API key: anyone who can reach"),
        (KEY, f"warning: listening on {UNROUTABLE}, reachable from other machines"),
    ],
)
def test_an_exposed_address_is_warned_about(key: str | None, expected: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != API_KEY_ENV}
    argv = ["timeout", f"{HANG_S:.0f}", str(SCIEVALS), "serve", "local", "--model", MODEL, "--host"]
    argv += [UNROUTABLE, "--port", str(free_port()), "--n-threads", "1", "--n-ctx", "512"]
    argv += ["--api-key", key] if key else []
    done = subprocess.run(argv, capture_output=True, text=True, env=env)  # `timeout` ends it
    assert done.returncode != 0  # the address is not this machine's: nothing ever listened
    assert done.stderr.splitlines()[0].startswith("scievals serve: ")
    assert expected in done.stderr.splitlines()[0]
    assert "Traceback" not in done.stderr


def test_an_empty_key_is_one_line_and_exit_2() -> None:
    env = {**os.environ, API_KEY_ENV: " "}
    argv = ["timeout", f"{HANG_S:.0f}", str(SCIEVALS), "serve", "local", "--port", str(free_port())]
    done = subprocess.run(argv, capture_output=True, text=True, env=env)  # `timeout` ends it
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"scievals: error: the API key is empty: give one, or unset {API_KEY_ENV}"
    ]


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("localhost", True),
        ("::1", True),
        ("0.0.0.0", False),
        ("::", False),
        (UNROUTABLE, False),
        ("no-such-host.invalid", False),
        ("", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    assert (exposure_warning(host, None) is None) is loopback
    assert (exposure_warning(host, KEY) is None) is loopback
