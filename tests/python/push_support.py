"""Local HTTP/2 stand-ins for APNs and FCM (hypercorn + h2 over TLS with a
test CA) that check what Apple and Google check, the credentials roostd
reads, and the configuration that points roostd at the stand-ins.

APNs stand-in: HTTP/2 only; `authorization: bearer <ES256 JWT>` verified
with the key's public half (alg ES256, kid, iss = team id, iat fresh, raw
r||s signature, as PyJWT verifies JOSE signatures); a new provider token
within 20 minutes of the last one is 429 TooManyProviderTokenUpdates;
apns-topic, apns-push-type, apns-priority (5 for background) and
apns-expiration required; payloads over 4096 bytes are 413 PayloadTooLarge.
A device token's prefix picks its answer (see `Provider.apns_answer`).

FCM stand-in: the OAuth token endpoint verifies the RS256 assertion (iss,
aud, scope, iat/exp) and the jwt-bearer grant; messages:send requires the
issued bearer token and a `message.token`; a token's prefix picks the answer.
"""

import asyncio
import contextlib
import hashlib
import json
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from hypercorn.asyncio import serve
from hypercorn.config import Config

from roost_harness import ADMIN_TOKEN as ADMIN, Roostd, free_port
from roost_harness.cluster import wait_until
from roost_harness.pki import make_pki

KEY_ID = "KEY1234567"
TEAM_ID = "TEAM987654"
TOPIC = "com.example.roostchat"
PROJECT = "roost-test"
CLIENT_EMAIL = "roost-push@roost-test.iam.gserviceaccount.com"


class Credentials:
    """An APNs .p8 key and an FCM service-account JSON, written into `tmp`."""

    def __init__(self, tmp, token_url):
        self.apns_key = ec.generate_private_key(ec.SECP256R1())
        self.p8 = self.apns_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption()).decode()
        self.fcm_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = self.fcm_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()).decode()
        self.service_account = {
            "type": "service_account", "project_id": PROJECT, "private_key_id": "abc", "private_key": pem,
            "client_email": CLIENT_EMAIL, "token_uri": token_url,
        }
        self.credentials_dir = tmp / "credentials"
        self.credentials_dir.mkdir(exist_ok=True)
        (self.credentials_dir / "apns.p8").write_text(self.p8)
        (self.credentials_dir / "fcm.json").write_text(json.dumps(self.service_account))


