"""Live responses of roostd match what openapi.yaml documents: collections,
accounts and files."""

import json
import struct
import uuid
import zlib

import pytest

from roost_harness import running_roostd
from openapi_support import _check_documented, _valid_against, spec


# Live check: each served route answers one of the statuses the spec lists.
LIVE = [
    ("GET", "/", None, None),
    ("GET", "/healthz", None, None),
    ("GET", "/readyz", None, None),
    ("GET", "/metrics", None, None),
    ("POST", "/specLocations", {"_id": "tg", "name": "Tiergarten", "location": [13.35, 52.51], "categories": ["Park"]}, "/{collection}"),
    ("POST", "/specLocations", {"_id": "tg"}, "/{collection}"),
    ("GET", "/specLocations?limit=5&count=true", None, "/{collection}"),
    ("GET", "/specLocations?limit=1001", None, "/{collection}"),
    ("GET", "/specLocations/_count?query=%7B%22name%22%3A%22Tiergarten%22%7D", None, "/{collection}/_count"),
    ("GET", "/specLocations/tg", None, "/{collection}/{id}"),
    ("PUT", "/specLocations/tg", {"name": "Tiergarten", "placename": "Berlin"}, "/{collection}/{id}"),
    ("PUT", "/specLocations/new1", {"name": "New"}, "/{collection}/{id}"),
    ("PATCH", "/specLocations/tg", {"details": "Big."}, "/{collection}/{id}"),
    ("PATCH", "/specLocations/nope", {"details": "Big."}, "/{collection}/{id}"),
    ("DELETE", "/specLocations/tg", None, "/{collection}/{id}"),
    ("DELETE", "/specLocations/tg", None, "/{collection}/{id}"),
    ("GET", "/users", None, "/users"),
    ("GET", "/users/_count", None, "/users/_count"),
    ("GET", "/users/me", None, "/users/me"),
    ("GET", "/users/nobody", None, "/users/{id}"),
    ("PATCH", "/users/nobody", {"title": "x"}, "/users/{id}"),
    ("PUT", "/users/nobody", {"title": "x"}, "/users/{id}"),
    ("DELETE", "/users/nobody", None, "/users/{id}"),
    ("POST", "/users", {"username": "x"}, "/users"),
    ("POST", "/login", {"username": "nobody-at-all", "password": "wrong password"}, "/login"),
    ("POST", "/logout", None, "/logout"),
    ("GET", "/specLocations?query=%7B%22%24where%22%3A%221%22%7D", None, "/{collection}"),
    # An _id counts characters, as the spec's maxLength does: 256 of them are fine, 257 are not.
    ("PUT", "/specLocations/" + "%C3%A9" * 256, {"name": "wide"}, "/{collection}/{id}"),
    ("POST", "/specLocations", {"_id": "\u00e9" * 257}, "/{collection}"),
    ("POST", "/specLocations", {"a\u0000b": 1}, "/{collection}"),
    ("GET", "/%C3%B4/_count", None, "/{collection}/_count"),
    ("PATCH", "/files/x", {"a": 1}, "/{collection}/{id}"),
]


@pytest.mark.parametrize("method,url,body,template", LIVE, ids=[f"{m} {u}" for m, u, _, _ in LIVE])
def test_live_responses_are_documented(roostd, spec, method, url, body, template):
    status, headers, raw = roostd.request(method, url, body)
    assert "X-Request-Id" in headers or "x-request-id" in {k.lower() for k in headers}
    _check_documented(spec, template or url, method, status, raw)


