"""CORS (issue #41): `cors.origins` and `cors.credentials`. Preflights are
answered with the allowed methods and headers; every response (errors, live
streams, file downloads) carries `Vary: Origin` and, for an allowed origin,
`Access-Control-Allow-Origin` and the exposed headers. The browser half runs
in real Chromium: a page served by a second local server (another port, so
another origin) calls roostd with `fetch` and `EventSource`."""

import http.client
import subprocess

import pytest

from roost_harness import FAST_HASHING, Roostd, assert_error, binary, png

ALLOWED = "http://127.0.0.1:5173"
OTHER = "http://evil.example"
NEEDED_HEADERS = ("authorization", "content-type", "if-match", "last-event-id", "x-request-id")
EXPOSED = ("etag", "x-roost-next", "x-roost-cursor", "x-total-count", "x-request-id", "retry-after")


def config(cors):
    return FAST_HASHING + "default_permission: public\nfiles_permission: public\n" + cors


@pytest.fixture(scope="module")
def listed(tmp_path_factory):
    with Roostd(tmp_path_factory.mktemp("cors-listed"), config(f'cors:\n  origins: ["{ALLOWED}"]\n')).start() as d:
        yield d


@pytest.fixture(scope="module")
def anyone(tmp_path_factory):
    with Roostd(tmp_path_factory.mktemp("cors-any"), config('cors: {origins: ["*"]}\n')).start() as d:
        yield d


@pytest.fixture(scope="module")
def nocors(tmp_path_factory):
    with Roostd(tmp_path_factory.mktemp("cors-off"), config("")).start() as d:
        yield d


def preflight(daemon, path, origin, method="PUT", headers="if-match, content-type, authorization"):
    return daemon.call("OPTIONS", path, headers={"Origin": origin, "Access-Control-Request-Method": method,
                                                  "Access-Control-Request-Headers": headers})


@pytest.mark.parametrize("path,method", [
    ("/notes", "POST"), ("/notes/n1", "PUT"), ("/notes/n1", "PATCH"), ("/notes/n1", "DELETE"), ("/notes/_live", "GET"),
    ("/files", "POST"), ("/users/login", "POST"), ("/nowhere/at/all/x", "GET"), ("/", "GET"),
])
def test_preflight_from_a_listed_origin_is_answered(listed, path, method):
    r = preflight(listed, path, ALLOWED, method)
    assert r.status == 204, r
    assert r.header("access-control-allow-origin") == ALLOWED
    assert method in r.header("access-control-allow-methods")
    allowed_headers = r.header("access-control-allow-headers").lower()
    assert all(h in allowed_headers for h in NEEDED_HEADERS), allowed_headers
    assert "origin" in r.header("vary").lower()
    assert int(r.header("access-control-max-age")) > 0
    assert r.header("access-control-allow-credentials") is None


def test_preflight_from_another_origin_is_refused_with_json(listed):
    r = preflight(listed, "/notes", OTHER)
    assert_error(r, 403, "OriginNotAllowed")
    assert "cors.origins" in r.body["description"]
    assert r.header("access-control-allow-origin") is None
    assert "origin" in r.header("vary").lower()


def check_cors(r, origin):
    assert r.header("access-control-allow-origin") == origin, (r, r.headers)
    exposed = r.header("access-control-expose-headers").lower()
    assert all(h in exposed for h in EXPOSED), exposed
    assert "origin" in r.header("vary").lower()


@pytest.mark.parametrize("fixture,origin,expected", [("listed", ALLOWED, ALLOWED), ("anyone", OTHER, "*"),
                                                     ("anyone", ALLOWED, "*")])
def test_every_kind_of_response_carries_the_headers(request, fixture, origin, expected):
    daemon = request.getfixturevalue(fixture)
    h = {"Origin": origin}
    created = daemon.call("POST", "/notes", {"text": "hi"}, headers=h)
    assert created.status == 201
    check_cors(created, expected)
    nid = created.body["_id"]
    for r in (daemon.call("GET", f"/notes/{nid}", headers=h), daemon.call("GET", "/notes?limit=1", headers=h),
              daemon.call("GET", "/notes/missing", headers=h),                       # 404
              daemon.call("GET", "/notes", token="not-a-real-token-at-all-0000", headers=h),  # 401
              daemon.call("GET", "/notes?limit=5000", headers=h),                    # 400
              daemon.call("PUT", f"/notes/{nid}", {"text": "x"}, headers={**h, "If-Match": '"1999-01-01T00:00:00.000Z"'}),  # 412
              daemon.call("TRACE", "/notes", headers=h),                             # 405
              daemon.call("GET", "/healthz", headers=h)):
        check_cors(r, expected)
    assert daemon.call("GET", f"/notes/{nid}", headers=h).header("etag")