class Provider:
    """The three stand-ins (APNs production, APNs sandbox, FCM with its
    token endpoint), each its own hypercorn server on loopback over TLS."""

    def __init__(self, tmp, fcm_alpn=("h2", "http/1.1"), idle_timeout=600, max_streams=1000):
        """`fcm_alpn`: what the FCM server offers (("http/1.1",) stands for a server
        without HTTP/2); `idle_timeout`: seconds before a server closes an idle connection;
        `max_streams`: the SETTINGS_MAX_CONCURRENT_STREAMS each server allows (and enforces)."""
        self.tmp = tmp
        self.fcm_alpn = list(fcm_alpn)
        self.idle_timeout = idle_timeout
        self.max_streams = max_streams
        make_pki(tmp)
        self.ports = {"production": free_port(), "sandbox": free_port(), "fcm": free_port()}
        self.creds = Credentials(tmp, self.url("fcm") + "/token")
        self.lock = threading.Lock()
        self.requests = []        # dicts: service, env, token, headers, payload, conn, status, reason
        self.jwts = []            # (time, jwt) of each distinct APNs provider token
        self.access_tokens = []   # issued FCM access tokens
        self.assertions = []
        self.expire_next = False  # answer the next APNs request 403 ExpiredProviderToken
        self.conn_tokens = {}     # connection -> (since, provider token)
        self.verified = {}        # provider token -> (header, claims), once its signature verified
        self.may_refresh = set()  # connections told their token expired
        self.counts = {}          # token -> requests seen (for "busy"/"flaky" answers)
        self.down = False         # answer every request 503
        self.errors = []          # what a stand-in refused roostd for (should stay empty)
        self.loops = []
        self.stops = []

    def url(self, name):
        return f"https://127.0.0.1:{self.ports[name]}"

    # --- servers ---

    def start(self):
        for name in self.ports:
            self._serve(name)
        return self

    def _serve(self, name):
        config = Config()
        config.bind = [f"127.0.0.1:{self.ports[name]}"]
        config.certfile = str(self.tmp / "first.pem")
        config.keyfile = str(self.tmp / "first.key")
        config.alpn_protocols = ["h2"] if name != "fcm" else self.fcm_alpn
        config.h2_max_concurrent_streams = self.max_streams
        config.keep_alive_timeout = self.idle_timeout
        config.keep_alive_max_requests = 10**9  # hypercorn closes a connection after 1000 requests by default; APNs does not
        config.loglevel = "WARNING"
        ready = threading.Event()
        provider = self

        def run():
            loop = asyncio.new_event_loop()
            stop = asyncio.Event()
            provider.loops.append(loop)
            provider.stops.append((loop, stop))

            async def app(scope, receive, send):
                if scope["type"] == "lifespan":
                    while True:
                        message = await receive()
                        if message["type"] == "lifespan.startup":
                            await send({"type": "lifespan.startup.complete"})
                        else:
                            await send({"type": "lifespan.shutdown.complete"})
                            return
                body = b""
                while True:
                    message = await receive()
                    body += message.get("body", b"")
                    if not message.get("more_body"):
                        break
                status, headers, answer = provider.handle(name, scope, body)
                await send({"type": "http.response.start", "status": status,
                            "headers": [(k.encode(), v.encode()) for k, v in headers]})
                await send({"type": "http.response.body", "body": answer})

            loop.call_soon(ready.set)
            loop.run_until_complete(serve(app, config, shutdown_trigger=stop.wait))

        threading.Thread(target=run, daemon=True).start()
        ready.wait(10)
        time.sleep(0.2)

    def stop(self):
        for loop, stop in self.stops:
            loop.call_soon_threadsafe(stop.set)
        time.sleep(0.3)

    # --- answers ---

    def handle(self, name, scope, body):
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        conn = tuple(scope.get("client") or ())
        if name == "fcm":
            if scope["path"] == "/token":
                return self.token_endpoint(headers, body)
            return self.fcm(scope, headers, body, conn)
        return self.apns(name, scope, headers, body, conn)

    def record(self, **entry):
        entry["at"] = time.monotonic()
        with self.lock:
            self.requests.append(entry)

    def refuse(self, why):
        with self.lock:
            self.errors.append(why)

    @staticmethod
    def answer(status, reason=None, extra=None, headers=()):
        body = {}
        if reason:
            body["reason"] = reason
        body.update(extra or {})
        return status, [("content-type", "application/json"), *headers], json.dumps(body).encode() if body else b""

    def apns(self, env, scope, headers, body, conn):
        raw_token = scope["path"].rsplit("/", 1)[-1]
        token = device_name(raw_token)  # tests name their devices; roostd sends the name in hex
        entry = {"service": "apns", "env": env, "token": token, "raw_token": raw_token, "headers": headers, "conn": conn, "payload": None,
                 "http_version": scope.get("http_version")}

        def done(status, reason=None, extra=None, answer_headers=()):
            entry["status"], entry["reason"] = status, reason
            self.record(**entry)
            return self.answer(status, reason, extra, answer_headers)

        if scope.get("http_version") != "2" or scope["method"] != "POST" or not scope["path"].startswith("/3/device/"):
            self.refuse(f"apns: not an HTTP/2 POST /3/device/ ({scope.get('http_version')} {scope['method']} {scope['path']})")
            return done(405, "MethodNotAllowed")
        auth = headers.get("authorization", "")
        if not auth.startswith("bearer "):
            self.refuse("apns: no bearer provider token")
            return done(403, "MissingProviderToken")
        provider_token = auth[7:]
        try:
            # Each distinct token is verified once (its text is then known good).
            header, claims = self.verified.get(provider_token) or (None, None)
            if header is None:
                header = jwt.get_unverified_header(provider_token)
                claims = jwt.decode(provider_token, self.creds.apns_key.public_key(), algorithms=["ES256"],
                                    options={"verify_aud": False, "require": ["iss", "iat"]})
                self.verified[provider_token] = (header, claims)
        except Exception as error:  # noqa: BLE001 - any failure is Apple's InvalidProviderToken
            self.refuse(f"apns: provider token does not verify: {error}")
            return done(403, "InvalidProviderToken")
        if header.get("alg") != "ES256" or header.get("kid") != KEY_ID or claims.get("iss") != TEAM_ID:
            self.refuse(f"apns: wrong kid/iss/alg {header} {claims}")
            return done(403, "InvalidProviderToken")
        if abs(time.time() - claims["iat"]) > 3600:
            return done(403, "ExpiredProviderToken")
        # Apple: a connection's provider token may change at most once per 20 minutes
        # (after an ExpiredProviderToken it may change once); each distinct token is recorded.
        with self.lock:
            if provider_token not in [j for _, j in self.jwts]:
                self.jwts.append((time.time(), provider_token))
            last = self.conn_tokens.get(conn)
            refresh_refused = expired = False
            if last and last[1] != provider_token:
                if time.time() - last[0] < 20 * 60 and conn not in self.may_refresh:
                    self.errors.append("apns: a new provider token on a connection within 20 minutes")
                    refresh_refused = True
                else:
                    self.may_refresh.discard(conn)
                    self.conn_tokens[conn] = (time.time(), provider_token)
            elif not last:
                self.conn_tokens[conn] = (time.time(), provider_token)
            if not refresh_refused and self.expire_next:
                self.expire_next = False
                self.may_refresh.add(conn)
                expired = True
        if refresh_refused:
            return done(429, "TooManyProviderTokenUpdates")
        if expired:
            return done(403, "ExpiredProviderToken")
        for required in ("apns-topic", "apns-push-type", "apns-priority", "apns-expiration"):
            if required not in headers:
                self.refuse(f"apns: no {required}")
                return done(400, "MissingTopic" if required == "apns-topic" else "BadPriority")
        if headers["apns-topic"] != TOPIC:
            return done(400, "BadTopic")
        if len(body) > 4096:
            self.refuse(f"apns: payload of {len(body)} bytes")
            return done(413, "PayloadTooLarge")
        try:
            payload = json.loads(body)
        except ValueError:
            return done(400, "PayloadEmpty")
        entry["payload"] = payload
        kind = headers["apns-push-type"]
        if kind == "background" and (headers["apns-priority"] != "5" or payload.get("aps", {}).get("content-available") != 1):
            self.refuse("apns: a background push needs priority 5 and content-available")
            return done(400, "BadPriority")
        if self.down:
            return done(503, "ServiceUnavailable")
        with self.lock:
            self.counts[token] = self.counts.get(token, 0) + 1
            seen = self.counts[token]
        if token.startswith("gone"):
            # gone-<ms>: unregistered at that time
            return done(410, "Unregistered", {"timestamp": int(token.split("-")[1])})
        if token.startswith("bad"):
            return done(400, "BadDeviceToken")
        if token.startswith("sandbox") and env == "production":
            return done(400, "BadDeviceToken")
        if token.startswith("busy") and seen <= 2:
            return done(429, "TooManyRequests", answer_headers=[("retry-after", "1")])
        if token.startswith("flaky") and seen == 1:
            return done(500, "InternalServerError")
        return done(200, answer_headers=[("apns-id", f"id-{len(self.requests)}")])

    def token_endpoint(self, headers, body):
        form = urllib.parse.parse_qs(body.decode())
        if form.get("grant_type") != ["urn:ietf:params:oauth:grant-type:jwt-bearer"]:
            self.refuse(f"oauth: grant {form.get('grant_type')}")
            return 400, [("content-type", "application/json")], b'{"error":"unsupported_grant_type"}'
        assertion = form.get("assertion", [""])[0]
        try:
            header = jwt.get_unverified_header(assertion)
            claims = jwt.decode(assertion, self.creds.fcm_key.public_key(), algorithms=["RS256"],
                                audience=self.url("fcm") + "/token", options={"require": ["iss", "aud", "iat", "exp"]})
        except Exception as error:  # noqa: BLE001
            self.refuse(f"oauth: assertion does not verify: {error}")
            return 400, [("content-type", "application/json")], b'{"error":"invalid_grant"}'
        if header.get("alg") != "RS256" or claims["iss"] != CLIENT_EMAIL or claims.get("scope") != "https://www.googleapis.com/auth/firebase.messaging" \
                or claims["exp"] - claims["iat"] > 3600:
            self.refuse(f"oauth: claims {claims}")
            return 400, [("content-type", "application/json")], b'{"error":"invalid_grant"}'
        with self.lock:
            access = f"ya29.test-{len(self.access_tokens) + 1}"
            self.access_tokens.append(access)
            self.assertions.append(claims)
        return 200, [("content-type", "application/json")], json.dumps(
            {"access_token": access, "expires_in": 3599, "token_type": "Bearer"}).encode()

    def fcm(self, scope, headers, body, conn):
        entry = {"service": "fcm", "env": "fcm", "headers": headers, "conn": conn, "payload": None, "token": None,
                 "http_version": scope.get("http_version")}

        def done(status, error=None):
            entry["status"], entry["reason"] = status, (error or {}).get("status")
            self.record(**entry)
            return status, [("content-type", "application/json")], json.dumps({"error": error} if error else {"name": "projects/x/messages/1"}).encode()

        if scope["path"] != f"/v1/projects/{PROJECT}/messages:send" or scope["method"] != "POST":
            self.refuse(f"fcm: {scope['method']} {scope['path']}")
            return done(404, {"code": 404, "status": "NOT_FOUND", "message": "no such method"})
        auth = headers.get("authorization", "")
        with self.lock:
            issued = list(self.access_tokens)
        if not auth.startswith("Bearer ") or auth[7:] not in issued:
            return done(401, {"code": 401, "status": "UNAUTHENTICATED", "message": "Request had invalid authentication credentials."})
        try:
            message = json.loads(body)["message"]
            token = message["token"]
        except (ValueError, KeyError):
            self.refuse("fcm: no message.token")
            return done(400, {"code": 400, "status": "INVALID_ARGUMENT", "message": "no token"})
        entry["token"], entry["payload"] = token, message
        if self.down:
            return done(503, {"code": 503, "status": "UNAVAILABLE", "message": "down"})
        if token.startswith("fcm-gone"):
            return done(404, {"code": 404, "status": "NOT_FOUND", "message": "Requested entity was not found.",
                              "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"}]})
        if token.startswith("fcm-invalid"):
            return done(400, {"code": 400, "status": "INVALID_ARGUMENT", "message": "The registration token is not a valid FCM registration token",
                              "details": [{"@type": "type.googleapis.com/google.rpc.BadRequest",
                                           "fieldViolations": [{"field": "message.token", "description": "Invalid registration token"}]}]})
        if token.startswith("fcm-payload"):
            return done(400, {"code": 400, "status": "INVALID_ARGUMENT", "message": "Invalid JSON payload received.",
                              "details": [{"@type": "type.googleapis.com/google.rpc.BadRequest",
                                           "fieldViolations": [{"field": "message.android.ttl", "description": "bad"}]}]})
        return done(200)

    # --- views ---

    def delivered(self, service=None):
        with self.lock:
            return [r for r in self.requests if r["status"] == 200 and (service is None or r["service"] == service)]

    def wait_for(self, predicate, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self):
                return True
            time.sleep(0.05)
        return False