def test_live_account_flow_is_documented(roostd, spec):
    """Signed-in account calls answer with documented statuses and bodies."""
    name = "spec-" + uuid.uuid4().hex[:10]
    password = "spec password 123"

    def call(method, url, template, body=None, token=None):
        headers = {"Authorization": f"Bearer {token}"} if token else None
        status, _, raw = roostd.request(method, url, body, headers)
        _check_documented(spec, template, method, status, raw)
        return status, (json.loads(raw) if raw else None)

    status, session = call("POST", "/users", "/users", {"username": name, "password": password, "email": "s@example.org"})
    assert status == 201 and set(session) == set(spec["components"]["schemas"]["Session"]["required"])
    token, uid = session["token"], session["user"]["_id"]
    assert set(spec["components"]["schemas"]["StoredDocument"]["required"]) <= set(session["user"])
    assert call("POST", "/users", "/users", {"username": name, "password": password})[0] == 409
    assert call("GET", "/users?limit=5&count=true", "/users", token=token)[0] == 200
    assert call("GET", "/users/_count", "/users/_count", token=token)[0] == 200
    assert call("GET", "/users/me", "/users/me", token=token)[0] == 200
    assert call("GET", f"/users/{uid}", "/users/{id}", token=token)[0] == 200
    assert call("PATCH", f"/users/{uid}", "/users/{id}", {"title": "Spec"}, token=token)[0] == 200
    assert call("PUT", f"/users/{uid}", "/users/{id}", {"title": "Spec"}, token=token)[0] == 200
    assert call("PATCH", f"/users/{uid}", "/users/{id}", {"username": "renamed"}, token=token)[0] == 409
    assert call("PATCH", f"/users/{uid}", "/users/{id}", {"password": "new password 1"}, token=token)[0] == 403
    assert call("GET", "/users/nobody", "/users/{id}", token=token)[0] == 404
    status, login = call("POST", "/login", "/login", {"username": name, "password": password})
    assert status == 200
    assert call("GET", "/specAcl", "/{collection}", token="garbage-token")[0] == 401
    assert call("POST", "/logout", "/logout", token=login["token"])[0] == 200
    assert call("POST", "/logout", "/logout", token=login["token"])[0] == 401
    assert call("DELETE", f"/users/{uid}", "/users/{id}", token=token)[0] == 200


