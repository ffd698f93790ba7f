#!/usr/bin/env python3
"""A lean APNs stand-in for bench/push.py: raw `h2` on an asyncio Protocol
over TLS (ALPN h2 only), one process, so the benchmark measures roostd and
not the stand-in (the hypercorn stand-in of tests/python/push_support.py
checks more cases and is far slower).

Per request it still checks what Apple checks: HTTP/2 `POST /3/device/<hex>`,
`authorization: bearer <ES256 JWT>` verified with the key's public half
(alg, kid, iss, iat within the hour) - each DISTINCT token once, its verdict
cached, as Apple's provider-token reuse works; a connection whose token
changes within 20 minutes is refused 429 TooManyProviderTokenUpdates;
`apns-topic` (the app's), `apns-push-type`, `apns-priority` (5 for
background) and `apns-expiration` present; a JSON payload of at most 4096
bytes with an `aps` object. Anything else gets Apple's error answer and is
counted as refused.

  push_standin.py --port P --cert C --key K --public-key PUB.pem --kid K --team T --topic T --stats FILE

Every half second it writes FILE (JSON): requests, answered 200, refused
(with the first reasons), connections, distinct provider tokens, and the
monotonic time of the first and last request.
"""
import argparse
import asyncio
import json
import ssl
import time

import jwt
from cryptography.hazmat.primitives import serialization
from h2.config import H2Configuration
from h2.connection import H2Connection
from h2.events import ConnectionTerminated, DataReceived, RequestReceived, StreamEnded, StreamReset
from h2.settings import SettingCodes

STATS = {"requests": 0, "ok": 0, "refused": 0, "reasons": [], "connections": 0, "tokens": 0, "first": None, "last": None}


class Checker:
    """Apple's checks on one request; provider tokens verified once each."""

    def __init__(self, public_key, kid, team, topic):
        self.public_key, self.kid, self.team, self.topic = public_key, kid, team, topic
        self.verdicts = {}  # token -> (ok, iat)

    def provider_token(self, token):
        verdict = self.verdicts.get(token)
        if verdict is None:
            try:
                header = jwt.get_unverified_header(token)
                claims = jwt.decode(token, self.public_key, algorithms=["ES256"],
                                    options={"verify_aud": False, "require": ["iss", "iat"]})
                ok = header.get("alg") == "ES256" and header.get("kid") == self.kid and claims.get("iss") == self.team
                verdict = (ok, claims.get("iat", 0))
            except Exception:  # noqa: BLE001 - any failure is Apple's InvalidProviderToken
                verdict = (False, 0)
            self.verdicts[token] = verdict
            STATS["tokens"] = len(self.verdicts)
        return verdict

    def check(self, headers, body):
        """None when Apple would take the request, else (status, reason)."""
        if headers.get(b":method") != b"POST" or not headers.get(b":path", b"").startswith(b"/3/device/"):
            return 405, "MethodNotAllowed"
        device = headers[b":path"][10:]
        if not device or len(device) % 2 or any(c not in b"0123456789abcdefABCDEF" for c in device):
            return 400, "BadDeviceToken"
        auth = headers.get(b"authorization", b"")
        if not auth.startswith(b"bearer "):
            return 403, "MissingProviderToken"
        ok, iat = self.provider_token(auth[7:].decode())
        if not ok:
            return 403, "InvalidProviderToken"
        if abs(time.time() - iat) > 3600:
            return 403, "ExpiredProviderToken"
        for name in (b"apns-topic", b"apns-push-type", b"apns-priority", b"apns-expiration"):
            if name not in headers:
                return 400, "MissingTopic" if name == b"apns-topic" else "BadPriority"
        if headers[b"apns-topic"].decode() != self.topic:
            return 400, "BadTopic"
        if len(body) > 4096:
            return 413, "PayloadTooLarge"
        try:
            payload = json.loads(body)
        except ValueError:
            return 400, "PayloadEmpty"
        if not isinstance(payload, dict) or not isinstance(payload.get("aps"), dict):
            return 400, "PayloadEmpty"
        if headers[b"apns-push-type"] == b"background" and (headers[b"apns-priority"] != b"5" or payload["aps"].get("content-available") != 1):
            return 400, "BadPriority"
        return None


