"""Issue #15, delta sync's edge cases: listing, empty delta, `more`, bad and forged cursors,
limits, anonymous requests, a cursor from another database or permission level, the users
and files feeds. The randomised convergence is in test_delta_sync.py."""

import base64
import signal
import time
import urllib.parse
import uuid

import pytest

from roost_harness import FAST_HASHING, Roostd, cursors, running_roostd

from delta_sync_support import (
    CONFIG,
    SyncClient,
    delta_path,
    error_code,
    full_list,
    node,
    people,
    png,
)


# ---------------------------------------------------------------------------------------------
# 3. Edge cases

def test_listing_then_empty_delta_then_more(node, people):
    _, token = people["ann"]
    api = node.api(token)
    coll = f"list{uuid.uuid4().hex[:6]}"
    made = [api.call("POST", f"/{coll}", {"_id": f"d{k}", "k": k}).body for k in range(5)]
    r = api.call("GET", delta_path(coll))
    assert r.status == 200 and r.header("Cache-Control") == "no-store", r
    assert r.body["changed"] == made and r.body["deleted"] == [] and r.body["more"] is False
    assert r.header("X-Roost-Cursor") == r.body["cursor"]
    cursor = r.body["cursor"]
    # An empty delta: nothing, more=false, a cursor that still syncs.
    r = api.call("GET", delta_path(coll, cursor))
    assert (r.status, r.body["changed"], r.body["deleted"], r.body["more"]) == (200, [], [], False), r
    assert api.call("GET", delta_path(coll, r.body["cursor"])).body["changed"] == []
    # `more`: pages of 2 over 5 listed rows: 2, 2, 1; the last page says more=false (no empty page after it).
    sizes, c = [], None
    for _ in range(10):
        b = api.call("GET", delta_path(coll, c, limit=2)).body
        sizes.append((len(b["changed"]), b["more"]))
        c = b["cursor"]
        if not b["more"]:
            break
    assert sizes == [(2, True), (2, True), (1, False)], sizes
    # The final listing cursor syncs from where the listing started: nothing new yet.
    assert api.call("GET", delta_path(coll, c)).body["changed"] == []
    # Since a cursor: 4 changes, limit 2: exactly two full pages.
    for k in range(4):
        api.call("PATCH", f"/{coll}/d{k}", {"x": k})
    pages = []
    for _ in range(5):
        b = api.call("GET", delta_path(coll, c, limit=2)).body
        pages.append(([d["_id"] for d in b["changed"]], b["more"]))
        c = b["cursor"]
        if not b["more"]:
            break
    assert pages == [(["d0", "d1"], True), (["d2", "d3"], False)], pages
    # An entity changed twice after the cursor shows once, at its latest change.
    api.call("PATCH", f"/{coll}/d0", {"x": 10})
    api.call("PATCH", f"/{coll}/d4", {"x": 11})
    api.call("PATCH", f"/{coll}/d0", {"x": 12})
    b = api.call("GET", delta_path(coll, c)).body
    assert [(d["_id"], d.get("x")) for d in b["changed"]] == [("d4", 11), ("d0", 12)], b
    # Created after the cursor and deleted again: nowhere. Deleted after the cursor: in deleted.
    c = b["cursor"]
    api.call("POST", f"/{coll}", {"_id": "tmp"})
    api.call("DELETE", f"/{coll}/tmp")
    api.call("DELETE", f"/{coll}/d1")
    b = api.call("GET", delta_path(coll, c)).body
    assert (b["changed"], b["deleted"]) == ([], [{"_id": "d1"}]), b
    # A collection nobody wrote yet: an empty listing and a cursor.
    b = api.call("GET", delta_path(f"never{uuid.uuid4().hex[:6]}")).body
    assert (b["changed"], b["deleted"], b["more"]) == ([], [], False) and b["cursor"]


def _forged(cursor, **change):
    """The cursor with its sealed fields changed, sealed again with the database's own key:
    what the server does with a well-sealed but wrong cursor."""
    return cursors.reseal(cursor, **change)


