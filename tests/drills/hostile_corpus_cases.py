"""The hostile drill's corpus (hostile_corpus.py sends it): nasty requests built
from seeds, and raw wire cases."""

import json
import os
import random
import struct
import urllib.parse
import zlib

from roost_harness import png, png_from_chunks

from .common import ADMIN_TOKEN


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
