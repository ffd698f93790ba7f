"""A stand-in for Sign in with Apple's token endpoints on loopback
(`/auth/token`, `/auth/revoke`) that checks what Apple checks: a form body,
`client_id` among the app's ids, `client_secret` an ES256 JWT verified with the
team key's public half (header alg ES256 and kid, iss the team id, aud
https://appleid.apple.com, sub the client id, iat/exp present and exp in the
future, at most 6 months out), `grant_type=authorization_code` with a code
this stand-in issued for that client and never used before (codes work once),
and for revocation a refresh token it issued. Plus the team key as a .p8."""

import http.server
import json
import threading
import time
import urllib.parse
import uuid

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

TEAM_ID = "TEAMAPPLE1"
KEY_ID = "SIWAKEY001"
AUD = "https://appleid.apple.com"


class AppleTokens:
    def __init__(self, client_ids=("com.example.app",)):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.p8 = self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()).decode()
        self.client_ids = set(client_ids)
        self.codes = {}  # code -> client id, until used
        self.refresh_tokens = {}  # token -> client id
        self.revoked = []  # tokens revoked, in order
        self.refusals = []  # (path, reason)
        self.fail_next = 0  # answer this many requests with 503
        self.lock = threading.Lock()
        stand_in = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length).decode()
                with stand_in.lock:
                    if stand_in.fail_next > 0:
                        stand_in.fail_next -= 1
                        return self.answer(503, {"error": "temporarily_unavailable"})
                    status, body = stand_in.handle(self.path, self.headers.get("Content-Type", ""), raw)
                self.answer(status, body)

            def answer(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()

    def issue_code(self, client_id="com.example.app"):
        code = "c" + uuid.uuid4().hex
        with self.lock:
            self.codes[code] = client_id
        return code

    def refuse(self, path, reason, error="invalid_client"):
        self.refusals.append((path, reason))
        return 400, {"error": error}

    def check_client(self, path, form):
        client_id = form.get("client_id", "")
        if client_id not in self.client_ids:
            return None, self.refuse(path, "unknown client_id")
        secret = form.get("client_secret", "")
        try:
            header = jwt.get_unverified_header(secret)
            if header.get("alg") != "ES256" or header.get("kid") != KEY_ID:
                return None, self.refuse(path, f"client_secret header {header}")
            claims = jwt.decode(secret, self.key.public_key(), algorithms=["ES256"], audience=AUD, issuer=TEAM_ID,
                                options={"require": ["iss", "iat", "exp", "aud", "sub"]})
        except jwt.PyJWTError as e:
            return None, self.refuse(path, f"client_secret: {e}")
        if claims["sub"] != client_id or claims["exp"] > time.time() + 15777000:
            return None, self.refuse(path, "client_secret sub or exp")
        return client_id, None

    def handle(self, path, content_type, raw):
        if not content_type.startswith("application/x-www-form-urlencoded"):
            return self.refuse(path, "not a form", "invalid_request")
        form = dict(urllib.parse.parse_qsl(raw, keep_blank_values=True))
        client_id, refusal = self.check_client(path, form)
        if refusal:
            return refusal
        if path == "/auth/token":
            if form.get("grant_type") != "authorization_code":
                return self.refuse(path, "grant_type", "unsupported_grant_type")
            code = form.get("code", "")
            if self.codes.get(code) != client_id:
                return self.refuse(path, "unknown or used code", "invalid_grant")
            del self.codes[code]
            token = "r" + uuid.uuid4().hex
            self.refresh_tokens[token] = client_id
            return 200, {"access_token": "a" + uuid.uuid4().hex, "token_type": "Bearer", "expires_in": 3600,
                         "refresh_token": token, "id_token": "unused"}
        if path == "/auth/revoke":
            token = form.get("token", "")
            if form.get("token_type_hint") not in (None, "refresh_token", "access_token"):
                return self.refuse(path, "token_type_hint", "invalid_request")
            if self.refresh_tokens.get(token) != client_id:
                return self.refuse(path, "unknown token", "invalid_request")
            self.revoked.append(token)
            return 200, {}
        return 404, {"error": "not_found"}