def _flipped(cursor, at):
    raw = bytearray(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    raw[at % len(raw)] ^= 0x01
    return base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")


def _unsealed(cursor):
    """The cursor as roostd before 0.3 made it: readable base64url text."""
    f = cursors.open_cursor(cursor)
    text = "|".join(["r1", f["epoch"], f["level"], str(int(f["seq"])), "-", "-"])
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize("since,status,code", [
    ("garbage!", 400, "InvalidCursor"),
    ("%%%", 400, "InvalidCursor"),
    ("AAAA", 400, "InvalidCursor"),
    ("x" * 400, 400, "InvalidCursor"),
    (lambda c: _flipped(c, 0), 400, "InvalidCursor"),                    # the version byte
    (lambda c: c[:52], 400, "InvalidCursor"),                            # too short to hold a nonce and a tag
    (lambda c: _forged(c, seq="x1"), 400, "InvalidCursor"),
    (lambda c: _forged(c, seq="-1"), 400, "InvalidCursor"),
    (lambda c: _forged(c, version="r0"), 400, "InvalidCursor"),
    (lambda c: _forged(c, seq="999999999"), 410, "CursorExpired"),       # a position never handed out
    (lambda c: _forged(c, epoch="0123456789abcdef"), 410, "CursorExpired"),
    (lambda c: _forged(c, level="public"), 410, "CursorExpired"),
    (lambda c: _flipped(c, 1), 410, "CursorExpired"),                    # the nonce
    (lambda c: _flipped(c, 30), 410, "CursorExpired"),                   # the tag
    (lambda c: _flipped(c, 60), 410, "CursorExpired"),                   # the sealed text
    (lambda c: _flipped(c, -1), 410, "CursorExpired"),
    (_unsealed, 410, "CursorExpired"),                                   # an older roostd's readable cursor
])
def test_bad_cursors(node, people, since, status, code):
    api = node.api(people["ann"][1])
    good = api.call("GET", delta_path("shrEdge")).body["cursor"]
    value = since(good) if callable(since) else since
    r = api.call("GET", f"/shrEdge/_deltaset?since={urllib.parse.quote(value, safe='')}")
    assert (r.status, error_code(r)) == (status, code), r


def test_cursors_are_sealed(node, people):
    """A cursor tells its holder nothing: the same position seals differently every time, its
    length does not follow the feed position, and its bytes hold no readable field. The
    database's key opens it to this collection, level and the feed's head."""
    api = node.api(people["ann"][1])
    first = api.call("GET", delta_path("shrEdge")).body["cursor"]
    again = api.call("GET", delta_path("shrEdge")).body["cursor"]
    assert first != again
    a, b = cursors.open_cursor(first), cursors.open_cursor(again)
    assert a is not None and (a["level"], a["epoch"], a["seq"]) == (b["level"], b["epoch"], b["seq"]) == (
        "shared@shrEdge", a["epoch"], a["seq"]), (a, b)
    raw = base64.urlsafe_b64decode(first + "=" * (-len(first) % 4))
    assert b"shrEdge" not in raw and a["epoch"].encode() not in raw and b"r2|" not in raw  # the sealed text starts "r2|"; one random "|" byte may occur
    lengths = {len(first), len(again)}
    for n in range(30):                  # the feed moves on (other collections too): same length
        assert api.call("POST", "/concSync" if n % 2 else "/shrEdge", {"n": n}).status == 201
        lengths.add(len(api.call("GET", delta_path("shrEdge", first)).body["cursor"]))
    assert len(lengths) == 1, lengths
    # Each delta hands out a new cursor, and an empty delta still works (and is empty).
    head = api.call("GET", delta_path("shrEdge", first)).body["cursor"]
    again = api.call("GET", delta_path("shrEdge", head))
    assert again.status == 200 and (again.body["changed"], again.body["deleted"], again.body["more"]) == ([], [], False)
    assert cursors.cursor_seq(again.body["cursor"]) == cursors.cursor_seq(head) > cursors.cursor_seq(first)


@pytest.mark.parametrize("limit,status", [("0", 400), ("10001", 400), ("-1", 400), ("abc", 400), ("1.5", 400),
                                          ("", 400), ("1", 200), ("10000", 200)])
def test_limit_bounds(node, people, limit, status):
    r = node.api(people["ann"][1]).call("GET", f"/shrEdge/_deltaset?limit={limit}")
    assert r.status == status, r
    if status == 400:
        assert error_code(r) == "InvalidQuery", r


@pytest.mark.parametrize("path,status", [("/shrEdge/_deltaset", 401), ("/prvEdge/_deltaset", 401),
                                         ("/users/_deltaset", 401), ("/files/_deltaset", 401),
                                         ("/pubSync/_deltaset", 200)])
def test_anonymous(node, path, status):
    r = node.api().call("GET", path)
    assert r.status == status, r


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_deltaset_is_get_only(node, people, method):
    r = node.api(people["ann"][1]).call(method, "/shrEdge/_deltaset", {})
    assert r.status == 405 and "GET" in (r.header("Allow") or ""), r


def test_cursor_from_another_database_is_gone(node, people):
    api = node.api(people["ann"][1])
    ours = api.call("GET", delta_path("shrEdge")).body["cursor"]
    with running_roostd(CONFIG) as other:
        _, token = other.new_user("zed")
        oapi = other.api(token)
        assert oapi.call("POST", "/shrEdge", {"a": 1}).status == 201
        theirs = oapi.call("GET", delta_path("shrEdge")).body["cursor"]
        r = oapi.call("GET", delta_path("shrEdge", ours))
        assert (r.status, error_code(r)) == (410, "CursorExpired"), r
    r = api.call("GET", delta_path("shrEdge", theirs))
    assert (r.status, error_code(r)) == (410, "CursorExpired"), r


@pytest.mark.parametrize("how", ["restart", "sighup"])
def test_permission_level_change_expires_cursors(tmp_path, how):
    config = FAST_HASHING + "collections:\n  lvl: {permission: shared}\n"
    node = Roostd(tmp_path, config).start()
    try:
        uid, token = node.new_user("lev")
        api = node.api(token)
        assert api.call("POST", "/lvl", {"_id": f"{uid}:a"}).status == 201
        cursor = api.call("GET", delta_path("lvl")).body["cursor"]
        assert api.call("POST", "/lvl", {"_id": f"{uid}:b"}).status == 201
        # Same level: the cursor survives a restart (the epoch is in the database).
        node.stop()
        node.start()
        api = node.api(token)
        r = api.call("GET", delta_path("lvl", cursor))
        assert r.status == 200 and [d["_id"] for d in r.body["changed"]] == [f"{uid}:b"], r
        node.config_path.write_text(config.replace("shared", "private"))
        if how == "restart":
            node.stop()
            node.start()
            api = node.api(token)
        else:
            node.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while True:
            r = api.call("GET", delta_path("lvl", cursor))
            if r.status != 200 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert (r.status, error_code(r)) == (410, "CursorExpired"), r
        # Starting over works, under the new level.
        fresh = api.call("GET", delta_path("lvl"))
        assert fresh.status == 200 and {d["_id"] for d in fresh.body["changed"]} == {f"{uid}:a", f"{uid}:b"}
        assert api.call("GET", delta_path("lvl", fresh.body["cursor"])).status == 200
    finally:
        node.stop()


def test_users_deltaset_is_the_public_view_with_deletions(node):
    me, my_token = node.new_user("viewer")
    gone, gone_token = node.new_user("leaver")
    other, other_token = node.new_user("stayer")
    client = SyncClient(node.api(my_token), "users", name="viewer")
    client.sync(limit=2)
    assert {me, gone, other} <= set(client.copy)
    assert client.copy[me].get("email") == f"{node.usernames[me]}@example.com"   # my own record: all of it
    assert all("email" not in u for i, u in client.copy.items() if i != me), "another user's email in the feed"
    assert node.api(other_token).call("PATCH", f"/users/{other}", {"nick": "s"}).status == 200
    assert node.api(gone_token).call("DELETE", f"/users/{gone}").status == 200
    body = client.page()
    assert {"_id": gone} in body["deleted"], body
    changed = {d["_id"]: d for d in body["changed"]}
    assert changed[other].get("nick") == "s" and "email" not in changed[other], body
    assert client.copy == full_list(node.api(my_token), "users")
    # Queries on the private field are refused here as on the list.
    r = node.api(my_token).call("GET", delta_path("users", query={"email": "stayer@example.com"}))
    assert r.status == 400, r

def test_files_deltaset_shows_an_upload_and_its_deletion(node, people):
    _, token = people["ben"]
    api = node.api(token)
    client = SyncClient(node.api(token), "files", name="files")
    client.sync()
    r = api.call("POST", "/files", raw_body=png(16, 12, 5), headers={"Content-Type": "image/png"})
    assert r.status == 201, r
    fid = r.body["_id"]
    client.sync(limit=1)
    assert fid in client.copy and client.copy[fid]["sha256"] == r.body["sha256"], client.copy.get(fid)
    assert api.call("DELETE", f"/files/{fid}").status == 200
    body = client.sync(limit=1)
    assert fid not in client.copy, body
    fresh = SyncClient(node.api(token), "files")
    fresh.sync()
    assert fid not in fresh.copy and set(fresh.copy) == set(client.copy)
