#!/usr/bin/python3
"""A small Chrome DevTools-protocol driver for the browser tests (headless Chromium).

    import cdp
    browser = cdp.start()                      # Debian's chromium --headless=new
    browser.open("http://127.0.0.1:8080/watch/live/x")
    browser.wait_for("window.livelineStats && livelineStats.firstFrameMs != null", 10)
    stats = browser.evaluate("livelineStats")  # JSON-able values come back as Python values
    browser.screenshot("/tmp/watch.png")
    r, g, b = cdp.png_pixel("/tmp/watch.png", 100, 100)
    browser.close()

Only the standard library and Debian's python3-websocket (the `websocket` module) are used,
so run it with /usr/bin/python3 (a pyenv or venv python may not see python3-websocket).
The browser is started with its own throw-away profile on a free DevTools port
(--remote-debugging-port=0; the port is read back from the profile's DevToolsActivePort),
and the page's console messages and uncaught exceptions are kept in `Browser.console`
so a failing test can print what the page said.
"""

import base64
import json
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import urllib.request
import zlib

import websocket

#: Flags every test browser gets: headless, no first-run UI, sound and video allowed to start
#: without a click (the watch page plays audio through Web Audio on load), a fixed window.
DEFAULT_ARGS = [
    "--headless=new",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--mute-audio",
    "--autoplay-policy=no-user-gesture-required",
    "--window-size=1280,720",
    "--hide-scrollbars",
]


class CDPError(Exception):
    """A DevTools command failed, the page threw, or the browser went away."""


def chromium_path():
    """The Chromium binary: $CHROMIUM, else the first of chromium / chromium-browser /
    google-chrome on PATH; None when there is none (callers skip their test then)."""
    env = os.environ.get("CHROMIUM")
    if env:
        return env
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def start(args=(), binary=None, timeout=20.0):
    """Starts a headless Chromium with DEFAULT_ARGS plus `args` and returns a Browser
    attached to its first tab. Raises CDPError if it does not come up within `timeout` s.
    Chromium refuses to run as root with its sandbox, and a CI container may not let it
    make the namespaces its sandbox needs: then it runs without (the tests load only pages
    of a local server)."""
    binary = binary or chromium_path()
    if binary is None:
        raise CDPError("no chromium found (install Debian's chromium, or set CHROMIUM)")
    args = list(args)
    if os.geteuid() == 0:
        return _start(binary, args + ["--no-sandbox"], timeout)
    try:
        return _start(binary, args, timeout)
    except CDPError as e:
        if "sandbox" not in str(e).lower():
            raise
        return _start(binary, args + ["--no-sandbox"], timeout)


def _start(binary, args, timeout):
    profile = tempfile.mkdtemp(prefix="liveline-chromium-")
    argv = [binary, *DEFAULT_ARGS, "--remote-debugging-port=0", f"--user-data-dir={profile}"]
    argv += args
    argv.append("about:blank")
    log = open(os.path.join(profile, "chromium.log"), "wb")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        port = _wait_for_port(proc, profile, timeout)
        page = _wait_for_page(port, timeout)
        return Browser(proc, profile, port, page, log)
    except BaseException:
        _stop(proc)
        log.close()
        shutil.rmtree(profile, ignore_errors=True)
        raise


def _wait_for_port(proc, profile, timeout):
    active = os.path.join(profile, "DevToolsActivePort")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            with open(os.path.join(profile, "chromium.log"), "rb") as f:
                tail = f.read()[-2000:].decode(errors="replace")
            raise CDPError(f"chromium exited with {proc.returncode}:\n{tail}")
        try:
            with open(active) as f:
                first = f.readline().strip()
            if first:
                return int(first)
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    raise CDPError(f"chromium did not open its DevTools port within {timeout} s")


def _wait_for_page(port, timeout):
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                targets = json.load(r)
            for t in targets:
                if t.get("type") == "page" and t.get("webSocketDebuggerUrl"):
                    return t["webSocketDebuggerUrl"]
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise CDPError("chromium has no page to attach to")
        time.sleep(0.05)


