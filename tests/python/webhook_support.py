"""A webhook receiver that verifies every delivery with the official
`standardwebhooks` verifier, and a roostd that can be killed and restarted
on the same data directory."""

import base64
import http.server
import json
import os
import pathlib
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

from standardwebhooks.webhooks import Webhook

HERE = pathlib.Path(__file__).resolve().parent
BINARY = pathlib.Path(os.environ.get("ROOSTD", str((HERE / ".." / ".." / ".build" / "debug" / "roostd").resolve())))
SECRET = "whsec_" + base64.b64encode(b"roost-test-signing-key-32-bytes!").decode()
ADMIN = "roost-test-admin-token-0123456789abcdef"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Receiver:
    """Accepts POSTs on `port`. `plan` is a list of statuses to answer in
    turn (then 200); every request is verified and recorded."""

    def __init__(self, port=None, secret=SECRET, plan=()):
        self.port = port or free_port()
        self.verifier = Webhook(secret)
        self.plan = list(plan)
        self.requests = []  # (headers, body, status answered, verified payload or None)
        self.lock = threading.Lock()
        self.server = None

    def start(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    payload = receiver.verifier.verify(body, headers)
                except Exception:  # noqa: BLE001 - any verification failure counts
                    payload = None
                with receiver.lock:
                    status = receiver.plan.pop(0) if receiver.plan else 200
                    if payload is None:
                        status = 400
                    receiver.requests.append((headers, body, status, payload))
                self.send_response(status)
                if status == 429:
                    self.send_header("Retry-After", "1")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/hook"

    def accepted(self):
        """Verified deliveries answered 2xx: (webhook-id, payload)."""
        with self.lock:
            return [(h["webhook-id"], p) for h, _, s, p in self.requests if p is not None and 200 <= s < 300]

    def wait_for(self, predicate, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self):
                return True
            time.sleep(0.05)
        return False


class Roostd:
    """roostd on a fixed port and data directory; `kill9` and `start` again."""

    def __init__(self, tmp, config):
        self.tmp = pathlib.Path(tmp)
        self.config = self.tmp / "roost.yaml"
        self.config.write_text(config)
        self.data_dir = self.tmp / "data"
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = None
        self.logs = []

    def start(self):
        log_path = self.tmp / f"roostd-{len(self.logs)}.log"
        self.logs.append(log_path)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ROOST_", "NOTIFY_SOCKET", "WATCHDOG_", "LISTEN_", "JOURNAL_STREAM"))}
        self.proc = subprocess.Popen([str(BINARY), "serve", "--listen", f"127.0.0.1:{self.port}", "--data-dir", str(self.data_dir),
                                      "--config", str(self.config)], stdout=open(log_path, "wb"), stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"roostd exited:\n{self.log_text()}")
            try:
                with urllib.request.urlopen(self.base + "/healthz", timeout=1):
                    return self
            except OSError:
                time.sleep(0.05)
        raise AssertionError("roostd did not start")

    def log_text(self):
        return "\n".join(p.read_text(errors="replace") for p in self.logs if p.exists())

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def call(self, method, path, body=None, token=None):
        headers = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=15) as resp:
                raw = resp.read()
                return resp.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as e:
            raw = e.read()
            return e.code, (json.loads(raw) if raw else None)

    def sign_up(self, username):
        status, body = self.call("POST", "/users", {"username": username, "password": "correct horse battery", "name": username.title(),
                                                    "email": f"{username}@example.com"})
        assert status == 201, body
        return body["user"]["_id"], body["token"]


def config(receiver_url, events=("message.created",), fmt="standard", schedule="[0.2, 0.3, 0.5, 1, 1]", extra=""):
    return f"""password_cost: interactive
admin_token: {ADMIN}
webhooks:
  retry_schedule: {schedule}
  timeout: 2
  endpoints:
    - name: receiver
      url: {receiver_url}
      secret: {SECRET}
      events: [{", ".join(events)}]
      format: {fmt}
{extra}"""
