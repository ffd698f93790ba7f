"""Access matrix, continued: _acl rules (forged or changed creator, granting
oneself access), bad tokens, and the 401's WWW-Authenticate."""

import time

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, assert_error, engine, running_roostd
from access_matrix_support import COLLECTION, LEVELS, ROWS, VISIBLE, q, world


# ---------------------------------------------------------------------------
# _acl rules: forged creator, changing the creator, granting oneself access.

@pytest.mark.parametrize("level", ["public", "shared", "private"])
def test_forged_creator_on_create_is_ignored(world, level):
    b = world.uid("B")
    try:
        r = world.call("A", "POST", f"/{COLLECTION[level]}", {"_id": "forged-a", "scratch": "forged", "_acl": {"creator": b}})
        assert r.status == 201, r
        assert r.body["_acl"]["creator"] == world.uid("A")
        # B gained nothing: in private he cannot see it; in shared he cannot change it.
        expected_b = {"public": 200, "shared": 403, "private": 404}[level]
        assert world.call("B", "PATCH", f"/{COLLECTION[level]}/forged-a", {"x": 1}).status == expected_b
        if level == "public":
            r = world.call("anon", "POST", f"/{COLLECTION[level]}", {"_id": "forged-anon", "scratch": "forged", "_acl": {"creator": b}})
            assert r.status == 201 and r.body["_acl"]["creator"] is None, r
        r = world.call("admin", "POST", f"/{COLLECTION[level]}", {"_id": "forged-admin", "scratch": "forged", "_acl": {"creator": b}})
        assert r.status == 201 and r.body["_acl"]["creator"] is None, r
    finally:
        world.admin_delete_where(level, {"scratch": "forged"})


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_changing_creator_on_update_is_refused(world, level, method):
    row = "a1" if level != "readonly" else "m1"
    owner = "A" if level != "readonly" else "admin"
    callers = [owner, "admin"] if owner != "admin" else ["admin"]
    for caller in callers:
        body = {"_acl": {"creator": world.uid("B")}}
        if method == "PUT":
            body.update({"location": ROWS[row][2], "tag": ROWS[row][3], "seed": row})
        r = world.call(caller, method, f"/{COLLECTION[level]}/{row}", body)
        assert_error(r, 400, "InvalidDocument")
        assert world.admin_get(level, row).body["_acl"]["creator"] == world.expected_creator(ROWS[row][0])
    # Sending the unchanged creator back is fine.
    same = {"_acl": {"creator": world.expected_creator(ROWS[row][0])}, "touchedBy": "same-creator"}
    if method == "PUT":
        same.update({"location": ROWS[row][2], "tag": ROWS[row][3], "seed": row})
    r = world.call(owner, method, f"/{COLLECTION[level]}/{row}", same)
    assert r.status == 200, r


@pytest.mark.parametrize("level,row,expected", [
    ("shared", "a1", 403),    # B sees it but may not write it
    ("shared", "a2", 403),
    ("private", "a1", 404),   # B cannot see it at all
    ("private", "a2", 403),   # B may read it (read list), not write it
    ("readonly", "m1", 403),
    ("readonly", "m2", 403),
])
@pytest.mark.parametrize("method", ["PATCH", "PUT"])
def test_user_cannot_grant_himself_write(world, level, row, expected, method):
    before = world.admin_get(level, row).body["_acl"]
    body = {"_acl": {"write": [world.uid("B")], "read": [world.uid("B")]}}
    if method == "PUT":
        body.update({"location": ROWS[row][2], "tag": ROWS[row][3], "seed": row})
    r = world.call("B", method, f"/{COLLECTION[level]}/{row}", body)
    assert_error(r, expected)
    assert world.admin_get(level, row).body["_acl"] == before
    # And he still cannot write it afterwards.
    assert world.call("B", "PATCH", f"/{COLLECTION[level]}/{row}", {"x": 1}).status == expected


@pytest.mark.parametrize("level", ["shared", "private"])
def test_writer_may_change_lists_but_not_creator(world, level):
    prefix = "lists-"
    try:
        world.create_row(level, prefix + "a3", "a3", {"scratch": prefix})
        a, b = world.uid("A"), world.uid("B")
        # B is in a3's write list: he may change the lists...
        r = world.call("B", "PATCH", f"/{COLLECTION[level]}/{prefix}a3", {"_acl": {"read": [b], "write": [b]}})
        assert r.status == 200, r
        assert r.body["_acl"] == {"creator": a, "read": [b], "write": [b]}
        # ...and the creator keeps full rights regardless of the lists.
        assert world.call("A", "GET", f"/{COLLECTION[level]}/{prefix}a3").status == 200
        r = world.call("A", "PATCH", f"/{COLLECTION[level]}/{prefix}a3", {"_acl": {"write": []}})
        assert r.status == 200 and r.body["_acl"] == {"creator": a, "read": [b], "write": []}, r
        # Now B only reads it.
        assert world.call("B", "PATCH", f"/{COLLECTION[level]}/{prefix}a3", {"x": 1}).status == 403
        # Malformed lists are refused.
        for bad in ({"write": "everyone"}, {"read": [1, 2]}, {"owner": a}, "B"):
            assert_error(world.call("A", "PATCH", f"/{COLLECTION[level]}/{prefix}a3", {"_acl": bad}), 400, "InvalidDocument")
    finally:
        world.admin_delete_where(level, {"scratch": prefix})


