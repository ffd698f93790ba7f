"""Hostile-input drill: fuzzing, a corpus of nasty requests, slow clients.

Four parts, each against its own roostd on a loopback port, each printing
one summary line:

  fuzz       schemathesis generates requests from openapi.yaml (examples,
             coverage, fuzzing and stateful phases): zero 5xx, no crash,
             /healthz answers afterwards. Conformance findings (a status or
             body the spec does not describe) are counted separately.
  corpus     malformed JSON, 100k-deep nesting, huge bodies, corrupt and
             truncated images, decompression-bomb headers, path-traversal ids,
             $where/$function/$expr, odd headers and ranges: no 5xx, no crash,
             no leaked bytes; every error of a well-formed request is the JSON
             {error, description} with X-Request-Id (README's contract).
  bounds     the resource bounds of the hostile review (issue #14): query
             paths of 6 to 500 parts, objects with 85k keys (stored, patched,
             rendered as HTML, and sent anonymously to PUT /users/x), regex
             heap and backtracking (8,000 empty groups against a 20 kB
             string, patterns over 1 KiB), NUL bytes in filters and documents,
             and 200 distinct thumbnail widths of one image. Each class runs
             under a /healthz probe (from its own process) and an RSS watch:
             no 5xx but 503, JSON errors, RSS growth under 200 MiB, every
             probe under 100 ms, at most 16 one-off variants kept per file.
  slowloris  hundreds of connections send their headers one byte at a time
             while a probe measures /healthz on fresh connections: no probe
             fails, and the p99 is reported.

`PYTHONPATH=tests python -m drills.hostile` runs all four at the `make drills` sizes.
"""

import argparse
import http.client
import json
import multiprocessing
import os
import pathlib
import random
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import zlib

from roost_harness import REPO, Response, Roostd, one_request, png, png_from_chunks

from .common import ADMIN_TOKEN, percentile

CONFIG = f"""\
default_permission: public
files_permission: public
max_upload_bytes: 4194304
admin_token: "{ADMIN_TOKEN}"
"""
COLLECTION = "hostile"


# --------------------------------------------------------------------------- corpus

def _deep_array(depth):
    return b"[" * depth + b"]" * depth


def _deep_object(depth):
    return b'{"a":' * depth + b"1" + b"}" * depth


def _bomb_png(width, height, inflated=1 << 20):
    """A PNG whose header claims width×height, with a small IDAT that inflates to `inflated` zero bytes."""
    return png_from_chunks(width, height, zlib.compress(b"\x00" * inflated, 9))


def _jpeg_sof(width, height):
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, height, width, 3) + b"\x01\x11\x00\x02\x11\x01\x03\x11\x01"
    return b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + sof + b"\x00" * 64 + b"\xff\xd9"


def _gif_screen(width, height):
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\xf7\x00\x00" + b"\x00" * 768 + b",\x00\x00\x00\x00" + \
        struct.pack("<HH", width, height) + b"\x00\x08" + b"\xff" * 200 + b";"


def _webp_vp8x(width, height):
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00" + (width - 1).to_bytes(3, "little") + \
        (height - 1).to_bytes(3, "little")
    body = b"WEBP" + vp8x + b"VP8 " + struct.pack("<I", 32) + os.urandom(32)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def _multipart(boundary, parts):
    out = b""
    for headers, data in parts:
        out += f"--{boundary}\r\n".encode() + headers.encode() + b"\r\n\r\n" + data + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


