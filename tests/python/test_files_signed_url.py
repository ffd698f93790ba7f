"""Signed file URLs (issue #40, "Files"): `POST /files/:id/url` gives a
caller who may read a private file a short-lived URL that loads it (or one
thumbnail size) with no Authorization header, for `<img src>` and
`AsyncImage`. The signature is bound to the file, the variant and the expiry;
anything else is a JSON 403, a deleted file 404. Run on the local file store
and on S3 (moto), on both engines (ENGINE_SUITE)."""

import contextlib
import json
import re
import time
import urllib.parse

import pytest

from roost_harness import ADMIN_TOKEN, Roostd, assert_error, png
from roost_harness.s3 import MotoS3

MAX_TTL = 600
CONFIG = f"""\
password_cost: owasp
admin_token: {ADMIN_TOKEN}
default_permission: shared
files_permission: private
thumbnail_workers: 1
thumbnail_sizes: [32]
file_url_max_ttl: {MAX_TTL}
"""


@pytest.fixture(scope="module", params=["local", "s3"])
def roost(request, tmp_path_factory):
    with contextlib.ExitStack() as stack:
        config, env = CONFIG, None
        if request.param == "s3":
            s3 = stack.enter_context(MotoS3(tmp_path_factory.mktemp("moto")))
            config, env = CONFIG + s3.config(prefix="signed"), s3.env()
        node = Roostd(tmp_path_factory.mktemp("signed"), config, env=env)
        node.start()
        yield node
        node.stop()
        node.close()


@pytest.fixture(scope="module")
def owner(roost):
    return roost.new_user("owner")


@pytest.fixture(scope="module")
def stranger(roost):
    return roost.new_user("stranger")


def upload(roost, token, body, content_type="image/png"):
    r = roost.call("POST", "/files", token=token, raw_body=body, headers={"Content-Type": content_type})
    assert r.status == 201, r
    return r.body["_id"]


@pytest.fixture(scope="module")
def photo(roost, owner):
    data = png(64, 48, 7)
    return upload(roost, owner[1], data), data


def sign(roost, token, file_id, body=None):
    return roost.call("POST", f"/files/{file_id}/url", body, token=token)


def signed(roost, token, file_id, body=None):
    r = sign(roost, token, file_id, body)
    assert r.status == 200, r
    return r.body


def get(roost, url, headers=None):
    return roost.call("GET", url, headers=headers)


def with_query(url, **changes):
    """`url` with query members replaced (None removes one)."""
    parts = urllib.parse.urlsplit(url)
    query = dict(urllib.parse.parse_qsl(parts.query))
    for key, value in changes.items():
        if value is None:
            query.pop(key, None)
        else:
            query[key] = str(value)
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def test_the_owner_gets_a_url_that_loads_the_private_file_with_no_header(roost, owner, photo):
    file_id, data = photo
    assert roost.call("GET", f"/files/{file_id}").status in (401, 404)  # anonymous, no signature
    before = int(time.time())
    body = signed(roost, owner[1], file_id)
    assert set(body) == {"url", "expires", "expiresAt"}
    assert re.fullmatch(rf"/files/{file_id}\?expires=\d+&sig=[A-Za-z0-9_-]{{43}}", body["url"]), body
    assert before + MAX_TTL <= body["expires"] <= int(time.time()) + MAX_TTL  # no ttl: file_url_max_ttl
    assert body["expiresAt"].startswith(time.strftime("%Y-%m-%dT", time.gmtime(body["expires"])))
    r = get(roost, body["url"])
    assert r.status == 200 and r.raw == data, r
    assert r.header("Content-Type") == "image/png"
    age = int(re.fullmatch(r"private, max-age=(\d+)", r.header("Cache-Control")).group(1))
    assert 0 < age <= MAX_TTL
    # HEAD, a range and a revalidation work as for a signed-in read.
    assert roost.call("HEAD", body["url"]).status == 200
    part = get(roost, body["url"], {"Range": "bytes=0-7"})
    assert part.status == 206 and part.raw == data[:8]
    etag = r.header("ETag")
    assert get(roost, body["url"], {"If-None-Match": etag}).status == 304


