"""Small things that cost a newcomer an hour (issue #41): an unquoted
If-Match is a 400 that says to quote it (never a false 412), the 400 for a
large limit points to `after`, and the HTML view of a collection pages,
renders arrays and `_acl` readably and answers a browser's anonymous visit
to a non-public collection with a sign-in hint, and a `$nearSphere` list
says how far each place is (`_distance`, metres)."""

import html
import json
import math
import re
import urllib.parse

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, Roostd, assert_error, png

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


@pytest.fixture(scope="module")
def roost(tmp_path_factory):
    cfg = FAST_HASHING + f"admin_token: {ADMIN_TOKEN}\n" + ("default_permission: shared\ncollections:\n  spots: {permission: public}\n  diary: {permission: private}\n"
                          "  places: {permission: public, indexes: [\"location:geo\"]}\n  pins: {permission: public}\n")
    with Roostd(tmp_path_factory.mktemp("newcomer"), cfg).start() as d:
        yield d


@pytest.fixture(scope="module")
def alice(roost):
    return roost.sign_up("alice")


@pytest.mark.parametrize("collection", ["notes", "diary", "spots"])
@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
def test_an_unquoted_if_match_is_a_400_that_says_so(roost, alice, collection, method):
    token = alice["token"]
    created = roost.call("POST", f"/{collection}", {"text": "a"}, token=token)
    assert created.status == 201
    etag = created.header("etag")
    path = f"/{collection}/{created.body['_id']}"
    body = None if method == "DELETE" else {"text": "b"}
    bare = roost.call(method, path, body, token=token, headers={"If-Match": etag.strip('"')})
    assert_error(bare, 400, "BadRequest")
    assert "double quotes" in bare.body["description"]
    assert_error(roost.call(method, path, body, token=token, headers={"If-None-Match": etag.strip('"')}), 400, "BadRequest")
    # Quoted (strong or weak) and * still work as before.
    assert roost.call(method, path, body, token=token, headers={"If-Match": f"W/{etag}, {etag}"}).status in (200, 204)


def test_an_unquoted_if_match_on_a_user_record(roost):
    me = roost.sign_up("bob")
    path = f"/users/{me['user']['_id']}"
    etag = roost.call("GET", path, token=me["token"]).header("etag")
    assert_error(roost.call("PATCH", path, {"nick": "b"}, token=me["token"], headers={"If-Match": etag.strip('"')}), 400, "BadRequest")
    assert roost.call("PATCH", path, {"nick": "b"}, token=me["token"], headers={"If-Match": etag}).status == 200


def test_an_unquoted_if_match_reveals_no_other_users_row(roost, alice):
    mine = roost.call("POST", "/diary", {"text": "secret"}, token=alice["token"]).body["_id"]
    other = roost.sign_up("carol")["token"]
    plain = roost.call("PATCH", f"/diary/{mine}", {"text": "x"}, token=other)
    bare = roost.call("PATCH", f"/diary/{mine}", {"text": "x"}, token=other, headers={"If-Match": "2026-01-01T00:00:00.000Z"})
    missing = roost.call("PATCH", "/diary/nothing-here", {"text": "x"}, token=other, headers={"If-Match": "2026-01-01T00:00:00.000Z"})
    assert plain.status == bare.status == missing.status, (plain, bare, missing)


def test_the_limit_error_points_to_after(roost, alice):
    r = roost.call("GET", "/notes?limit=5000", token=alice["token"])
    assert_error(r, 400, "InvalidQuery")
    assert "after=" in r.body["description"] and "X-Roost-Next" in r.body["description"]
    assert "skip" not in r.body["description"]


def test_the_html_view_pages_and_renders_arrays_and_acl(roost, alice):
    for i in range(3):
        assert roost.call("POST", "/spots", {"name": f"spot {i}", "tags": ["park", "view"], "where": {"city": "Oslo"}},
                          token=alice["token"]).status == 201
    first = roost.call("GET", "/spots?limit=2&sort=%7B%22name%22%3A1%7D&query=%7B%22tags%22%3A%22park%22%7D", headers=BROWSER)
    assert first.status == 200 and first.header("content-type").startswith("text/html")
    page = html.unescape(first.raw.decode())
    assert "park, view" in page and "city: Oslo" in page
    assert re.search(r"creator: " + re.escape(alice["user"]["_id"]), page)
    assert "spot 0" in page and "spot 1" in page and "spot 2" not in page
    link = re.search(r'id="next-page" href="([^"]+)"', first.raw.decode()).group(1)
    second = roost.call("GET", html.unescape(link), headers=BROWSER)
    assert second.status == 200
    assert "spot 2" in second.raw.decode() and "spot 0" not in second.raw.decode()
    assert 'id="next-page"' not in second.raw.decode()


@pytest.mark.parametrize("collection", ["notes", "diary"])
def test_a_browser_gets_a_sign_in_hint_for_a_non_public_collection(roost, collection):
    r = roost.call("GET", f"/{collection}", headers=BROWSER)
    assert r.status == 401 and r.header("content-type").startswith("text/html")
    assert "Sign in to read this collection" in r.raw.decode() and 'href="/_/"' in r.raw.decode()
    assert r.header("www-authenticate")
    assert_error(roost.call("GET", f"/{collection}"), 401)        # an app still gets JSON