def config(provider, extra="", push_extra="", schedule="[0.2, 0.3, 0.5, 1, 1]"):
    """roostd's configuration: both providers pointed at the stand-ins, credentials from files."""
    return f"""password_cost: owasp
admin_token: {ADMIN}
push:
  ca_file: {provider.tmp / "ca.pem"}
  retry_schedule: {schedule}
  timeout: 5
{push_extra}  apns:
    key_file: apns.p8
    key_id: {KEY_ID}
    team_id: {TEAM_ID}
    topic: {TOPIC}
    url: {provider.url("production")}
    sandbox_url: {provider.url("sandbox")}
  fcm:
    service_account_file: {provider.creds.credentials_dir / "fcm.json"}
    url: {provider.url("fcm")}
{extra}"""


def env(provider):
    """systemd's LoadCredential= directory, as roostd finds its relative key_file."""
    return {"CREDENTIALS_DIRECTORY": str(provider.creds.credentials_dir)}


@contextlib.contextmanager
def push_world(collections, sync_interval):
    """The stand-in providers and a roostd with `collections` and `push.sync_interval`, stopped after."""
    with tempfile.TemporaryDirectory() as tmp:
        provider = Provider(Path(tmp)).start()
        roost = Roostd(str(Path(tmp) / "data"), config(provider, extra=collections, push_extra=f"  sync_interval: {sync_interval}\n"),
                       env=env(provider)).start()
        try:
            yield provider, roost
        finally:
            roost.stop(strict=False)
            provider.stop()


