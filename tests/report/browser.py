"""A headless Chromium driven over the DevTools protocol (websocket-client), for tests that read
a page as a person sees it: laid out at a given width, scripts run, images decoded, console read.

``Browser.open`` loads a file and returns the console errors, exceptions and failed loads it
caused; ``evaluate`` runs JavaScript in the page and returns its value; ``screenshot`` saves a PNG.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import websocket
from timing import HANG_S

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def executable() -> str | None:
    return next((p for c in CANDIDATES if (p := shutil.which(c))), None)


class Browser:
    """One Chromium process with one page, ``width`` x ``height`` CSS pixels."""

    def __init__(self, width: int = 1400, height: int = 900) -> None:
        binary = executable()
        if binary is None:
            raise RuntimeError("no chromium on PATH (scripts/setup_chromium.sh installs it)")
        self._profile = tempfile.mkdtemp(prefix="scievals-chromium-")
        self._proc = subprocess.Popen(
            [
                binary,
                "--headless=new",
                "--no-sandbox",  # tests run as root in CI
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-port=0",
                f"--user-data-dir={self._profile}",
                f"--window-size={width},{height}",
                "--allow-file-access-from-files",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._ids = itertools.count(1)
        self._events: list[dict[str, Any]] = []
        self._ws = websocket.create_connection(self._page_socket(), timeout=HANG_S)
        for domain in ("Page", "Runtime", "Log"):
            self._call(f"{domain}.enable")
        self._call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def _page_socket(self) -> str:
        """The page target's websocket, from the port Chromium writes into its profile."""
        port_file = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + HANG_S
        while not port_file.exists() or not port_file.read_text().strip():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.05)
        port = port_file.read_text().split()[0]
        browser = websocket.create_connection(
            f"ws://127.0.0.1:{port}{port_file.read_text().split()[1]}", timeout=HANG_S
        )
        browser.send(json.dumps({"id": 1, "method": "Target.getTargets"}))
        targets = json.loads(browser.recv())["result"]["targetInfos"]
        browser.close()
        page = next(t for t in targets if t["type"] == "page")
        return f"ws://127.0.0.1:{port}/devtools/page/{page['targetId']}"

    def _call(self, method: str, **params: Any) -> dict[str, Any]:
        ident = next(self._ids)
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._events.append(message)

    def _wait(self, event: str) -> None:
        while not any(e.get("method") == event for e in self._events):
            self._events.append(json.loads(self._ws.recv()))

    def open(self, path: Path) -> list[str]:
        """Load ``path`` and wait for its load event; the problems it reported, as text."""
        self._events.clear()
        self._call("Page.navigate", url=path.resolve().as_uri())
        self._wait("Page.loadEventFired")
        self.evaluate("new Promise(r => requestAnimationFrame(() => setTimeout(r, 50)))")
        problems = []
        for e in self._events:
            params = e.get("params", {})
            if e.get("method") == "Runtime.exceptionThrown":
                problems.append(params["exceptionDetails"].get("text", "exception"))
            elif e.get("method") == "Runtime.consoleAPICalled" and params["type"] in (
                "error",
                "assert",
                "warning",
            ):
                problems.append(" ".join(str(a.get("value", "")) for a in params["args"]))
            elif e.get("method") == "Log.entryAdded" and params["entry"]["level"] in (
                "error",
                "warning",
            ):
                problems.append(params["entry"]["text"])
        return problems

    def evaluate(self, expression: str) -> Any:
        result = self._call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:60]}...: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> None:
        data = self._call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        self._ws.close()
        self._proc.terminate()
        self._proc.wait(timeout=HANG_S)
        shutil.rmtree(self._profile, ignore_errors=True)