def _png(width, height):
    rows = b"".join(b"\x00" + bytes((x * 7 + y * 3) & 0xFF for x in range(width * 3)) for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def _check_file_response(spec, template, method, resp):
    op = spec["paths"][template][method.lower()]
    assert str(resp.status) in op["responses"], f"{method} {template} answered {resp.status}, not in the spec"
    assert resp.header("X-Request-Id")
    if resp.status >= 400:
        assert set(resp.body) == {"error", "description"}, resp
        assert resp.body["error"] in spec["components"]["schemas"]["Error"]["properties"]["error"]["enum"]
    return resp


def test_live_file_flow_is_documented(spec):
    """Every file endpoint answers with statuses, error codes and bodies the spec lists."""
    config = "files_permission: public\ndefault_permission: public\nmax_upload_bytes: 100000\nmax_image_pixels: 1000000\n"
    with running_roostd(config) as d:
        def call(method, url, template, **kw):
            return _check_file_response(spec, template, method, d.call(method, url, **kw))

        image = _png(40, 30)
        r = call("POST", "/files", "/files", raw_body=image, headers={"Content-Type": "image/png"})
        assert r.status == 201
        _valid_against(spec, "FileMeta", r.body)
        fid = r.body["_id"]
        boundary = "roostspec"
        multipart = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"p.png\"\r\n"
                     f"Content-Type: image/png\r\n\r\n").encode() + image + f"\r\n--{boundary}--\r\n".encode()
        r = call("POST", "/files", "/files", raw_body=multipart,
                 headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
        assert r.status == 201 and r.body["name"] == "p.png"
        assert call("POST", "/files", "/files", raw_body=b"", headers={"Content-Type": "image/png"}).body["error"] == "EmptyBody"
        assert call("POST", "/files", "/files", raw_body=b"junk",
                    headers={"Content-Type": f"multipart/form-data; boundary={boundary}"}).body["error"] == "InvalidMultipart"
        assert call("POST", "/files", "/files", raw_body=image, headers={"Content-Type": "image/jpeg"}).status == 415
        assert call("POST", "/files", "/files", raw_body=image[:60], headers={"Content-Type": "image/png"}).body["error"] == "InvalidImage"
        bomb = bytearray(_png(1, 1))
        bomb[16:24] = struct.pack(">II", 5000, 5000)
        bomb[29:33] = struct.pack(">I", zlib.crc32(bytes(bomb[12:29])))
        assert call("POST", "/files", "/files", raw_body=bytes(bomb), headers={"Content-Type": "image/png"}).body["error"] == "ImageTooLarge"
        assert call("POST", "/files", "/files", raw_body=b"x" * 100001,
                    headers={"Content-Type": "application/octet-stream"}).status == 413

        r = call("GET", f"/files/{fid}", "/files/{id}")
        assert r.status == 200 and r.raw == image
        etag = r.header("ETag")
        assert call("GET", f"/files/{fid}", "/files/{id}", headers={"If-None-Match": etag}).status == 304
        r = call("GET", f"/files/{fid}", "/files/{id}", headers={"Range": "bytes=0-9"})
        assert r.status == 206 and r.header("Content-Range") == f"bytes 0-9/{len(image)}"
        assert call("GET", f"/files/{fid}", "/files/{id}", headers={"Range": "bytes=99999-"}).status == 416
        assert call("GET", "/files/000000000000000000000000", "/files/{id}").status == 404
        assert call("GET", "/files/..%2F..%2Fetc%2Fpasswd", "/files/{id}").status == 404

        r = call("GET", f"/files/{fid}/meta", "/files/{id}/meta")
        assert r.status == 200
        _valid_against(spec, "FileMeta", r.body)
        for query in ("size=128", "w=20&h=20&fit=cover", "w=20&h=10&fit=contain", "w=10", ""):
            r = call("GET", f"/files/{fid}/thumbnail?{query}", "/files/{id}/thumbnail")
            assert r.status == 200 and r.header("Content-Type") == "image/webp", query
        for query in ("size=0", "size=abc", "w=3&h=3&fit=stretch", "size=5000"):
            assert call("GET", f"/files/{fid}/thumbnail?{query}", "/files/{id}/thumbnail").status == 400, query
        text = call("POST", "/files", "/files", raw_body=b"plain words", headers={"Content-Type": "text/plain"})
        assert text.status == 201 and "width" not in text.body
        _valid_against(spec, "FileMeta", text.body)
        assert call("GET", f"/files/{text.body['_id']}/thumbnail", "/files/{id}/thumbnail").status == 404

        assert call("DELETE", f"/files/{fid}", "/files/{id}").status == 200
        assert call("DELETE", f"/files/{fid}", "/files/{id}").status == 404
        assert call("GET", f"/files/{fid}/meta", "/files/{id}/meta").status == 404

        r = d.call("GET", "/metrics")
        assert r.status == 200 and r.header("Content-Type").startswith("text/plain")
        assert 'roost_http_requests_total{method="POST",route="/files",status="201"}' in r.raw.decode()


def test_live_file_access_errors_are_documented(spec):
    """With the default `files_permission: shared`: anonymous 401, someone else's delete 403."""
    with running_roostd("password_cost: owasp\n") as d:
        def call(method, url, template, **kw):
            return _check_file_response(spec, template, method, d.call(method, url, **kw))
        assert call("POST", "/files", "/files", raw_body=b"hi", headers={"Content-Type": "text/plain"}).status == 401
        alice = d.sign_up("spec-alice")["token"]
        bob = d.sign_up("spec-bob")["token"]
        r = call("POST", "/files", "/files", raw_body=b"hi", token=alice, headers={"Content-Type": "text/plain"})
        assert r.status == 201
        fid = r.body["_id"]
        assert call("GET", f"/files/{fid}", "/files/{id}").status == 401
        assert call("GET", f"/files/{fid}/meta", "/files/{id}/meta", token="not-a-token").status == 401
        assert call("GET", f"/files/{fid}/meta", "/files/{id}/meta", token=bob).status == 200
        assert call("DELETE", f"/files/{fid}", "/files/{id}", token=bob).status == 403
        assert call("DELETE", f"/files/{fid}", "/files/{id}", token=alice).status == 200


def test_ids_count_characters_and_refuse_nul_as_the_spec_says(roostd):
    """DocumentID's maxLength (256) counts characters, as JSON Schema does, not UTF-8
    bytes; a member name with U+0000 breaks MemberName's pattern and is 400."""
    assert roostd.request("PUT", "/specWide/" + "%C3%A9" * 256, {"name": "wide"})[0] == 201
    assert roostd.request("PUT", "/specWide/" + "%C3%A9" * 257, {"name": "wide"})[0] == 400
    assert roostd.request("POST", "/specWide", {"a\u0000b": 1})[0] == 400


def test_a_batch_id_may_start_with_a_combining_character(roostd):
    """The spec's BatchOperation.path admits any id character but `/` and controls: the
    server split paths on Characters, where "/" and a following emoji modifier (U+1F3FB)
    are one, and refused the path."""
    ops = [{"method": "PUT", "path": "/specBatch/\U0001F3FBtone", "body": {"a": 1}}]
    status, _, raw = roostd.request("POST", "/_batch", {"operations": ops})
    assert status == 200, raw