def user(roost, username):
    body = roost.sign_up(username, name=username.title(), email=f"{username}@example.com")
    return body["user"]["_id"], body["token"]


def apns_token(name):
    """The hex APNs device token a test's device `name` stands for (roostd takes only hex tokens for ios;
    the APNs stand-in reads the name back with `device_name`, and answers by its prefix)."""
    return name.encode().hex()


def device_name(token):
    """The device name a hex APNs token carries (the token itself when it carries none)."""
    try:
        return bytes.fromhex(token).decode()
    except ValueError:
        return token


REGISTERED = {}  # device name -> the token register() sent for it (to read the admin API's opaque ids back)


def token_id(device):
    """The opaque id the admin API shows for a device token (it never shows the token)."""
    return hashlib.sha256(REGISTERED.get(device, device).encode()).hexdigest()[:16]


def unmask(rows, *devices):
    """Admin API rows keyed by the device name they stand for, given the names a test used."""
    ids = {token_id(d): d for d in devices}
    out = {}
    for r in rows:
        name = ids.get(r["tokenId"], "")
        sent = REGISTERED.get(name, name)
        assert r["token"].endswith("…") and r["token"][:-1] == sent[:len(r["token"]) - 1], r
        out[name or r["tokenId"]] = r
    return out


def register(roost, token, device, platform="ios", **extra):
    """Registers the device `device` (a name; an ios device sends it as its hex token)."""
    sent = apns_token(device) if platform == "ios" else device
    REGISTERED[device] = sent
    resp = roost.call("POST", "/push/devices", {"platform": platform, "token": sent, **extra}, token)
    assert resp.status in (200, 201), resp.body
    return resp.body


def message(roost, token, to, text):
    resp = roost.call("POST", "/messages", {"recipientId": to, "text": text}, token)
    assert resp.status == 201, resp.body
    return resp.body


def recorded_delivered(roost, count, timeout=10):
    """The `count` pushes recorded delivered (the admin API's rows). A provider sees a push
    before roostd commits its outcome, so a test that checks the records waits for them here;
    more than `count` fails."""
    def rows():
        body = roost.call("GET", "/admin/push/deliveries?status=delivered&limit=1000", token=ADMIN).body
        return body if len(body) >= count else None
    found = wait_until(rows, timeout=timeout)
    assert found and len(found) == count, roost.call("GET", "/admin/push/deliveries?status=delivered&limit=1000", token=ADMIN).body
    return found


def metrics(roost):
    import urllib.request
    return urllib.request.urlopen(roost.base + "/metrics").read().decode()
