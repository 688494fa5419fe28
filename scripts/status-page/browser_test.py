"""The status page as a person sees it: a real gateway, a real Chromium, a real replication.

Starts `edge-gateway serve` on loopback with a TLS listener and a user, opens the ops page in headless Chromium
(driven over the DevTools protocol on a pipe, so the page stays open and its own script does the refreshing),
then replicates from a second data directory with `edge-gateway replicate --pairing` and waits for the open
page to show the connection, its user and counts, and the store's new sequence; then for the connection to
close. Takes phone and desktop screenshots, decodes the QR code from the phone one with zxing-cpp and checks
that it is the pairing payload the gateway serves. Exits non-zero on the first failure.

Usage: browser_test.py --gateway PATH --artifacts DIR
"""

import argparse
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

USER = "site-tech"
PASSWORD = "browser test password"
DOCUMENTS = 4


class Failure(Exception):
    pass


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, response.read().decode()


def wait_until(what, condition, timeout=30, interval=0.25):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = condition()
            if last:
                return last
        except Exception as error:  # a gateway still starting refuses connections
            last = error
        time.sleep(interval)
    raise Failure(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


class DevTools:
    """Chromium's DevTools protocol over --remote-debugging-pipe: JSON messages ended by NUL on fds 3 and 4."""

    def __init__(self, chromium, profile):
        to_chromium_read, self._to_chromium = os.pipe()
        self._from_chromium, from_chromium_write = os.pipe()

        def give_pipes():
            # Move the ends out of the way first, in case one of them already is 3 or 4. dup2 makes 3 and 4
            # inheritable; every other descriptor of ours is not (PEP 446), so only these reach Chromium.
            read_end = os.dup(to_chromium_read)
            write_end = os.dup(from_chromium_write)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.process = subprocess.Popen(
            [
                chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                f"--user-data-dir={profile}", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--metrics-recording-only", "--hide-scrollbars", "--lang=en-US",
                "about:blank",
            ],
            preexec_fn=give_pipes,
            # Closing descriptors would happen after give_pipes and take 3 and 4 away again.
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(profile, "chromium.log"), "wb"),
        )
        os.close(to_chromium_read)
        os.close(from_chromium_write)
        self._next_id = 0
        self._buffer = b""
        self._replies = {}
        self._lock = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.session = None

    def _read(self):
        while True:
            chunk = os.read(self._from_chromium, 1 << 16)
            if not chunk:
                with self._lock:
                    self._replies["closed"] = True
                    self._lock.notify_all()
                return
            self._buffer += chunk
            while b"\0" in self._buffer:
                message, self._buffer = self._buffer.split(b"\0", 1)
                parsed = json.loads(message)
                if "id" in parsed:
                    with self._lock:
                        self._replies[parsed["id"]] = parsed
                        self._lock.notify_all()

    def call(self, method, params=None, session=True, timeout=30):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        try:
            os.write(self._to_chromium, json.dumps(message).encode() + b"\0")
        except BrokenPipeError:
            raise Failure("Chromium has exited (see status-page-chromium.log in the artifacts)")
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._next_id not in self._replies:
                if "closed" in self._replies:
                    raise Failure("Chromium closed the DevTools pipe (see chromium.log in the artifacts)")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise Failure(f"Chromium did not answer {method} within {timeout}s")
                self._lock.wait(remaining)
            reply = self._replies.pop(self._next_id)
        if "error" in reply:
            raise Failure(f"{method}: {reply['error']}")
        return reply["result"]

    def open(self, url):
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.call(
            "Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Page.navigate", {"url": url})
        # Until the navigation commits, the evaluation may still run in about:blank, which is "complete" too.
        wait_until("the page to load", lambda: self.evaluate(
            f"document.readyState === 'complete' && location.href === {json.dumps(url)}"))

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise Failure(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path, width, mobile):
        """The whole page at `width` CSS pixels: the viewport is made as tall as the page first."""
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": mobile})
        height = self.evaluate("Math.ceil(document.documentElement.scrollHeight)")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
        time.sleep(0.3)
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close", session=False, timeout=5)
        except Failure:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


