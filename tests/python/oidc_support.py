"""A local OpenID Connect issuer on loopback for the ID-token tests: discovery,
a JWKS with Cache-Control, key rotation, and tokens signed by PyJWT with real
RSA and P-256 keys."""

import hashlib
import http.server
import json
import threading
import time
import uuid

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm


class Issuer:
    def __init__(self, cache_control="max-age=3600"):
        self.keys = {}  # kid → (private key, alg)
        self.published = []  # kids in the JWKS
        self.cache_control = cache_control
        self.jwks_hits = 0
        self.down = False
        issuer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                if issuer.down:
                    self.send_response(503)
                    self.end_headers()
                    return
                if self.path == "/.well-known/openid-configuration":
                    body = {"issuer": issuer.url, "jwks_uri": issuer.url + "/jwks"}
                    headers = {}
                elif self.path == "/jwks":
                    issuer.jwks_hits += 1
                    body = {"keys": [issuer.jwk(kid) for kid in issuer.published]}
                    headers = {"Cache-Control": issuer.cache_control}
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                raw = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.add_key("rsa1", "RS256")
        self.add_key("ec1", "ES256")

    def stop(self):
        self.server.shutdown()

    def add_key(self, kid, alg, publish=True):
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048) if alg == "RS256" else ec.generate_private_key(ec.SECP256R1())
        self.keys[kid] = (key, alg)
        if publish:
            self.published.append(kid)

    def jwk(self, kid):
        key, alg = self.keys[kid]
        algo = RSAAlgorithm if alg == "RS256" else ECAlgorithm
        d = json.loads(algo.to_jwk(key.public_key()))
        d.update({"kid": kid, "alg": alg, "use": "sig"})
        return d

    def token(self, sub="user-1", aud="com.example.app", nonce="raw-nonce", kid="rsa1", alg=None, iss=None, exp_in=600,
              iat_offset=0, email=None, email_verified=None, headers=None, extra=None, hash_nonce=True):
        key, key_alg = self.keys[kid]
        now = int(time.time())
        claims = {"iss": iss or self.url, "sub": sub, "aud": aud, "iat": now + iat_offset, "exp": now + exp_in,
                  "jti": uuid.uuid4().hex}
        if nonce is not None:
            claims["nonce"] = hashlib.sha256(nonce.encode()).hexdigest() if hash_nonce else nonce
        if email is not None:
            claims["email"] = email
        if email_verified is not None:
            claims["email_verified"] = email_verified
        claims.update(extra or {})
        return jwt.encode(claims, key, algorithm=alg or key_alg, headers={"kid": kid, **(headers or {})})


def unsigned(claims, kid="rsa1"):
    """An `alg: none` token."""
    return jwt.encode(claims, None, algorithm="none", headers={"kid": kid})