def test_a_signed_url_needs_no_session_and_ignores_a_bad_one(roost, owner, photo):
    url = signed(roost, owner[1], photo[0])["url"]
    r = get(roost, url, {"Authorization": "Bearer not-a-session-token"})
    assert r.status == 200 and r.raw == photo[1], r


@pytest.mark.parametrize("who", ["stranger", "anonymous"])
@pytest.mark.parametrize("body", [None, {"ttl": 5}, {"thumbnail": {"size": 16}}, {"nonsense": 1}])
def test_a_caller_who_cannot_read_the_file_gets_the_404_a_read_gives(roost, stranger, photo, who, body):
    token = stranger[1] if who == "stranger" else None
    read = roost.call("GET", f"/files/{photo[0]}", token=token)
    r = sign(roost, token, photo[0], body)
    assert r.status == read.status, (r, read)
    assert r.status == 404 if who == "stranger" else r.status in (401, 404)
    assert r.body == read.body


def test_the_admin_and_a_missing_file(roost, photo):
    body = signed(roost, ADMIN_TOKEN, photo[0])
    assert get(roost, body["url"]).raw == photo[1]
    assert_error(sign(roost, ADMIN_TOKEN, "0123456789abcdef01234567"), 404, "NotFound")
    assert_error(sign(roost, ADMIN_TOKEN, "not-an-id"), 404, "NotFound")


def tampered_variants(url, other_id, file_id):
    sig = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))["sig"]
    flipped = ("B" if sig[0] == "A" else "A") + sig[1:]
    expires = int(dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))["expires"])
    return {
        "changed signature": with_query(url, sig=flipped),
        "cut signature": with_query(url, sig=sig[:-4]),
        "no signature": with_query(url, sig=None),
        "no expiry": with_query(url, expires=None),
        "later expiry": with_query(url, expires=expires + 1),
        "expiry not a number": with_query(url, expires="soon"),
        "another file": url.replace(file_id, other_id),
    }


def test_a_changed_or_moved_signature_is_refused(roost, owner, photo):
    other = upload(roost, owner[1], png(20, 20, 8))
    url = signed(roost, owner[1], photo[0])["url"]
    for name, bad in tampered_variants(url, other, photo[0]).items():
        r = get(roost, bad)
        assert_error(r, 403, "InvalidSignature")
    # Still serving, and the real one still works.
    assert get(roost, url).status == 200


def test_a_signature_is_bound_to_its_size(roost, owner, photo):
    file_id = photo[0]
    original = signed(roost, owner[1], file_id)["url"]
    small = signed(roost, owner[1], file_id, {"thumbnail": {"size": 16}})["url"]
    assert small.startswith(f"/files/{file_id}/thumbnail?size=16&expires=")
    r = get(roost, small)
    assert r.status == 200 and r.header("Content-Type") == "image/webp" and r.raw, r
    assert r.header("Cache-Control").startswith("private, max-age=")
    query = urllib.parse.urlsplit(original).query
    moves = [
        f"/files/{file_id}/thumbnail?size=16&{query}",            # the original's signature on a thumbnail
        f"/files/{file_id}/thumbnail?{query}",                    # ... on the default thumbnail
        f"/files/{file_id}?{urllib.parse.urlsplit(small).query}",  # a thumbnail's on the original
        with_query(small, size=17),                               # another size
        with_query(small, size=16, w=16, h=16, fit="cover").replace("size=16&", ""),
        with_query(small, size="huge"),                           # not a size at all
    ]
    for bad in moves:
        assert_error(get(roost, bad), 403, "InvalidSignature")