def test_a_file_upload_and_download_carry_the_headers(listed):
    h = {"Origin": ALLOWED}
    up = listed.call("POST", "/files", raw_body=png(64, 48, 7), headers={**h, "Content-Type": "image/png"})
    assert up.status == 201, up
    check_cors(up, ALLOWED)
    fid = up.body["_id"]
    got = listed.call("GET", f"/files/{fid}", headers=h)
    assert got.status == 200 and got.raw.startswith(b"\x89PNG")
    check_cors(got, ALLOWED)
    ranged = listed.call("GET", f"/files/{fid}", headers={**h, "Range": "bytes=0-3"})
    assert ranged.status == 206
    check_cors(ranged, ALLOWED)


@pytest.mark.parametrize("fixture,origin,expected", [("listed", ALLOWED, ALLOWED), ("anyone", OTHER, "*")])
def test_a_live_stream_carries_the_headers(request, fixture, origin, expected):
    daemon = request.getfixturevalue(fixture)
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=10)
    try:
        conn.request("GET", "/notes/_live", headers={"Origin": origin, "Accept": "text/event-stream"})
        resp = conn.getresponse()
        assert resp.status == 200
        assert resp.getheader("Content-Type").startswith("text/event-stream")
        assert resp.getheader("Access-Control-Allow-Origin") == expected
        assert "ETag" in resp.getheader("Access-Control-Expose-Headers")
        assert "Origin" in resp.getheader("Vary")
    finally:
        conn.close()


def test_a_request_from_an_unlisted_origin_gets_no_allow_header(listed):
    r = listed.call("GET", "/notes", headers={"Origin": OTHER})
    assert r.status == 200                       # the server answers; the browser withholds it
    assert r.header("access-control-allow-origin") is None
    assert "origin" in r.header("vary").lower()
    assert listed.call("GET", "/notes").header("access-control-allow-origin") is None   # no Origin: no CORS


def test_without_cors_nothing_changes(nocors):
    r = preflight(nocors, "/notes", ALLOWED)
    assert r.status == 405
    assert r.header("access-control-allow-origin") is None
    r = nocors.call("GET", "/notes", headers={"Origin": ALLOWED})
    assert r.status == 200 and r.header("access-control-allow-origin") is None and r.header("vary") is None


def test_credentials_echo_the_origin(tmp_path):
    cfg = config(f'cors:\n  origins: ["{ALLOWED}", "https://app.example.org/"]\n  credentials: true\n')
    with Roostd(tmp_path, cfg).start() as d:
        for origin in (ALLOWED, "https://app.example.org"):
            r = d.call("GET", "/notes", headers={"Origin": origin})
            assert r.header("access-control-allow-origin") == origin
            assert r.header("access-control-allow-credentials") == "true"
            p = preflight(d, "/notes", origin)
            assert p.status == 204 and p.header("access-control-allow-credentials") == "true"
        assert d.call("GET", "/notes", headers={"Origin": OTHER}).header("access-control-allow-credentials") is None


@pytest.mark.parametrize("cors,message", [
    ('cors: {origins: ["*"], credentials: true}', "needs the allowed origins listed"),
    ('cors: {origins: ["app.example.org"]}', "is not an origin"),
    ('cors: {origins: ["https://app.example.org/path"]}', "is not an origin"),
    ('cors: {origin: ["*"]}', "unknown setting"),
    ('cors: {credentials: maybe}', "true or false"),
])
def test_a_wrong_cors_config_is_refused(tmp_path, cors, message):
    path = tmp_path / "roost.yaml"
    path.write_text(cors + "\n")
    r = subprocess.run([str(binary()), "check-config", "--config", str(path)], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and message in r.stderr, r.stderr