class APNsProtocol(asyncio.Protocol):
    """One HTTP/2 connection: requests answered as their stream ends, writes flushed once per read."""

    def __init__(self, checker):
        self.checker = checker
        self.conn = H2Connection(config=H2Configuration(client_side=False, header_encoding=None))
        self.streams = {}  # stream id -> (headers, body chunks)
        self.token = None  # (since, provider token) of this connection

    def connection_made(self, transport):
        self.transport = transport
        STATS["connections"] += 1
        self.conn.update_settings({SettingCodes.MAX_CONCURRENT_STREAMS: 1000, SettingCodes.INITIAL_WINDOW_SIZE: 1 << 20})
        self.conn.initiate_connection()
        self.conn.increment_flow_control_window(1 << 24)
        transport.write(self.conn.data_to_send())

    def data_received(self, data):
        try:
            events = self.conn.receive_data(data)
        except Exception:  # noqa: BLE001 - a protocol error ends the connection
            self.transport.close()
            return
        for event in events:
            if isinstance(event, RequestReceived):
                self.streams[event.stream_id] = (dict(event.headers), [])
            elif isinstance(event, DataReceived):
                self.streams[event.stream_id][1].append(event.data)
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, StreamEnded):
                headers, chunks = self.streams.pop(event.stream_id)
                self.answer(event.stream_id, headers, b"".join(chunks))
            elif isinstance(event, StreamReset):
                self.streams.pop(event.stream_id, None)
            elif isinstance(event, ConnectionTerminated):
                self.transport.close()
        out = self.conn.data_to_send()
        if out:
            self.transport.write(out)

    def answer(self, stream_id, headers, body):
        now = time.monotonic()
        STATS["requests"] += 1
        STATS["first"] = STATS["first"] or now
        STATS["last"] = now
        refused = self.checker.check(headers, body)
        if refused is None:
            # Apple: a connection's provider token changes at most once per 20 minutes.
            token = headers[b"authorization"]
            if self.token and self.token[1] != token and time.time() - self.token[0] < 1200:
                refused = (429, "TooManyProviderTokenUpdates")
            elif not self.token or self.token[1] != token:
                self.token = (time.time(), token)
        if refused is None:
            STATS["ok"] += 1
            self.conn.send_headers(stream_id, [(b":status", b"200"), (b"apns-id", b"%d" % STATS["ok"])], end_stream=True)
            return
        status, reason = refused
        STATS["refused"] += 1
        if len(STATS["reasons"]) < 20:
            STATS["reasons"].append(reason)
        data = json.dumps({"reason": reason}).encode()
        self.conn.send_headers(stream_id, [(b":status", str(status).encode()), (b"content-type", b"application/json"),
                                           (b"content-length", str(len(data)).encode())])
        self.conn.send_data(stream_id, data, end_stream=True)


async def write_stats(path):
    while True:
        with open(path + ".tmp", "w") as f:
            json.dump(STATS, f)
        import os
        os.replace(path + ".tmp", path)
        await asyncio.sleep(0.5)


async def main():
    ap = argparse.ArgumentParser()
    for name in ("port", "cert", "key", "public-key", "kid", "team", "topic", "stats"):
        ap.add_argument("--" + name, required=True)
    a = ap.parse_args()
    public_key = serialization.load_pem_public_key(open(a.public_key, "rb").read())
    checker = Checker(public_key, a.kid, a.team, a.topic)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(a.cert, a.key)
    tls.set_alpn_protocols(["h2"])
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: APNsProtocol(checker), "127.0.0.1", int(a.port), ssl=tls)
    asyncio.ensure_future(write_stats(a.stats))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