@pytest.mark.parametrize("thumbnail, query", [
    (True, "size=32"),                                  # the first of thumbnail_sizes
    ({}, "size=32"),
    ({"w": 20, "h": 10, "fit": "cover"}, "w=20&h=10&fit=cover"),
    ({"h": 12}, "h=12"),
])
def test_thumbnail_variants(roost, owner, photo, thumbnail, query):
    url = signed(roost, owner[1], photo[0], {"thumbnail": thumbnail, "ttl": 60})["url"]
    assert url.startswith(f"/files/{photo[0]}/thumbnail?{query}&expires="), url
    r = get(roost, url)
    assert r.status == 200 and r.header("Content-Type") == "image/webp" and r.raw, r


def test_a_file_that_is_not_an_image_has_no_thumbnail_url(roost, owner):
    text = upload(roost, owner[1], b"just some words\n", "text/plain")
    assert_error(sign(roost, owner[1], text, {"thumbnail": True}), 404, "NotFound")
    url = signed(roost, owner[1], text)["url"]
    r = get(roost, url)
    assert r.status == 200 and r.raw == b"just some words\n" and r.header("Content-Disposition").startswith("attachment")


@pytest.mark.parametrize("body, code", [
    ({"ttl": 0}, "BadRequest"),
    ({"ttl": -5}, "BadRequest"),
    ({"ttl": "60"}, "BadRequest"),
    ({"ttl": 1.5}, "BadRequest"),
    ({"expires": 99999999999}, "BadRequest"),
    ({"thumbnail": "small"}, "BadRequest"),
    ({"thumbnail": {"size": "16"}}, "BadRequest"),
    ({"thumbnail": {"depth": 3}}, "BadRequest"),
    ({"thumbnail": {"size": 0}}, "InvalidQuery"),
    ({"thumbnail": {"w": 5000}}, "InvalidQuery"),
    ({"thumbnail": {"w": 10, "fit": "stretch"}}, "InvalidQuery"),
    ([1, 2], "InvalidJSON"),
])
def test_a_bad_body_is_a_json_400(roost, owner, photo, body, code):
    assert_error(sign(roost, owner[1], photo[0], body), 400, code)


def test_bad_json_is_a_400(roost, owner, photo):
    r = roost.call("POST", f"/files/{photo[0]}/url", token=owner[1], raw_body=b"{not json", headers={"Content-Type": "application/json"})
    assert_error(r, 400, "InvalidJSON")


def test_ttl_is_cut_to_the_setting(roost, owner, photo):
    short = signed(roost, owner[1], photo[0], {"ttl": 30})
    assert abs(short["expires"] - (time.time() + 30)) < 5
    long = signed(roost, owner[1], photo[0], {"ttl": 10 ** 9})
    assert long["expires"] <= time.time() + MAX_TTL


def test_an_expired_url_is_refused(roost, owner, photo):
    small = signed(roost, owner[1], photo[0], {"ttl": 1, "thumbnail": {"size": 16}})["url"]
    original = signed(roost, owner[1], photo[0], {"ttl": 1})["url"]
    time.sleep(2.2)
    for url in (original, small):
        r = get(roost, url)
        assert_error(r, 403, "SignedURLExpired")
        assert "expired" in r.body["description"]


def test_a_deleted_file_is_404(roost, owner):
    file_id = upload(roost, owner[1], png(24, 24, 9))
    url = signed(roost, owner[1], file_id)["url"]
    thumb = signed(roost, owner[1], file_id, {"thumbnail": True})["url"]
    assert get(roost, url).status == 200
    assert roost.call("DELETE", f"/files/{file_id}", token=owner[1]).status == 200
    assert_error(get(roost, url), 404, "NotFound")
    assert_error(get(roost, thumb), 404, "NotFound")


def test_urls_outlive_a_restart(roost, owner, photo):
    """The key is the database's (shared by every node), not the process's."""
    url = signed(roost, owner[1], photo[0])["url"]
    roost.restart()
    r = get(roost, url)
    assert r.status == 200 and r.raw == photo[1], r
