"""A webhook receiver that verifies every delivery with the official
`standardwebhooks` verifier, the configuration that points roostd at it,
and a signed-up user."""

import base64
import http.server
import threading
import time

from standardwebhooks.webhooks import Webhook

from roost_harness import ADMIN_TOKEN as ADMIN, free_port
from roost_harness.cluster import wait_until

SECRET = "whsec_" + base64.b64encode(b"roost-test-signing-key-32-bytes!").decode()


class Receiver:
    """Accepts POSTs on `port`. `plan` is a list of statuses to answer in
    turn (then 200); every request is verified and recorded. A plan entry
    "hang" never answers: the request is recorded with status 0 and its
    handler waits until `released` is set (a sender killed mid-delivery)."""

    def __init__(self, port=None, secret=SECRET, plan=()):
        self.port = port or free_port()
        self.verifier = Webhook(secret)
        self.plan = list(plan)
        self.requests = []  # (headers, body, status answered, verified payload or None)
        self.lock = threading.Lock()
        self.server = None
        self.released = threading.Event()

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
                    receiver.requests.append((headers, body, 0 if status == "hang" else status, payload))
                if status == "hang":
                    receiver.released.wait(120)
                    return
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
        self.released.set()
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


def recorded_delivery(node, webhook_id=None, timeout=10):
    """The admin API's deliveries once the newest (or the one with `webhook_id`) is no longer
    pending. A receiver sees its own answer before roostd commits the outcome, so a test that
    checks the record right after the receiver's answer waits for it here."""
    def rows():
        body = node.call("GET", "/admin/webhooks/deliveries", token=ADMIN).body
        mine = [r for r in body if webhook_id is None or r["webhookId"] == webhook_id][:1]
        return body if mine and mine[0]["status"] != "pending" else None
    found = wait_until(rows, timeout=timeout)
    assert found, node.call("GET", "/admin/webhooks/deliveries", token=ADMIN).body
    return found


def user(roost, username):
    """Signs `username` up on `roost` (with a name and an e-mail); returns (user _id, token)."""
    body = roost.sign_up(username, name=username.title(), email=f"{username}@example.com")
    return body["user"]["_id"], body["token"]


def config(receiver_url, events=("message.created",), fmt="standard", schedule="[0.2, 0.3, 0.5, 1, 1]", extra=""):
    return f"""password_cost: owasp
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
