"""A Standard Webhooks receiver for the drills, and the two messaging users.

`Receiver` listens on a fixed loopback port (so it can be stopped and started
again on the same address while roostd keeps the URL), verifies every POST
with the official `standardwebhooks` verifier (PyPI), answers 400 to anything
that does not verify and 200 otherwise, and keeps, per `message.created`
event: which webhook-ids carried which message id, how often each arrived.
"""

import base64
import hashlib
import hmac
import http.server
import json
import threading
import time

from standardwebhooks.webhooks import Webhook

from roost_harness import Client, free_port

SECRET = "whsec_" + base64.b64encode(b"roost-drill-signing-key-32bytes!").decode()


class Receiver:
    def __init__(self, secret=SECRET, port=None):
        self.secret = secret
        self.port = port or free_port()
        self.verifier = Webhook(secret)
        self.lock = threading.Lock()
        self.server = None
        self.requests = 0            # every POST that reached us
        self.invalid = []            # (webhook-id or None, reason) of deliveries that failed verification
        self.accepted = 0            # verified deliveries answered 200
        self.by_message = {}         # message _id -> set of webhook-ids (verified deliveries)
        self.by_webhook_id = {}      # webhook-id -> set of message _ids
        self.arrivals = {}           # webhook-id -> number of verified arrivals
        self.texts = {}              # message _id -> text as delivered
        self.other_types = 0         # verified events that are not message.created
        self.first_arrival = {}      # message _id -> monotonic time of its first verified arrival

    # ----------------------------------------------------------------- server
    def start(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                try:
                    body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                except (OSError, ValueError):
                    return
                headers = {k.lower(): v for k, v in self.headers.items()}
                status = receiver.receive(headers, body)
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        return self

    def stop(self):
        """Stops listening: roostd's next attempts get 'connection refused'."""
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    @property
    def running(self):
        return self.server is not None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/hook"

    # ----------------------------------------------------------------- bookkeeping
    def receive(self, headers, body):
        webhook_id = headers.get("webhook-id")
        try:
            payload = self.verifier.verify(body, headers)
        except Exception as e:  # noqa: BLE001 - any verification failure is a 400
            with self.lock:
                self.requests += 1
                self.invalid.append((webhook_id, f"{type(e).__name__}: {e}"[:200]))
            return 400
        with self.lock:
            self.requests += 1
            self.accepted += 1
            self.arrivals[webhook_id] = self.arrivals.get(webhook_id, 0) + 1
            if not isinstance(payload, dict) or payload.get("type") != "message.created":
                self.other_types += 1
                return 200
            message = (payload.get("data") or {}).get("message") or {}
            mid = message.get("_id")
            self.by_message.setdefault(mid, set()).add(webhook_id)
            self.by_webhook_id.setdefault(webhook_id, set()).add(mid)
            self.texts.setdefault(mid, message.get("text"))
            self.first_arrival.setdefault(mid, time.monotonic())
        return 200

    def delivered(self):
        with self.lock:
            return set(self.by_message)

    def wait_for(self, message_ids, timeout):
        """Waits until every id in `message_ids` arrived; returns the missing ones."""
        deadline = time.monotonic() + timeout
        while True:
            missing = set(message_ids) - self.delivered()
            if not missing or time.monotonic() >= deadline:
                return missing
            time.sleep(0.2)

    def check(self, acked, refused_texts=()):
        """Checks the deliveries against `acked` (message _id -> text the client
        sent and got a 2xx for). Returns (checked, failures, lost)."""
        failures, lost = [], []
        with self.lock:
            by_message = {k: set(v) for k, v in self.by_message.items()}
            by_id = {k: set(v) for k, v in self.by_webhook_id.items()}
            texts = dict(self.texts)
            invalid = list(self.invalid)
        checked = 0
        for mid, text in sorted(acked.items()):
            checked += 1
            ids = by_message.get(mid)
            if not ids:
                lost.append(f"message {mid} got a 2xx but its message.created webhook never arrived")
            elif len(ids) != 1:
                failures.append(f"message {mid}: its event arrived under {len(ids)} different webhook-ids {sorted(ids)[:3]}")
            elif texts.get(mid) != text:
                failures.append(f"message {mid}: webhook carried text {texts.get(mid)!r}, sent {text!r}")
        for wid, mids in by_id.items():
            checked += 1
            if len(mids) != 1:
                failures.append(f"webhook-id {wid} carried {len(mids)} different messages {sorted(map(str, mids))[:3]}")
        refused = set(refused_texts)
        for mid, text in texts.items():
            if text in refused:
                failures.append(f"message {mid} ({text!r}) was refused with an answer but its webhook arrived")
        for wid, reason in invalid[:20]:
            failures.append(f"delivery {wid} failed signature verification: {reason}")
        if len(invalid) > 20:
            failures.append(f"... and {len(invalid) - 20} more deliveries failed signature verification")
        return checked, failures, lost

    def stats(self):
        with self.lock:
            duplicates = sum(n - 1 for n in self.arrivals.values() if n > 1)
            return {"requests": self.requests, "accepted": self.accepted, "invalid": len(self.invalid),
                    "events": len(self.by_message), "duplicates": duplicates}

    def self_test(self):
        """Proves the verifier is live: a forged and a tampered delivery get 400.
        Returns a list of failures (empty when both were refused)."""
        body = json.dumps({"type": "message.created", "timestamp": "2026-01-01T00:00:00Z",
                           "data": {"message": {"_id": "forged", "text": "x"}}}).encode()
        ts = str(int(time.time()))
        wrong = hmac.new(b"not-the-secret-not-the-secret-00", f"forged_1.{ts}.".encode() + body, hashlib.sha256)
        key = base64.b64decode(self.secret[len("whsec_"):])
        good = hmac.new(key, f"forged_2.{ts}.".encode() + body, hashlib.sha256)
        cases = [("forged_1", body, "v1," + base64.b64encode(wrong.digest()).decode()),
                 ("forged_2", body.replace(b'"x"', b'"y"'), "v1," + base64.b64encode(good.digest()).decode())]
        failures = []
        for wid, data, signature in cases:
            c = Client(self.port, timeout=5)
            try:
                r = c.request("POST", "/hook", data, {"Content-Type": "application/json", "webhook-id": wid,
                                                      "webhook-timestamp": ts, "webhook-signature": signature})
            finally:
                c.close()
            if r.status != 400:
                failures.append(f"receiver self-test: {wid} answered {r.status}, expected 400")
        with self.lock:  # not roostd's: forget them
            self.invalid = [(w, why) for w, why in self.invalid if w not in ("forged_1", "forged_2")]
            self.requests -= len(cases)
        return failures


def webhooks_config(url, schedule, admin_token=None, secret=SECRET, timeout=2, workers=2):
    """The YAML for one `message.created` endpoint (Standard Webhooks format)."""
    text = f"""webhooks:
  retry_schedule: {schedule}
  timeout: {timeout}
  workers: {workers}
  endpoints:
    - name: drill-receiver
      url: {url}
      secret: {secret}
      events: [message.created]
      format: standard
"""
    if admin_token:
        text = f"admin_token: {admin_token}\n" + text
    return text


def sign_up(port, username, attempts=5):
    """Signs a user up (or logs in, if a previous sign-up landed without its
    answer); returns (user _id, token)."""
    body = {"username": username, "password": "correct horse battery staple", "name": username.title(),
            "email": f"{username}@example.com"}
    last = None
    for _ in range(attempts):
        c = Client(port, timeout=15)
        try:
            r = c.request("POST", "/users", body)
            if r.status == 201:
                j = r.json()
                return j["user"]["_id"], j["token"]
            r = c.request("POST", "/login", {"username": username, "password": body["password"]})
            if r.status == 200:
                j = r.json()
                return j["user"]["_id"], j["token"]
            last = r
        except OSError as e:
            last = e
        finally:
            c.close()
        time.sleep(0.3)
    raise RuntimeError(f"cannot sign up {username}: {last!r}")


def deliveries(port, admin_token, status):
    """The admin API's deliveries with `status` (up to 1000)."""
    c = Client(port, timeout=15, token=admin_token)
    try:
        r = c.request("GET", f"/admin/webhooks/deliveries?status={status}&limit=1000")
    finally:
        c.close()
    if r.status != 200:
        raise RuntimeError(f"GET /admin/webhooks/deliveries answered {r.status}: {r.raw[:200]!r}")
    return r.json()


def delivery_metrics(port):
    """roostd's `roost_webhook_deliveries_total` by outcome (delivered, failed, gave_up)."""
    c = Client(port, timeout=15)
    try:
        r = c.request("GET", "/metrics")
    finally:
        c.close()
    out = {}
    for line in r.raw.decode(errors="replace").splitlines():
        if line.startswith("roost_webhook_deliveries_total{"):
            outcome = line.split('outcome="', 1)[1].split('"', 1)[0]
            out[outcome] = int(float(line.rsplit(" ", 1)[1]))
    return out
