"""A headless Chromium driven through the DevTools protocol over its pipe (no extra package).

``chromium --remote-debugging-pipe`` reads protocol commands from file descriptor 3 and writes replies
and events to descriptor 4, each message a JSON object ended by a NUL byte. :class:`Chromium` opens a
page, evaluates script in it, clicks and types as a person would (real input events at screen
coordinates, so a page's own handlers run) and takes screenshots.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

#: flags that keep a test browser from reaching the network or doing work of its own
QUIET_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars")


def find_chromium() -> str | None:
    """The path of a Chromium binary on this machine, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class BrowserError(RuntimeError):
    """The browser replied with an error, or did not reply in time."""


class Chromium:
    """One headless browser with one page, ``width`` x ``height`` CSS pixels (use as a context manager)."""

    def __init__(self, binary: str, width: int = 1400, height: int = 900, timeout_s: float = 60.0) -> None:
        self.timeout_s = timeout_s
        self._profile = tempfile.mkdtemp(prefix="chromium-profile-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def onto_3_and_4() -> None:                    # in the child, before exec: the protocol's descriptors
            high_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)   # out of the way of 3 and 4 first
            high_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self._proc = subprocess.Popen(
            [binary, *QUIET_FLAGS, "--remote-debugging-pipe", f"--user-data-dir={self._profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=onto_3_and_4, pass_fds=(3, 4))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        self._page = ""                                 # the protocol's id of the attached page
        try:
            target = self.send("Target.createTarget", {"url": "about:blank"}, to_page=False)["targetId"]
            self._page = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                   to_page=False)["sessionId"]
            self.send("Page.enable")
            self.send("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        except BaseException:
            self.close()                                # no browser or profile left behind
            raise

    def __enter__(self) -> "Chromium":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the browser and remove its profile."""
        try:
            self.send("Browser.close", to_page=False)
        except (BrowserError, OSError):
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def send(self, method: str, params: dict[str, Any] | None = None, to_page: bool = True) -> dict[str, Any]:
        """Send one protocol command (to the page, else to the browser) and return its result (events that
        arrive meanwhile are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if to_page and self._page:
            message["sessionId"] = self._page
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def wait_for_event(self, method: str) -> dict[str, Any]:
        """The first event ``method`` received since the last wait (waiting for it if need be)."""
        while True:
            for i, event in enumerate(self._events):
                if event.get("method") == method:
                    del self._events[: i + 1]
                    return event.get("params", {})
            self._events.append(self._receive())

    def open(self, url: str) -> None:
        """Load ``url`` and wait until its load event (scripts have run)."""
        self._events.clear()
        self.send("Page.navigate", {"url": url})
        self.wait_for_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable values)."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """Click the middle of the first element matching the CSS ``selector`` with the mouse."""
        box = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                            " if (!e) return null; e.scrollIntoView({block: 'center'});"
                            " const r = e.getBoundingClientRect();"
                            " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        if box is None:
            raise BrowserError(f"no element matches {selector!r}")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left",
                                                   "clickCount": 0 if kind == "mouseMoved" else 1})

    def type_text(self, text: str) -> None:
        """Type ``text`` into the focused element (one input event, as a paste or an IME would)."""
        self.send("Input.insertText", {"text": text})

    def screenshot(self, path: Path) -> None:
        """Save the visible page as a PNG."""
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        Path(path).write_bytes(base64.b64decode(data))

    def _receive(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout_s
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise BrowserError(f"no reply from the browser within {self.timeout_s} s")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise BrowserError("the browser closed its protocol pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)