def test_get_files_lists_the_callers_own_uploads_in_pages(roost):
    ann, ben = roost.sign_up("ann"), roost.sign_up("ben")

    def upload(who, seed):
        r = roost.call("POST", "/files", raw_body=png(20 + seed, 10, seed), token=who["token"], headers={"Content-Type": "image/png"})
        assert r.status == 201, r
        return r.body["_id"]
    anns = [upload(ann, i) for i in range(3)]
    bens = [upload(ben, 9)]
    first = roost.call("GET", "/files?limit=2", token=ann["token"])
    assert first.status == 200 and [f["_id"] for f in first.body] == anns[::-1][:2]       # newest first
    assert first.header("x-roost-next") == anns[1]
    second = roost.call("GET", f"/files?limit=2&after={first.header('x-roost-next')}", token=ann["token"])
    assert [f["_id"] for f in second.body] == [anns[0]] and second.header("x-roost-next") is None
    assert [f["_id"] for f in roost.call("GET", "/files", token=ben["token"]).body] == bens
    # Another's file as a position reveals nothing: an empty page, as for an unknown id.
    assert roost.call("GET", f"/files?after={bens[0]}", token=ann["token"]).body == []
    assert roost.call("GET", "/files?after=ffffffffffffffffffffffff", token=ann["token"]).body == []
    assert_error(roost.call("GET", "/files"), 401)
    assert_error(roost.call("GET", "/files", token=ADMIN_TOKEN), 403, "Forbidden")  # the admin uploads as no user
    for bad in ("limit=0", "limit=1001", "limit=x", "after=../x"):
        assert_error(roost.call("GET", f"/files?{bad}", token=ann["token"]), 400)


def _metres(lng1, lat1, lng2, lat2):
    """Haversine on the sphere of radius 6,378,100 m, as Roost measures."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lng2 - lng1) / 2) ** 2
    return 2 * math.asin(min(1, math.sqrt(h))) * 6378100.0


@pytest.mark.parametrize("collection", ["places", "pins"])   # with a geo index and without
@pytest.mark.parametrize("form", ["legacy", "geojson"])
def test_a_near_sphere_list_carries_each_distance_in_metres(roost, collection, form):
    centre = (-122.4194, 37.7749)   # San Francisco
    spots = {"ferry": [-122.3933, 37.7955], "twin": {"type": "Point", "coordinates": [-122.4477, 37.7544]},
             "oakland": [-122.2711, 37.8044], "nowhere": None}
    for name, location in spots.items():
        doc = {"name": name} if location is None else {"name": name, "location": location}
        assert roost.call("POST", f"/{collection}", doc).status == 201
    near = centre if form == "legacy" else {"$geometry": {"type": "Point", "coordinates": list(centre)}}
    query = {"location": {"$nearSphere": near, "$maxDistance": 20000}}
    r = roost.call("GET", f"/{collection}?query=" + urllib.parse.quote(json.dumps(query)))
    assert r.status == 200, r
    names = [d["name"] for d in r.body]
    assert names[:3] == ["ferry", "twin", "oakland"] and "nowhere" not in names, names
    for d in r.body:
        point = d["location"] if isinstance(d["location"], list) else d["location"]["coordinates"]
        expected = _metres(centre[0], centre[1], point[0], point[1])
        assert abs(d["_distance"] - expected) < 1e-6 * expected + 1e-6, (d, expected)
    assert [d["_distance"] for d in r.body] == sorted(d["_distance"] for d in r.body)
    # Not stored: a plain list and a get carry no `_distance`.
    plain = roost.call("GET", f"/{collection}")
    assert plain.status == 200 and all("_distance" not in d for d in plain.body)
    one = roost.call("GET", f"/{collection}/{r.body[0]['_id']}")
    assert one.status == 200 and "_distance" not in one.body
    for d in r.body + plain.body:
        roost.call("DELETE", f"/{collection}/{d['_id']}")


@pytest.mark.parametrize("fields", [None, ["name"]])
def test_a_near_sphere_page_adds_the_distance_last_whole_or_projected(roost, fields):
    """The distance the engine ordered by is the one shown, as the last member (SQLite
    hands it on with the page instead of parsing each document again)."""
    centre = (2.35, 48.85)
    for i in range(30):
        assert roost.call("POST", "/places", {"name": f"p{i}", "location": [2.35 + i * 0.001, 48.85 + i * 0.0005]}).status == 201
    query = {"location": {"$nearSphere": {"$geometry": {"type": "Point", "coordinates": list(centre)}}}}
    path = "/places?limit=10&query=" + urllib.parse.quote(json.dumps(query))
    if fields:
        path += "&fields=" + ",".join(fields)
    r = roost.call("GET", path)
    assert r.status == 200 and [d["name"] for d in r.body] == [f"p{i}" for i in range(10)], r
    for d in r.body:
        if fields:  # the projection leaves out the point, so the page is not measured again
            assert set(d) == {"_id", "name"}, d
        else:
            assert list(d)[-1] == "_distance", d
            expected = _metres(centre[0], centre[1], *d["location"])
            assert abs(d["_distance"] - expected) < 1e-6 * expected + 1e-6, (d, expected)
    listed = roost.call("GET", "/places?limit=100").body
    for d in listed:
        if d.get("name", "").startswith("p") and d["name"][1:].isdigit():
            roost.call("DELETE", f"/places/{d['_id']}")