FIGURES = """(() => {
  const text = (selector) => { const e = document.querySelector(selector); return e ? e.textContent.trim() : null; };
  return {
    health: text('[data-figure="health"]'),
    open: text('[data-figure="listener.lan.open"]'),
    total: text('[data-figure="listener.lan.total"]'),
    pushed: text('[data-figure="listener.lan.pushed"]'),
    pulled: text('[data-figure="listener.lan.pulled"]'),
    lastSequence: text('[data-component="store/inventory"] [data-detail="lastSequence"] b'),
    users: Array.from(document.querySelectorAll('.connections td[data-label="User"]')).map(e => e.textContent),
    refresh: text('#refresh'),
    stale: document.body.classList.contains('stale'),
    payloads: Array.from(document.querySelectorAll('code.payload')).map(e => e.textContent),
    qrWidth: (() => { const s = document.querySelector('.qr-code svg'); return s ? s.getBoundingClientRect().width : 0; })(),
  };
})()"""


def decode_qr(path):
    import zxingcpp
    from PIL import Image

    results = zxingcpp.read_barcodes(Image.open(path), formats=zxingcpp.BarcodeFormat.QRCode, try_invert=False)
    return [result.text for result in results]


def run(gateway, config_writer, artifacts, work):
    def edge_gateway(*arguments, **options):
        completed = subprocess.run([gateway, *arguments], capture_output=True, text=True, **options)
        if completed.returncode != 0:
            raise Failure(f"edge-gateway {' '.join(arguments)} failed ({completed.returncode}): {completed.stderr}")
        return completed.stdout

    ops_port, listener_port = free_port(), free_port()
    password_file = os.path.join(work, "password")
    with open(password_file, "w") as file:
        file.write(PASSWORD + "\n")
    os.chmod(password_file, 0o600)
    users_file = os.path.join(work, "users.toml")
    edge_gateway("users", "add", USER, "--file", users_file, "--password-file", password_file)
    def write_configuration(path, *arguments):
        completed = subprocess.run([config_writer, *arguments], capture_output=True, text=True)
        if completed.returncode != 0:
            raise Failure(f"GatewayConfigWriter {' '.join(arguments)} failed: {completed.stderr}")
        with open(path, "w") as file:
            file.write(completed.stdout)
        return path

    config = write_configuration(
        os.path.join(work, "gateway.toml"), "--name", "Browser test site", "--data-dir", f"{work}/gateway-data",
        "--ops-port", str(ops_port), "--listener-port", str(listener_port), "--tls", "self-signed",
        "--auth", "basic", "--users-file", users_file)
    device_config = write_configuration(
        os.path.join(work, "device.toml"), "--name", "device", "--data-dir", f"{work}/device-data")
    for index in range(DOCUMENTS):
        edge_gateway("docs", "put", "--config", device_config, "--db", "inventory", f"item-{index}",
                     json.dumps({"item": index, "note": "never shown on the status page"}))

    gateway_log = open(os.path.join(artifacts, "status-page-gateway.log"), "w")
    server = subprocess.Popen([gateway, "serve", "--config", config], stdout=gateway_log, stderr=subprocess.STDOUT)
    browser = None
    replication = None
    try:
        base = f"http://127.0.0.1:{ops_port}"
        wait_until("the gateway to be ready", lambda: http_get(f"{base}/health/ready")[0] == 200)
        pairing = json.loads(http_get(f"{base}/pairing")[1])
        if len(pairing) != 1:
            raise Failure(f"expected one pairing payload, got {pairing}")
        payload = pairing[0]["payload"]

        chromium = shutil.which("chromium")
        if not chromium:
            raise Failure("chromium is not installed")
        profile = os.path.join(work, "chromium-profile")
        os.makedirs(profile)
        browser = DevTools(chromium, profile)
        browser.open(f"{base}/")
        before = browser.evaluate(FIGURES)
        print(f"before replication: {before}")
        expect = {"health": "up", "open": "0", "total": "0", "pushed": "0", "lastSequence": "0"}
        for key, value in expect.items():
            if before[key] != value:
                raise Failure(f"before replication, {key} is {before[key]!r}, expected {value!r}")
        if before["payloads"] != [payload]:
            raise Failure(f"the page shows payloads {before['payloads']}, the gateway serves {payload!r}")
        if before["qrWidth"] < 260:
            raise Failure(f"the QR code is {before['qrWidth']} CSS px wide on a phone; at least 260 are needed")
        # The script announces itself in the bar; without it the bar says the page is a snapshot.
        wait_until("the page's script to start", lambda: browser.evaluate(FIGURES)["refresh"].startswith("Live"))

        replication = subprocess.Popen(
            [gateway, "replicate", "--config", device_config, "--db", "inventory", "--pairing", payload,
             "--user", USER, "--password-file", password_file, "--continuous"],
            stdout=open(os.path.join(work, "replicate.log"), "w"), stderr=subprocess.STDOUT)

        # No reload from here on: the open page must follow by itself.
        during = wait_until(
            "the open page to show the device connected with its documents",
            lambda: (lambda f: f if f["open"] == "1" and f["pushed"] == str(DOCUMENTS) else None)(
                browser.evaluate(FIGURES)),
            timeout=60)
        print(f"during replication: {during}")
        if during["users"] != [USER]:
            raise Failure(f"the connection's user shows as {during['users']}, expected [{USER!r}]")
        wait_until("the store's sequence to show the pushed documents",
                   lambda: browser.evaluate(FIGURES)["lastSequence"] == str(DOCUMENTS))
        browser.screenshot(os.path.join(artifacts, "status-page-connected.png"), width=412, mobile=True)

        replication.send_signal(signal.SIGINT)
        replication.wait(timeout=30)
        replication = None
        after = wait_until(
            "the open page to show the device gone",
            lambda: (lambda f: f if f["open"] == "0" else None)(browser.evaluate(FIGURES)), timeout=30)
        print(f"after replication: {after}")
        if after["total"] != "1" or after["pushed"] != str(DOCUMENTS):
            raise Failure(f"after the connection closed the totals are {after}, expected 1 connection, "
                          f"{DOCUMENTS} documents pushed")

        page = browser.evaluate("document.documentElement.outerHTML")
        for secret in (PASSWORD, "$scrypt$", "PRIVATE KEY", "never shown on the status page"):
            if secret in page:
                raise Failure(f"the page shows {secret!r}")
        with open(os.path.join(artifacts, "status-page.html"), "w") as file:
            file.write(page)

        phone = os.path.join(artifacts, "status-page.png")
        browser.screenshot(phone, width=412, mobile=True)
        browser.screenshot(os.path.join(artifacts, "status-page-desktop.png"), width=1280, mobile=False)
        decoded = decode_qr(phone)
        if decoded != [payload]:
            raise Failure(f"zxing decoded {decoded} from the phone screenshot, expected [{payload!r}]")
        print(f"QR code in the screenshot decodes to the pairing payload: {payload}")
        # A phone in dark mode: the code keeps its light background, or cameras could not read it.
        browser.call("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        dark = os.path.join(artifacts, "status-page-dark.png")
        browser.screenshot(dark, width=412, mobile=True)
        if decode_qr(dark) != [payload]:
            raise Failure("the QR code in the dark-mode screenshot does not decode to the pairing payload")
        browser.call("Emulation.setEmulatedMedia", {"features": []})

        # The gateway goes away: the open page must say that what it shows is no longer current.
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        gone = wait_until("the page to say the gateway is not answering",
                          lambda: (lambda f: f if f["stale"] else None)(browser.evaluate(FIGURES)))
        print(f"gateway stopped: {gone['refresh']}")
        browser.screenshot(os.path.join(artifacts, "status-page-unreachable.png"), width=412, mobile=True)
    finally:
        if replication:
            replication.kill()
            replication.wait()
        if browser:
            try:
                browser.close()
            except Exception as error:  # the gateway must be stopped whatever happened to the browser
                print(f"closing Chromium: {error}", file=sys.stderr)
            log = os.path.join(work, "chromium-profile", "chromium.log")
            if os.path.exists(log):
                shutil.copy(log, os.path.join(artifacts, "status-page-chromium.log"))
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        gateway_log.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gateway", required=True, help="the edge-gateway executable")
    parser.add_argument("--config-writer", required=True, help="the GatewayConfigWriter executable")
    parser.add_argument("--artifacts", required=True, help="directory for screenshots, DOM and logs")
    arguments = parser.parse_args()
    os.makedirs(arguments.artifacts, exist_ok=True)
    work = tempfile.mkdtemp(prefix="status-page-browser-")
    started = time.monotonic()
    try:
        run(os.path.abspath(arguments.gateway), os.path.abspath(arguments.config_writer),
            os.path.abspath(arguments.artifacts), work)
    except Failure as failure:
        print(f"status page browser test FAILED: {failure}", file=sys.stderr)
        print(f"artifacts in {arguments.artifacts}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"status page browser test passed in {time.monotonic() - started:.1f}s; "
          f"screenshots in {arguments.artifacts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