def _stop(proc):
    """Ends the browser and every process it started: they share its process group
    (start_new_session), so none is left behind if a wrapper script did not exec."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue


class Browser:
    """One headless Chromium and its first tab, driven over the DevTools protocol.
    Not thread-safe: one test thread drives it."""

    def __init__(self, proc, profile, port, page_ws_url, log):
        self.proc = proc
        self.port = port
        self._profile = profile
        self._log = log
        self._ws = websocket.create_connection(page_ws_url, timeout=30, suppress_origin=True,
                                               enable_multithread=False)
        self._next_id = 0
        #: What the page printed and the browser said about it: "console.log: ...",
        #: "exception: ...", "log.error: ..." lines, in order.
        self.console = []
        self.call("Runtime.enable")
        self.call("Page.enable")
        self.call("Log.enable")  # what the browser itself says: policy refusals, failed loads

    # -- the protocol -------------------------------------------------------------------------

    def call(self, method, params=None, timeout=30.0):
        """Sends one DevTools command and returns its result (a dict); raises CDPError with the
        browser's message when it answers with an error."""
        self._next_id += 1
        ident = self._next_id
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError(f"{method}: no answer within {timeout} s")
            self._ws.settimeout(left)
            try:
                raw = self._ws.recv()
            except websocket.WebSocketTimeoutException:
                continue
            except (websocket.WebSocketException, OSError) as e:
                raise CDPError(f"{method}: the browser connection closed ({e})") from None
            message = json.loads(raw)
            if message.get("id") == ident:
                if "error" in message:
                    raise CDPError(f"{method}: {message['error'].get('message')}")
                return message.get("result", {})
            self._event(message)

    def _event(self, message):
        method = message.get("method")
        params = message.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(_remote_text(a) for a in params.get("args", []))
            self.console.append(f"console.{params.get('type')}: {text}")
        elif method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            text = d.get("exception", {}).get("description") or d.get("text")
            self.console.append(f"exception: {text}")
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            self.console.append(f"log.{entry.get('level')}: {entry.get('text')} {entry.get('url') or ''}".rstrip())
        if len(self.console) > 500:  # bounded: a chatty page keeps its newest lines
            del self.console[:100]

    # -- what tests use -----------------------------------------------------------------------

    def open(self, url, timeout=20.0):
        """Navigates the tab to `url` and waits until its document has loaded."""
        result = self.call("Page.navigate", {"url": url}, timeout)
        if result.get("errorText"):
            raise CDPError(f"open {url}: {result['errorText']}")
        self.wait_for("document.readyState === 'complete'", timeout)

    def evaluate(self, js, timeout=30.0):
        """Evaluates the expression `js` in the page (a promise is awaited) and returns its
        value as Python (JSON) values; raises CDPError with the page's message if it throws."""
        result = self.call("Runtime.evaluate", {
            "expression": js, "returnByValue": True, "awaitPromise": True,
        }, timeout)
        if "exceptionDetails" in result:
            d = result["exceptionDetails"]
            text = d.get("exception", {}).get("description") or d.get("text")
            raise CDPError(f"evaluate {js!r}: {text}")
        return result.get("result", {}).get("value")

    def wait_for(self, js_condition, timeout=10.0, interval=0.1):
        """Evaluates `js_condition` every `interval` s until it is truthy and returns its value;
        raises TimeoutError (with the last value and the page's last console lines) after
        `timeout` s. An exception in the condition counts as not yet true."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            try:
                last = self.evaluate(js_condition)
                if last:
                    return last
            except CDPError as e:
                last = str(e)
            if time.monotonic() > deadline:
                tail = "\n  ".join(self.console[-15:])
                raise TimeoutError(f"waited {timeout} s for {js_condition!r}; last value "
                                   f"{last!r}; the page said:\n  {tail}")
            time.sleep(interval)

    def screenshot(self, path):
        """Writes a PNG of the tab's viewport to `path` and returns `path`."""
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def close(self):
        """Ends the browser and removes its profile. Safe to call twice."""
        try:
            self._ws.close()
        except Exception:  # the browser may already be gone; closing is best effort
            pass
        _stop(self.proc)
        self._log.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _remote_text(obj):
    if "value" in obj:
        return str(obj["value"])
    return obj.get("description") or obj.get("type", "?")


# -- reading the screenshot back (no PIL in a bare CI image) ------------------------------------

def png_read(path):
    """Decodes an 8-bit RGB or RGBA PNG (what Chromium writes) into
    (width, height, channels, rows) with rows a list of bytes, one per line."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    pos, idat, header = 8, bytearray(), None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    if header is None:
        raise ValueError(f"{path} has no IHDR")
    width, height, depth, color, _, _, interlace = header
    channels = {2: 3, 6: 4}.get(color)
    if depth != 8 or channels is None or interlace != 0:
        raise ValueError(f"{path}: only 8-bit RGB/RGBA non-interlaced PNGs are read")
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def png_pixel(path, x, y):
    """The (r, g, b) of pixel (x, y) in the PNG at `path`."""
    width, height, channels, rows = png_read(path)
    if not (0 <= x < width and 0 <= y < height):
        raise ValueError(f"pixel ({x}, {y}) is outside the {width}x{height} picture")
    i = x * channels
    return tuple(rows[y][i:i + 3])