def corpus_cases(seed=1):
    """(name, method, path, headers, body, allowed statuses or None for 'any 4xx')."""
    rng = random.Random(seed)
    c = COLLECTION
    cases = []
    malformed = [b"{", b"}", b"[", b'{"a":}', b'{"a" 1}', b"{'a':1}", b'{"a":1,}', b"[1,2,]", b'{"a":1}{"b":2}',
                 b"nul", b"tru", b'"unterminated', b'{"a":"\\ud800"}', b'{"a":"\\x41"}', b'{"a":"\x00"}',
                 b'\xff\xfe{\x00"\x00', b'\xef\xbb\xbf{"a":1}', b'{"a":1e999999}', b'{"a":-1e999999}', b'{"a":NaN}',
                 b'{"a":Infinity}', b'{"a":0x10}', b'{"a":01}', b'{"a":' + b"9" * 100000 + b"}", b"[]", b'"string"',
                 b"42", b"null", b'{"a":"\xc3\x28"}', b'{"a":"\xc0\xaf"}', b'{"a":"\xed\xa0\x80"}', b"\x00" * 64,
                 b'{"a":' + b'"x",' * 5 + b"}", b" " * 10000, bytes(rng.randrange(256) for _ in range(4096))]
    for i, body in enumerate(malformed):
        cases.append((f"malformed-json-{i}", "POST", f"/{c}", {"Content-Type": "application/json"}, body, {400}))
        if i % 3 == 0:
            cases.append((f"malformed-json-patch-{i}", "PATCH", f"/{c}/x", {"Content-Type": "application/json"}, body, None))
            cases.append((f"malformed-json-signup-{i}", "POST", "/users", {"Content-Type": "application/json"}, body, {400}))
            cases.append((f"malformed-json-login-{i}", "POST", "/login", {"Content-Type": "application/json"}, body, {400}))
    cases.append(("long-field-name-200k", "POST", f"/{c}", {"Content-Type": "application/json"},
                  b'{"' + b"k" * 200000 + b'":1}', {201, 400}))
    odd_docs = [{"_id": {"$gt": ""}}, {"_id": ""}, {"_id": "a/b"}, {"_id": "x" * 300}, {"__proto__": {"admin": True}},
                {"$where": "1"}, {"a": {"$set": 1}}, {"": 1}, {"_acl": {"creator": "someone-else"}},
                {"_acl": {"read": "notalist"}}, {"_createdAt": "1970"}, {"a": "\u202e\ufeff\U0001F600"}]
    for i, doc in enumerate(odd_docs):
        cases.append((f"odd-document-{i}", "POST", f"/{c}", {"Content-Type": "application/json"},
                      json.dumps(doc).encode(), {201, 400}))
    for depth in (1000, 100_000):
        for kind, body in (("array", _deep_array(depth)), ("object", _deep_object(depth))):
            cases.append((f"deep-{kind}-{depth}", "POST", f"/{c}", {"Content-Type": "application/json"}, body, {201, 400}))
            cases.append((f"deep-{kind}-{depth}-patch", "PATCH", f"/{c}/deep", {"Content-Type": "application/json"}, body, None))
    for depth in (200, 900):
        nested = "1"
        for _ in range(depth):
            nested = '{"$and":[{"a":' + nested + "}]}"
        cases.append((f"deep-query-{depth}", "GET", f"/{c}?query={urllib.parse.quote(nested)}", {}, None, {200, 400, 414}))
        notted = '{"a":' + '{"$not":' * depth + '{"$gt":1}' + "}" * depth + "}"
        cases.append((f"deep-not-{depth}", "GET", f"/{c}/_count?query={urllib.parse.quote(notted)}", {}, None, {200, 400, 414}))
    cases.append(("huge-json-2MiB", "POST", f"/{c}", {"Content-Type": "application/json"},
                  b'{"a":"' + b"x" * (2 << 20) + b'"}', {413}))
    cases.append(("huge-upload-over-limit", "POST", "/files", {"Content-Type": "application/octet-stream"},
                  b"\x00" * ((4 << 20) + 1), {413}))
    cases.append(("huge-upload-30MiB", "POST", "/files", {"Content-Type": "application/octet-stream"},
                  b"\x00" * (30 << 20), {413}))
    cases.append(("huge-json-30MiB", "POST", f"/{c}", {"Content-Type": "application/json"},
                  b'{"a":"' + b"x" * (30 << 20) + b'"}', {413}))
    # Operators that must never run.
    for op in ("$where", "$function", "$expr", "$accumulator", "$jsonSchema", "$text", "$lookup"):
        for q in ({op: "sleep(100000)"}, {"a": {op: 1}}, {"$or": [{"b": 1}, {op: {"body": "x"}}]}):
            cases.append((f"operator-{op}-{len(cases)}", "GET", f"/{c}?query={urllib.parse.quote(json.dumps(q))}",
                          {}, None, {400}))
        cases.append((f"operator-{op}-count", "GET", f"/{c}/_count?query={urllib.parse.quote(json.dumps({op: 1}))}", {}, None, {400}))
        cases.append((f"operator-{op}-users", "GET", f"/users?query={urllib.parse.quote(json.dumps({op: 1}))}",
                      {"Authorization": f"Bearer {ADMIN_TOKEN}"}, None, {400}))
    for name, q in (("sort-where", "sort=" + urllib.parse.quote('{"$where":1}')), ("sort-junk", "sort=%7B"),
                    ("limit-neg", "limit=-1"), ("limit-huge", "limit=99999999999999999999"), ("skip-neg", "skip=-5"),
                    ("skip-huge", "skip=99999999999999999999"), ("fields-junk", "fields=%00%01,$where,a.b"),
                    ("query-not-json", "query=%7Bnope"), ("query-60k", "query=" + urllib.parse.quote(
                        json.dumps({"a": {"$in": ["x" * 50] * 1000}}))),
                    ("regex-catastrophic", "query=" + urllib.parse.quote(json.dumps({"a": {"$regex": "^(a+)+$"}}))),
                    ("regex-invalid", "query=" + urllib.parse.quote(json.dumps({"a": {"$regex": "(("}}))),
                    ("geo-junk", "query=" + urllib.parse.quote(json.dumps({"l": {"$nearSphere": [1e308, -1e308]}})))):
        cases.append((f"params-{name}", "GET", f"/{c}?{q}", {}, None, {200, 400, 414}))
    # Images.
    good = png(48, 32, 7)
    for name, ctype, body, allowed in (
            ("png-truncated", "image/png", good[:len(good) // 2], {422}),
            ("png-header-only", "image/png", good[:33], {422}),
            ("png-bad-crc", "image/png", good[:29] + b"\x00\x00\x00\x00" + good[33:], {201, 422}),
            ("png-garbage", "image/png", b"\x89PNG\r\n\x1a\n" + bytes(rng.randrange(256) for _ in range(2000)), {422}),
            ("png-bomb-header-100k", "image/png", _bomb_png(100_000, 100_000), {422}),
            ("png-bomb-header-max", "image/png", _bomb_png(0x7FFFFFFF, 0x7FFFFFFF), {422}),
            ("png-bomb-zero-size", "image/png", _bomb_png(0, 0), {422}),
            ("png-bomb-inflating-8k", "image/png", _bomb_png(8000, 8000, inflated=8 << 20), {422}),
            ("png-16bit-rgba-wide", "image/png", png_from_chunks(60000, 1, zlib.compress(b"\x00" * 4000), 6, 16), {422}),
            ("jpeg-bomb-header", "image/jpeg", _jpeg_sof(65000, 65000), {422}),
            ("jpeg-garbage", "image/jpeg", b"\xff\xd8\xff" + bytes(rng.randrange(256) for _ in range(3000)), {422}),
            ("gif-bomb-header", "image/gif", _gif_screen(65535, 65535), {422}),
            ("webp-bomb-header", "image/webp", _webp_vp8x(16384, 16384), {422}),
            ("webp-truncated", "image/webp", b"RIFF\x10\x00\x00\x00WEBPVP8 ", {422}),
            ("declared-png-is-jpeg", "image/png", _jpeg_sof(10, 10), {415}),
            ("declared-jpeg-is-png", "image/jpeg", good, {415}),
            ("declared-png-is-text", "image/png", b"hello", {415}),
            ("svg-script", "image/svg+xml", b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', {201}),
            ("html-script", "text/html", b"<html><script>alert(document.cookie)</script></html>", {201}),
            ("empty", "image/png", b"", {400}),
            ("multipart-no-boundary", "multipart/form-data", b"--x\r\n\r\nabc\r\n--x--\r\n", {400}),
            ("multipart-unclosed", "multipart/form-data; boundary=x",
             b'--x\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc', {400}),
            ("multipart-1000-parts", "multipart/form-data; boundary=b",
             _multipart("b", [('Content-Disposition: form-data; name="f%d"' % i, b"v") for i in range(1000)]), {201, 400}),
            ("multipart-traversal-name", "multipart/form-data; boundary=b",
             _multipart("b", [('Content-Disposition: form-data; name="file"; filename="../../../../etc/passwd"\r\n'
                               "Content-Type: text/plain", b"not really")]), {201}),
            ("multipart-bomb", "multipart/form-data; boundary=b",
             _multipart("b", [('Content-Disposition: form-data; name="file"; filename="b.png"\r\nContent-Type: image/png',
                               _bomb_png(100_000, 100_000))]), {422})):
        cases.append((f"image-{name}", "POST", "/files", {"Content-Type": ctype}, body, allowed))
    # Path traversal and odd ids.
    for path in ("/files/../../etc/passwd", "/files/..%2f..%2fetc%2fpasswd", "/files/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
                 "/files/%2e%2e/%2e%2e/etc/passwd", "/files/..%2F..%2Froost.db/meta", "/files/....//....//etc/passwd",
                 "/files/..%5c..%5cetc%5cpasswd", "/files/%00", "/files/%00%00%00%00%00%00%00%00%00%00%00%00/meta",
                 "/files/../../../../../../../../etc/passwd/thumbnail", "/files/0000000000000000000000%2f/meta",
                 "/files/AAAAAAAAAAAAAAAAAAAAAAAA", "/files/aaaaaaaaaaaaaaaaaaaaaaaa/thumbnail?size=../../etc",
                 "/files/aaaaaaaaaaaaaaaaaaaaaaaa/thumbnail?w=1&h=1&fit=../../x",
                 f"/{c}/..%2f..%2fetc%2fpasswd", f"/{c}/%2e%2e", f"/{c}/%00", f"/{c}/..", "/%2e%2e/%2e%2e/etc/passwd",
                 "/..%2f..%2froost.db", "/_files", "/_migrations/1", f"/{c}/%ff%fe",
                 f"/{c}/" + "a" * 5000, "/" + "b" * 70, "/files/" + "%2e" * 24):
        cases.append((f"traversal {path[:60]}", "GET", path, {}, None, None))
    # A legal collection name that is also SQLite's catalog: must be an empty collection, not the schema.
    cases.append(("sqlite-master-is-just-a-name", "GET", "/sqlite_master", {}, None, {200}))
    cases.append(("traversal-delete", "DELETE", "/files/..%2f..%2froost.db", {}, None, None))
    # Odd headers.
    cases += [
        ("bearer-10k", "GET", f"/{c}", {"Authorization": "Bearer " + "A" * 10000}, None, {401}),
        ("bearer-empty", "GET", f"/{c}", {"Authorization": "Bearer "}, None, {200, 401}),
        ("basic-auth", "GET", f"/{c}", {"Authorization": "Basic YWRtaW46YWRtaW4="}, None, {200, 401}),
        ("request-id-8k", "GET", "/healthz", {"X-Request-Id": "r" * 8000}, None, {200}),
        ("content-type-junk", "POST", f"/{c}", {"Content-Type": "application/json; charset=\u00ff".encode("latin-1")},
         b"{}", {201, 415}),
        ("content-type-xml", "POST", f"/{c}", {"Content-Type": "application/xml"}, b"<a/>", {415}),
        ("accept-html-list", "GET", f"/{c}?query=" + urllib.parse.quote('{"a":"<script>"}'), {"Accept": "text/html"}, None, {200}),
        ("if-none-match-huge", "GET", f"/{c}", {"If-None-Match": "x" * 30000}, None, {200}),
    ]
    return cases


WIRE_CASES = [
    # name, raw bytes, whether the server may close without an answer
    ("content-length-negative", b"POST /hostile HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{}"),
    ("content-length-junk", b"POST /hostile HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}"),
    ("content-length-1e12", b"POST /files HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000\r\n\r\nabc"),
    ("content-length-twice", b"POST /hostile HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}"),
    ("chunked-bad-size", b"POST /hostile HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"),
    ("chunked-huge-size", b"POST /hostile HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n{}\r\n"),
    ("chunked-and-length", b"POST /hostile HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
    ("header-70k", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n"),
    ("headers-5000", b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(5000)) + b"\r\n"),
    ("header-folding", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: a\r\n injected: yes\r\n\r\n"),
    ("nul-in-path", b"GET /hostile/\x00../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("control-in-header", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: \x01\x02\x1b[31m\r\n\r\n"),
    ("http-0.9", b"GET /healthz\r\n\r\n"),
    ("http-2-preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
    ("absolute-uri", b"GET http://evil.example/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("asterisk", b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("uri-100k", b"GET /hostile?query=" + b"a" * 100000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("garbage", bytes(range(256)) * 4),
    ("pipelined-200", b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" * 200),
]


def _raw_exchange(port, data, timeout=5.0):
    """Sends raw bytes; returns the status of the first answer, or None when the server closed without one."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(data)
        except OSError:
            pass
        buf = b""
        deadline = time.monotonic() + timeout
        while b"\r\n" not in buf and time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    line = buf.split(b"\r\n", 1)[0].split()
    if len(line) >= 2 and line[0].startswith(b"HTTP/") and line[1].isdigit():
        return int(line[1])
    return None


def _big_request(port, method, path, headers, body, timeout=30.0):
    """Sends the headers and as much of `body` as the server reads, then reads the
    answer: a server may answer 413 and close before the whole body is sent."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        s.sendall(head.encode())
        view, sent = memoryview(body), 0
        while sent < len(body):
            r, w, _ = select.select([s], [s], [], timeout)
            if r:
                break  # the server answered early
            if not w:
                break
            try:
                sent += s.send(view[sent:sent + 65536])
            except OSError:
                break
        resp = http.client.HTTPResponse(s)
        resp.begin()
        return Response(resp.status, resp.getheaders(), resp.read())
    finally:
        s.close()


def _contract(reply):
    """README: every response carries X-Request-Id; errors are JSON {error, description}."""
    problems = []
    if "x-request-id" not in reply.headers:
        problems.append("no X-Request-Id")
    if reply.status >= 400:
        try:
            body = json.loads(reply.raw)
            if not (isinstance(body, dict) and set(body) == {"error", "description"}):
                problems.append(f"error body {reply.raw[:80]!r}")
        except ValueError:
            problems.append(f"error body is not JSON ({reply.headers.get('content-type')}: {reply.raw[:60]!r})")
    return problems


def run_corpus(daemon, seed=1, log=print):
    cases = corpus_cases(seed)
    server_errors, unexpected, contract, leaks, no_answer = [], [], [], [], []
    # Something real to hit: a document and a file for the range cases.
    one_request(daemon.port, "POST", f"/{COLLECTION}", {"_id": "deep", "a": 1})
    up = one_request(daemon.port, "POST", "/files", png(32, 32, 3), {"Content-Type": "image/png"})
    fid = up.json()["_id"]
    for rng_header in ("bytes=-0", "bytes=0--1", "bytes=99999999999999999999999-", "bytes=1-0", "bytes=0-0,1-1",
                       "bytes=-99999999999999999999", "bytes=" + "0-" * 1000, "pages=1-2", "bytes=\x00"):
        for url in (f"/files/{fid}", f"/files/{fid}/thumbnail?size=16"):
            cases.append((f"range {rng_header[:30]} {url[-10:]}", "GET", url, {"Range": rng_header}, None, {200, 206, 416}))
    tried = 0
    for name, method, path, headers, body, allowed in cases:
        tried += 1
        try:
            if body is not None and len(body) > (8 << 20):
                reply = _big_request(daemon.port, method, path, headers, body)
            else:
                reply = one_request(daemon.port, method, path, body, headers, timeout=30)
        except (OSError, ValueError) as e:
            if not daemon.alive():
                break
            no_answer.append(f"{name}: {type(e).__name__}: {e}")
            continue
        if reply.status >= 500:
            server_errors.append(f"{name}: {method} {path[:80]} -> {reply.status} {reply.raw[:120]!r}")
        elif allowed is not None and reply.status not in allowed:
            unexpected.append(f"{name}: {reply.status} not in {sorted(allowed)}: {reply.raw[:120]!r}")
        elif allowed is None and not (400 <= reply.status < 500):
            unexpected.append(f"{name}: {method} {path[:80]} answered {reply.status}, expected a 4xx")
        for p in _contract(reply):
            contract.append(f"{name}: {reply.status} {p}")
        if name == "sqlite-master-is-just-a-name" and reply.raw.strip() != b"[]":
            leaks.append(f"{name}: /sqlite_master answered {reply.raw[:100]!r}")
        if b"root:x:" in reply.raw or b"SQLite format" in reply.raw:
            leaks.append(f"{name}: response leaks file contents")
        if name in ("image-svg-script", "image-html-script") and reply.status == 201:
            served = one_request(daemon.port, "GET", f"/files/{reply.json()['_id']}")
            h = served.headers
            if not (h.get("content-disposition", "").startswith("attachment") and "sandbox" in h.get("content-security-policy", "")
                    and h.get("x-content-type-options") == "nosniff"):
                leaks.append(f"{name}: active content served without attachment/CSP/nosniff: {h}")
        if name == "image-multipart-traversal-name" and reply.status == 201:
            if (daemon.data_dir.parent / "etc").exists() or not (daemon.data_dir / "files" / "objects").exists():
                leaks.append(f"{name}: the filename reached the file system")
        if tried % 10 == 0 and not daemon.alive():
            break
    for name, raw in WIRE_CASES:
        if not daemon.alive():
            break
        tried += 1
        try:
            status = _raw_exchange(daemon.port, raw)
        except OSError as e:
            status = None
            _ = e
        if status is not None and status >= 500 and status != 501:
            server_errors.append(f"wire {name}: {status}")
    crashed = not daemon.alive() or not daemon.healthy(timeout=5)
    line = (f"hostile corpus: {tried} requests ({len(cases)} HTTP + {len(WIRE_CASES)} raw), "
            f"{len(server_errors) + int(crashed)} failures ({len(server_errors)} 5xx, "
            f"{'a crash' if crashed else 'no crash'}), {len(leaks)} leaks, {len(unexpected)} unexpected 4xx/2xx, "
            f"{len(contract)} JSON-error/X-Request-Id contract violations, {len(no_answer)} closed without an answer; 0 lost")
    return {"line": line, "tried": tried, "server_errors": server_errors, "crashed": crashed, "leaks": leaks,
            "unexpected": unexpected, "contract": contract, "no_answer": no_answer}


# --------------------------------------------------------------------------- bounds

class _Probe:
    """/healthz on a fresh connection every `interval` s, and the daemon's RSS,
    sampled from a separate process (so the drill's own work, under the GIL,
    never delays a probe) while the block runs."""

    def __init__(self, daemon, interval=0.02):
        self.daemon, self.interval = daemon, interval

    @staticmethod
    def _loop(port, pid, interval, stop, out):
        latencies, failures, rss_max = [], [], 0
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                r = one_request(port, "GET", "/healthz", timeout=5)
                if r.status != 200:
                    failures.append(f"/healthz answered {r.status}")
            except OSError as e:
                failures.append(f"/healthz: {type(e).__name__}: {e}")
            latencies.append(time.monotonic() - t0)
            rss_max = max(rss_max, _rss_kib(pid))
            stop.wait(interval)
        out.send((latencies, failures, rss_max))
        out.close()

    def __enter__(self):
        ctx = multiprocessing.get_context("fork")
        self.rss_before = _rss_kib(self.daemon.proc.pid)
        self.stop = ctx.Event()
        self.receive, send = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=self._loop, daemon=True,
                                args=(self.daemon.port, self.daemon.proc.pid, self.interval, self.stop, send))
        self.proc.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.latencies, self.failures, rss_max = self.receive.recv() if self.receive.poll(30) else ([], ["no probe report"], 0)
        self.proc.join(timeout=10)
        rss_max = max(rss_max, _rss_kib(self.daemon.proc.pid))
        self.rss_growth_mib = max(0, rss_max - self.rss_before) / 1024
        return False


def _rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class _Tally:
    """One class of the bounds drill: its requests and what went wrong."""

    def __init__(self, daemon, name):
        self.daemon, self.name = daemon, name
        self.requests, self.failures, self.slowest = 0, [], 0.0

    def send(self, label, method, path, body=None, headers=None, allowed=None, timeout=60):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers = dict(headers or {}, **{"Content-Type": "application/json"})
        t0 = time.monotonic()
        try:
            reply = one_request(self.daemon.port, method, path, body, headers, timeout=timeout)
        except OSError as e:
            self.requests += 1
            self.failures.append(f"{self.name} {label}: no answer: {type(e).__name__}: {e}")
            return None
        self.slowest = max(self.slowest, time.monotonic() - t0)
        self.requests += 1
        if reply.status >= 500 and reply.status != 503:
            self.failures.append(f"{self.name} {label}: {reply.status} {reply.raw[:120]!r}")
        elif allowed is not None and reply.status not in allowed and reply.status != 503:
            self.failures.append(f"{self.name} {label}: {reply.status} not in {sorted(allowed)}: {reply.raw[:120]!r}")
        self.failures += [f"{self.name} {label}: {reply.status} {p}" for p in _contract(reply)]
        return reply


def _q(collection, flt=None, **params):
    items = ([("query", json.dumps(flt))] if flt is not None else []) + [(k, v) for k, v in params.items()]
    return f"/{collection}?" + urllib.parse.urlencode(items, quote_via=urllib.parse.quote)


def _many_keys(n):
    """A JSON object of `n` distinct short keys (base 36), 9 bytes a member at most."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"

    def key(i):
        out = ""
        while True:
            out = digits[i % 36] + out
            i //= 36
            if not i:
                return out
    return b"{" + b",".join(b'"%s":0' % key(i).encode() for i in range(n)) + b"}"


def _bound_paths(t):
    c = COLLECTION
    deep = 1
    for _ in range(19):
        deep = [{"a": deep}]
    t.send("seed", "POST", f"/{c}", {"_id": "deepPath", "a": deep}, allowed={201, 409})
    for parts in (6, 16, 20, 32, 64, 500):
        dotted = ".".join(["a"] * parts)
        ok = {200} if parts <= 32 else {400}
        t.send(f"filter-{parts}", "GET", _q(c, {dotted: 1}), allowed=ok)
        t.send(f"count-{parts}", "GET", _q(f"{c}/_count", {dotted: {"$gt": 0}}), allowed=ok)
        t.send(f"sort-{parts}", "GET", _q(c, {}, sort=json.dumps({dotted: 1})), allowed=ok)
        t.send(f"exists-{parts}", "GET", _q(c, {dotted: {"$exists": False}}), allowed=ok)
        t.send(f"elemMatch-{parts}", "GET", _q(c, {"a": {"$elemMatch": {dotted: 1}}}), allowed=ok | {400})
        t.send(f"or-{parts}", "GET", _q(c, {"$or": [{dotted: 1}, {dotted + ".b": 2}]}), allowed={200, 400})


def _bound_keys(t, keys):
    c = COLLECTION
    body = _many_keys(keys)
    assert len(body) < 1 << 20, len(body)
    json_type = {"Content-Type": "application/json"}
    r = t.send(f"post-{keys}", "POST", f"/{c}", body, json_type, allowed={201})
    doc_id = (r.json() or {}).get("_id") if r is not None and r.status == 201 else None
    if doc_id:
        t.send(f"get-{keys}", "GET", f"/{c}/{doc_id}", allowed={200})
        t.send(f"patch-{keys}", "PATCH", f"/{c}/{doc_id}", body, json_type, allowed={200})
        t.send(f"html-{keys}", "GET", _q(c, {"_id": doc_id}), headers={"Accept": "text/html"}, allowed={200})
    t.send(f"anonymous-put-user-{keys}", "PUT", "/users/x", body, json_type, allowed={401})
    t.send(f"anonymous-patch-user-{keys}", "PATCH", "/users/x", body, json_type, allowed={401})
    t.send(f"signup-{keys}", "POST", "/users", body, json_type, allowed={400})
    t.send(f"login-{keys}", "POST", "/login", body, json_type, allowed={413})
    t.send("login-1500-keys", "POST", "/login", _many_keys(1500), json_type, allowed={400})
    t.send(f"batch-{keys}", "POST", "/_batch", body, json_type, allowed={400})
    # As many keys as a URL holds under evhttp's 64 KiB header cap (past it, libevent's own 400 page).
    t.send("filter-2000-keys", "GET", _q(c, json.loads(_many_keys(2000))), allowed={200, 400})


def _bound_regex(t):
    c = COLLECTION
    t.send("seed", "POST", f"/{c}", {"_id": "regexHaystack", "s": "a" * 20_000}, allowed={201, 409})
    for label, pattern, ok in (
            ("8000-empty-groups", "()" * 8000, {400}),
            ("500-empty-groups", "()" * 500, {400}),
            ("64-groups", "(a)" * 64, {200}),
            ("65-groups", "(a)" * 65, {400}),
            ("pattern-1025-bytes", "a" * 1025, {400}),
            ("pattern-20k", "b" * 20_000, {400, 414}),
            ("catastrophic-nested", "^(a+)+$", {200, 400}),
            ("catastrophic-alternation", "^(a|aa)+$", {200, 400}),
            ("catastrophic-optional", "^(a?){60}(a|b)*$x", {200, 400}),
            ("heap-recursion", "^(?:(a)|b)*c", {200, 400}),
            ("backrefs", "^(a*)*\\1\\1\\1b", {200, 400}),
            ("lookahead-star", "(?=(a*))*b", {200, 400}),
            ("verb-no-start-opt", "(*NO_START_OPT)(?:.|.)*(?!)", {200, 400}),
            ("unicode-class-blowup", "[\\p{L}\\p{N}]{1,1000}x", {200, 400})):
        t.send(label, "GET", _q(c, {"s": {"$regex": pattern}}), allowed=ok)
        t.send(label + "-count", "GET", _q(f"{c}/_count", {"s": {"$regex": pattern, "$options": "i"}}), allowed=ok)


def _bound_nul(t):
    c = COLLECTION
    doc = {"_id": "nul\u0000id", "s": "x\u0000y", "t": ["\u0000"], "k\u0000ey": 1}
    t.send("post-nul-id", "POST", f"/{c}", doc, allowed={201, 400, 409})
    r = t.send("post", "POST", f"/{c}", {k: v for k, v in doc.items() if k != "_id"}, allowed={201, 400})
    if r is not None and r.status == 201:
        stored = r.json()
        again = t.send("get", "GET", f"/{c}/{urllib.parse.quote(stored['_id'])}", allowed={200})
        if again is not None and again.status == 200 and again.json() != stored:
            t.failures.append(f"{t.name} round trip: stored {stored!r:.120} read back {again.raw[:120]!r}")
    for label, flt in (("regex-group", {"s": {"$regex": "(\u0000)"}}), ("regex-inner", {"s": {"$regex": "x\u0000y"}}),
                       ("equals", {"s": "x\u0000y"}), ("in", {"t": {"$in": ["\u0000"]}}), ("key", {"k\u0000ey": 1}),
                       ("path", {"a\u0000.b": 1}), ("gt", {"s": {"$gt": "\u0000"}}), ("operator", {"$\u0000": 1}),
                       ("regex-options", {"s": {"$regex": "x", "$options": "\u0000"}})):
        t.send(label, "GET", _q(c, flt), allowed={200, 400})
    t.send("sort", "GET", _q(c, {}, sort=json.dumps({"s\u0000": 1})), allowed={200, 400})
    t.send("id-in-url", "GET", f"/{c}/nul%00id", allowed={200, 404})
    t.send("patch-nul", "PATCH", f"/{c}/nul%00id", {"s": "\u0000\u0000"}, allowed={200, 400, 404})


def _bound_variants(t, variants, workers=4):
    up = t.send("upload", "POST", "/files", png(320, 240, 11), {"Content-Type": "image/png"}, allowed={201})
    if up is None or up.status != 201:
        return None
    fid = up.json()["_id"]
    widths = list(range(20, 20 + variants))
    lock = threading.Lock()

    def worker(mine):
        for w in mine:
            t0 = time.monotonic()
            r = one_request(t.daemon.port, "GET", f"/files/{fid}/thumbnail?w={w}", timeout=60)
            with lock:
                t.slowest = max(t.slowest, time.monotonic() - t0)
                t.requests += 1
                if r.status != 200 and r.status != 503:
                    t.failures.append(f"{t.name} w={w}: {r.status} {r.raw[:100]!r}")
                t.failures += [f"{t.name} w={w}: {r.status} {p}" for p in _contract(r)]
    threads = [threading.Thread(target=worker, args=(widths[i::workers],)) for i in range(workers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    t.send("configured-size", "GET", f"/files/{fid}/thumbnail?size=128", allowed={200})
    thumbs = t.daemon.data_dir / "files" / "thumbs" / fid[-2:] / fid  # FileLayout.thumbDirectory
    names = [p.name for p in thumbs.iterdir()] if thumbs.is_dir() else []
    one_off = [n for n in names if n.split(".")[0] not in ("128", "512")]
    if not names:
        t.failures.append(f"{t.name}: no thumbnails found under {thumbs}")
    if len(one_off) > 16:
        t.failures.append(f"{t.name}: {len(one_off)} one-off variants stored for one file (at most 16)")
    return len(one_off)


def run_bounds(daemon, keys=85_000, variants=200, log=print):
    """Resource bounds from the hostile review (issue #14): long query paths,
    objects with many keys, regex heap and backtracking, NUL bytes, oversized
    thumbnail variants. Each class runs under a /healthz probe and an RSS watch."""
    classes = [("paths", _bound_paths), ("keys", lambda t: _bound_keys(t, keys)), ("regex", _bound_regex),
               ("nul", _bound_nul), ("variants", lambda t: _bound_variants(t, variants))]
    results, failures, stored_variants = [], [], None
    for name, run in classes:
        if not daemon.alive():
            failures.append(f"{name}: the daemon is gone")
            continue
        tally = _Tally(daemon, name)
        with _Probe(daemon) as probe:
            outcome = run(tally)
        if name == "variants":
            stored_variants = outcome
        worst = max(probe.latencies) * 1000 if probe.latencies else float("nan")
        failures += tally.failures + [f"{name}: {f}" for f in probe.failures[:5]]
        if not probe.latencies or worst >= 100:
            failures.append(f"{name}: slowest /healthz probe {worst:.1f} ms (must stay under 100 ms)")
        if probe.rss_growth_mib >= 200:
            failures.append(f"{name}: RSS grew {probe.rss_growth_mib:.0f} MiB (must stay under 200 MiB)")
        results.append({"name": name, "requests": tally.requests, "probes": len(probe.latencies), "probe_max_ms": worst,
                        "rss_mib": probe.rss_growth_mib, "slowest_s": tally.slowest, "failures": len(tally.failures)})
        log(f"  bounds {name}: {tally.requests} requests, {len(tally.failures)} failures, slowest {tally.slowest:.2f} s, "
            f"{len(probe.latencies)} probes (max {worst:.1f} ms), RSS +{probe.rss_growth_mib:.0f} MiB")
    crashed = not daemon.alive() or not daemon.healthy(timeout=5)
    total = sum(r["requests"] for r in results)
    per_class = ", ".join(f"{r['name']} {r['requests']}" for r in results)
    probes = sum(r["probes"] for r in results)
    worst = max((r["probe_max_ms"] for r in results), default=float("nan"))
    rss = max((r["rss_mib"] for r in results), default=0)
    slowest = max((r["slowest_s"] for r in results), default=0)
    line = (f"hostile bounds ({keys} keys, {variants} thumbnail widths): {total} requests ({per_class}), "
            f"{len(failures) + int(crashed)} failures ({'a crash' if crashed else 'no crash'}), "
            f"{stored_variants} one-off variants stored for the file, slowest request {slowest:.2f} s, "
            f"RSS growth at most {rss:.0f} MiB, {probes} /healthz probes: max {worst:.1f} ms; 0 lost")
    return {"line": line, "requests": total, "classes": results, "failures": failures, "crashed": crashed,
            "stored_variants": stored_variants}


# --------------------------------------------------------------------------- slowloris

def run_slowloris(daemon, connections=300, seconds=20.0, probe_interval=0.02, slow_threshold=1.0, log=print):
    """`connections` sockets each send a GET's headers one byte at a time (a
    round every 0.1 s) for `seconds`, while /healthz is probed on fresh
    connections. Returns the p50/p99/max latency of the probes."""
    request = (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slowloris-drill\r\n"
               + b"".join(b"X-Slow-%d: %s\r\n" % (i, b"z" * 20) for i in range(200)))
    socks, opened_fail = [], 0
    for _ in range(connections):
        try:
            s = socket.create_connection(("127.0.0.1", daemon.port), timeout=2)
            s.setblocking(False)
            socks.append([s, 0])
        except OSError:
            opened_fail += 1
    latencies, probe_failures = [], []
    stop = threading.Event()

    def probe():
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                r = one_request(daemon.port, "GET", "/healthz", timeout=5)
                dt = time.monotonic() - t0
                if r.status != 200:
                    probe_failures.append(f"status {r.status}")
                latencies.append(dt)
                if dt > slow_threshold:
                    probe_failures.append(f"slow probe {dt:.2f} s")
            except OSError as e:
                probe_failures.append(f"{type(e).__name__}: {e}")
                latencies.append(time.monotonic() - t0)
            time.sleep(probe_interval)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    dropped = 0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and socks:
            for entry in list(socks):
                s, pos = entry
                try:
                    if pos < len(request):
                        s.send(request[pos:pos + 1])
                        entry[1] += 1
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    dropped += 1
                    socks.remove(entry)
                    s.close()
            time.sleep(0.1)
    finally:
        stop.set()
        prober.join(timeout=10)
        held = len(socks)
        for s, _ in socks:
            s.close()
    alive = daemon.alive() and daemon.healthy(timeout=5)
    p50, p99 = percentile(latencies, 50) * 1000, percentile(latencies, 99) * 1000
    mx = max(latencies) * 1000 if latencies else float("nan")
    failures = len(probe_failures) + (0 if alive else 1)
    line = (f"slowloris: {connections} slow connections for {seconds:.0f} s ({held} still held at the end, "
            f"{dropped} closed by the server, {opened_fail} refused), {len(latencies)} /healthz probes: "
            f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {mx:.1f} ms; {failures} failures, 0 lost")
    return {"line": line, "p50_ms": p50, "p99_ms": p99, "max_ms": mx, "probes": len(latencies),
            "failures": probe_failures + ([] if alive else ["daemon not healthy after the attack"]), "held": held,
            "dropped": dropped}


# --------------------------------------------------------------------------- schemathesis

SCHEMATHESIS_CHECKS = "all"

# The live streams (GET /events, /{collection}/_live, /users/_live, /files/_live) never end
# on their own. schemathesis (4.32+) reads a text/event-stream until it ends, sends 20
# events or the request timeout passes, then checks the events it got against the spec, so
# an open 200 stream is a pass, not a hang. But an idle stream lasts the whole timeout
# (heartbeats are comments, not events; with the 15 s heartbeat a read can run to 30 s):
# at --request-timeout 20 the ~40 streams of the quick run (3 examples) would add about
# 8 minutes. So these operations get 3 s (about 1 minute; their 4xx answers come at once)
# and the rest keep 20 s. They are still fuzzed, not excluded: bad subscribe, query, since
# and Last-Event-ID get their 400s, and the events a 200 sends are checked against the
# spec's LiveEvent schema.
#
# `--checks all` runs with these settings, each because the spec cannot say more:
# - positive_data_acceptance also expects 412: the generator makes up `If-Match` and
#   `If-None-Match` values, and a made-up ETag fails its precondition (RFC 9110 §13.1).
# - negative_data_rejection also expects 412: preconditions are evaluated before the
#   request content (RFC 9110 §13.2.1), so an invalid body under a failing `If-Match` is 412.
# - `since` and `Last-Event-ID` (delta sync, live streams) are opaque cursors this
#   daemon issued, bound to its data's epoch: a made-up one is 400 `InvalidCursor`
#   by design, so those operations also expect 400 for schema-valid requests, and a
#   delta without credentials may get that 400 before the 401.
# - unsupported_method is excluded (--exclude-checks): libevent 2.1 answers a method it does not know (QUERY)
#   itself, 501 or 400, before roostd sees the request; roostd's own 405s (TRACE, ...)
#   are tested by test_trace_gets_a_json_405_not_libevents_501.
SCHEMATHESIS_CONFIG = """\
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "412", "429"]

[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "412", "413", "415", "422", "428", "429"]

[[operations]]
include-path-regex = "^/events$|/_live$"
request-timeout = 3
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "412", "429"]

# A list's `after` is a cursor Roost handed out: a made-up one is 400, as for `since`.
[[operations]]
include-path-regex = "^/users$|^/.collection.$"
include-method = "GET"
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "412", "429"]

[[operations]]
include-path-regex = "/_deltaset$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "412", "429"]
checks.missing_required_header.expected-statuses = ["400", "401", "403", "406", "415", "422"]
"""


def schemathesis_command():
    exe = shutil.which("schemathesis", path=str(pathlib.Path(sys.executable).parent))
    if exe:
        return [exe]
    return [sys.executable, "-m", "schemathesis.cli"]


def run_fuzz(daemon, max_examples=50, max_time=None, seed=None, workdir=None, phases=None, token=ADMIN_TOKEN,
             checks=SCHEMATHESIS_CHECKS, log=print):
    """schemathesis against openapi.yaml. Failures: 5xx (ST101) and a crash."""
    workdir = pathlib.Path(workdir or tempfile.mkdtemp(prefix="roost-fuzz-"))
    report = workdir / "schemathesis.json"
    config = workdir / "schemathesis.toml"
    config.write_text(SCHEMATHESIS_CONFIG)
    cmd = schemathesis_command() + [
        "--config-file", str(config), "run", str(REPO / "openapi.yaml"), "--url", f"http://127.0.0.1:{daemon.port}", "--checks", checks, "--exclude-checks", "unsupported_method",
        "--max-examples", str(max_examples), "--no-shrink", "--workers", "2", "--request-timeout", "20",
        "--report", "json", "--report-json-path", str(report), "--warnings", "off"]
    if token:
        cmd += ["-H", f"Authorization: Bearer {token}"]
    if max_time:
        cmd += ["--max-time", str(int(max_time))]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if phases:
        cmd += ["--phases", phases]
    env = dict(os.environ, SCHEMATHESIS_HOOKS="", NO_COLOR="1")
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=str(workdir), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=(max_time or 600) + 120)
    output = proc.stdout.decode(errors="replace")
    (workdir / "schemathesis.out").write_text(output)
    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError):
        data = None
    if data is None:
        raise RuntimeError(f"schemathesis produced no report (exit {proc.returncode}):\n{output[-3000:]}")
    generated = data["test_cases"]["generated"]
    server_errors, undeclared_501, mismatches = [], [], []
    for failure in data["failures"]:
        for op in failure["operations"]:
            entry = f"{failure['code']} {failure['title']}: {op}"
            if failure["code"] == "ST101":
                method = op.split(" ", 1)[0]
                # A method libevent 2.1 does not know at all (e.g. QUERY) gets its
                # own 501 before roostd sees the request; 501 is the status RFC 9110
                # gives an unrecognised method, so it is counted apart, not failed.
                known = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT")
                (server_errors if method in known else undeclared_501).append(entry)
            elif failure["code"] != "ST204":
                mismatches.append(entry)
    errors = [f"{e.get('operation', '')}: {str(e.get('message', e))[:200]}" for e in data.get("errors", [])]
    crashed = not daemon.alive() or not daemon.healthy(timeout=5)
    failures = len(server_errors) + int(crashed)
    line = (f"schemathesis {data['schemathesis_version']} fuzz (seed {data['seed']}): {generated} requests over "
            f"{data['operations']['tested']} operations, {failures} failures ({len(server_errors)} 5xx from handlers, "
            f"{len(undeclared_501)} libevent 501s for unknown methods, {'a crash' if crashed else 'no crash'}), "
            f"{len(mismatches)} spec conformance findings, {len(errors)} errors; 0 lost; {time.monotonic() - t0:.0f} s")
    return {"line": line, "generated": generated, "server_errors": server_errors, "undeclared_501": undeclared_501,
            "mismatches": mismatches, "errors": errors, "crashed": crashed, "output": output, "report": data}


# --------------------------------------------------------------------------- main

def with_daemon(fn, workdir=None, config=CONFIG):
    own = None
    if workdir is None:
        own = tempfile.TemporaryDirectory(prefix="roost-hostile-")
        workdir = own.name
    daemon = Roostd(workdir, config)
    try:
        daemon.start()
        return fn(daemon)
    finally:
        daemon.close()
        if own is not None:
            own.cleanup()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="corpus,bounds,slowloris,fuzz")
    ap.add_argument("--keys", type=int, default=85_000)
    ap.add_argument("--variants", type=int, default=200)
    ap.add_argument("--connections", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--max-examples", type=int, default=100)
    ap.add_argument("--max-time", type=int, default=300)
    ap.add_argument("--seed", type=int)
    args = ap.parse_args(argv)
    bad = False
    for part in args.parts.split(","):
        if part == "corpus":
            r = with_daemon(lambda d: run_corpus(d, seed=args.seed or 1))
            for e in r["server_errors"] + r["leaks"] + r["unexpected"] + r["contract"] + r["no_answer"]:
                print("  ", e, file=sys.stderr)
            bad |= bool(r["server_errors"] or r["crashed"] or r["leaks"])
        elif part == "bounds":
            r = with_daemon(lambda d: run_bounds(d, args.keys, args.variants, log=lambda m: print(m, file=sys.stderr)))
            for e in r["failures"][:40]:
                print("  ", e, file=sys.stderr)
            bad |= bool(r["failures"] or r["crashed"])
        elif part == "slowloris":
            r = with_daemon(lambda d: run_slowloris(d, args.connections, args.seconds))
            for e in r["failures"][:20]:
                print("  ", e, file=sys.stderr)
            bad |= bool(r["failures"])
        elif part == "fuzz":
            r = with_daemon(lambda d: run_fuzz(d, args.max_examples, args.max_time, args.seed))
            for e in r["server_errors"] + r["undeclared_501"] + r["mismatches"] + r["errors"]:
                print("  ", e, file=sys.stderr)
            bad |= bool(r["server_errors"] or r["crashed"])
        else:
            raise SystemExit(f"unknown part {part}")
        print(r["line"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