def test_acl_query_cannot_widen_visibility(world):
    """Filtering on _acl fields only narrows what the caller may see."""
    a = world.uid("A")
    r = world.call("B", "GET", f"/privPlaces?query={q({'_acl.creator': a})}&sort=%7B%22_id%22%3A1%7D")
    assert [d["_id"] for d in r.body] == ["a2", "a3"]
    r = world.call("B", "GET", f"/privPlaces?query={q({'$or': [{'_acl': {'$exists': True}}, {'_acl': {'$exists': False}}]})}&sort=%7B%22_id%22%3A1%7D")
    assert [d["_id"] for d in r.body] == world.in_wire_order("private", VISIBLE["private"]["B"])


# ---------------------------------------------------------------------------
# Bad tokens: garbage, tampered, a stored hash, revoked, expired.

def _bad_token_requests(level):
    c = COLLECTION[level]
    return [("GET", f"/{c}", None), ("GET", f"/{c}/_count", None), ("GET", f"/{c}/a1", None),
            ("POST", f"/{c}", {"scratch": "badtoken"}), ("PUT", f"/{c}/badtoken", {"scratch": "badtoken"}),
            ("PATCH", f"/{c}/a1", {"x": 1}), ("DELETE", f"/{c}/a1", None),
            ("GET", "/users", None), ("GET", "/users/me", None)]


def assert_invalid_token(r):
    assert_error(r, 401, "InvalidToken")
    assert (r.header("WWW-Authenticate") or "").startswith("Bearer"), r.headers


def _stored_token_hash(world):
    return engine.sql(world.d.data_dir, "SELECT token_hash FROM _sessions LIMIT 1")[0][0]


@pytest.mark.parametrize("level", LEVELS)
def test_garbage_and_stolen_tokens_are_refused(world, level):
    good = world.tokens["A"]
    tampered = good[:-1] + ("A" if good[-1] != "A" else "B")
    for token in ["garbage", "x" * 43, tampered, good + "x", _stored_token_hash(world), ADMIN_TOKEN + "x", ADMIN_TOKEN[:-1]]:
        for method, path, body in _bad_token_requests(level):
            r = world.d.call(method, path, body, token=token)
            assert_invalid_token(r)
    assert world.call("admin", "GET", f"/{COLLECTION[level]}/_count?query={q({'scratch': 'badtoken'})}").body == {"count": 0}
    assert world.call("admin", "GET", f"/{COLLECTION[level]}/a1").body.get("x") is None


def test_revoked_token_is_refused_everywhere(world):
    s = world.d.sign_up("carol", email="carol@example.org")
    token = s["token"]
    assert world.d.call("GET", "/sharedPlaces/_count", token=token).status == 200
    r = world.d.call("POST", "/logout", token=token)
    assert r.status == 200 and r.body == {"loggedOut": True}, r
    for level in LEVELS:
        for method, path, body in _bad_token_requests(level):
            assert_invalid_token(world.d.call(method, path, body, token=token))
    # Other sessions are untouched.
    assert world.call("A", "GET", "/sharedPlaces/_count").status == 200
    # Logging out again is refused (the WWW-Authenticate header is checked below).
    assert_error(world.d.call("POST", "/logout", token=token), 401, "InvalidToken")


def test_expired_token_is_refused():
    """A second daemon with three-second sessions; the admin token comes from the environment.

    Expiry is kept in whole seconds (created second + lifetime), so a session lives between
    lifetime - 1 and lifetime seconds. Three seconds leaves a slow CI machine at least two to
    make the first call; sleeping lifetime + 1.2 s after it is past any expiry.
    """
    lifetime = 3
    config = (FAST_HASHING + f"session_lifetime: {lifetime}\ndefault_permission: public\n"
              "collections:\n  sharedPlaces: {permission: shared}\n")
    with running_roostd(config, env={"ROOST_ADMIN_TOKEN": ADMIN_TOKEN}) as d:
        s = d.sign_up("dave", email="dave@example.org")
        token = s["token"]
        assert d.call("POST", "/pubPlaces", {"n": 1}, token=token).status == 201
        time.sleep(lifetime + 1.2)
        for level in ("public", "shared"):
            for method, path, body in _bad_token_requests(level):
                assert_invalid_token(d.call(method, path, body, token=token))
        # A fresh log-in works again, and the admin token from ROOST_ADMIN_TOKEN is honoured.
        r = d.log_in("dave", "correct horse battery")
        assert r.status == 200, r
        assert d.call("GET", "/sharedPlaces", token=r.body["token"]).status == 200
        assert d.call("POST", "/sharedPlaces", {"n": 1}, token=ADMIN_TOKEN).status == 201


# ---------------------------------------------------------------------------
# Every 401 tells the client how to authenticate.

def _unauthenticated_requests(world):
    a = world.uid("A")
    reqs = []
    for level in ("shared", "private", "readonly"):
        reqs += [(m, p, b) for m, p, b in _bad_token_requests(level) if not p.startswith("/users")]
    reqs += [("GET", "/users", None), ("GET", "/users/_count", None), ("GET", f"/users/{a}", None),
             ("GET", "/users/me", None), ("PATCH", f"/users/{a}", {"x": 1}), ("PUT", f"/users/{a}", {"x": 1}),
             ("DELETE", f"/users/{a}", None), ("POST", "/logout", None)]
    return reqs


def test_every_anonymous_401_carries_www_authenticate(world):
    missing = []
    revoked = world.d.sign_up("erin")["token"]
    assert world.d.call("POST", "/logout", token=revoked).status == 200
    calls = [(m, p, b, None) for m, p, b in _unauthenticated_requests(world)]
    calls += [("POST", "/logout", None, revoked), ("POST", "/login", {"username": "alice", "password": "not her password"}, None)]
    for method, path, body, token in calls:
        r = world.d.call(method, path, body, token=token)
        assert_error(r, 401)
        if not (r.header("WWW-Authenticate") or "").startswith("Bearer"):
            missing.append(f"{method} {path}")
    assert missing == [], f"401 without WWW-Authenticate: {missing}"
