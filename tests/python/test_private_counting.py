"""Issue #33, "Counting and timing other users' private writes": no delta page, keyset
cursor or server-made id may depend on rows the caller cannot read.

- Delta sync paged with limit=1 answers the same pages whether or not others changed
  private entities in between (a private collection, and `messages`/`threads` for a
  non-participant), and still reports an entity that left the caller's view as deleted.
- `X-Roost-Next` is sealed: not decodable, the same length whatever others insert, and a
  changed, truncated or made-up one is 400 JSON, never 500 (users, anonymous callers).
- Server-made `_id`s carry no counter: ids one caller gets, between which many others
  create, show random suffixes, not a count.
Runs on both engines (ROOST_TEST_ENGINE=postgresql, Makefile ENGINE_SUITE)."""

import base64
import json
import time
import urllib.parse
import uuid

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, json_query as q, running_roostd

CONFIG = FAST_HASHING + f"""\
admin_token: {ADMIN_TOKEN}
default_permission: shared
collections:
  prvCount: {{permission: private}}
  prvCursor: {{permission: private}}
  pubCursor: {{permission: public}}
  prvIdsA: {{permission: private}}
  pubIdsB: {{permission: public}}
"""

TIMESTAMPS = {"_id", "_createdAt", "_updatedAt", "editedAt", "lastMessageAt", "lastMessage"}


@pytest.fixture(scope="module")
def node():
    with running_roostd(CONFIG) as n:
        yield n


@pytest.fixture(scope="module")
def people(node):
    """name -> (user id, token): the caller (carol), her correspondent (dave), and two
    others (alice, bob) who write privately between carol's requests."""
    return {name: node.new_user(name) for name in ("alice", "bob", "carol", "dave")}


def delta_path(coll, since=None, limit=None):
    params = {}
    if since is not None:
        params["since"] = since
    if limit is not None:
        params["limit"] = str(limit)
    return f"/{coll}/_deltaset" + ("?" + urllib.parse.urlencode(params) if params else "")


def head_cursor(api, coll):
    """A cursor at the feed's head for `coll` (the whole listing paged through)."""
    cursor = None
    for _ in range(1000):
        r = api.call("GET", delta_path(coll, cursor, limit=1000))
        assert r.status == 200, r
        cursor = r.body["cursor"]
        if not r.body["more"]:
            return cursor
    raise AssertionError("listing never ended")


def pages(api, coll, cursor):
    """Every page from `cursor` with limit=1, each projected without ids and timestamps."""
    out = []
    for _ in range(200):
        r = api.call("GET", delta_path(coll, cursor, limit=1))
        assert r.status == 200, r
        b = r.body
        changed = [{k: v for k, v in d.items() if k not in TIMESTAMPS} for d in b["changed"]]
        out.append((changed, len(b["deleted"]), b["more"]))
        cursor = b["cursor"]
        if not b["more"]:
            return out, cursor
    raise AssertionError("paging never ended")


# ---------------------------------------------------------------------------------------------
# Delta pages: one table row per (collection, what the caller does, what the others do).

def private_setup(node, people, coll):
    """carol's own entity to patch, and a row of bob's that he keeps private."""
    carol = node.api(people["carol"][1])
    mine = carol.call("POST", f"/{coll}", {"v": "mine"}).body["_id"]
    theirs = node.api(people["bob"][1]).call("POST", f"/{coll}", {"v": "bob's"}).body["_id"]
    return {"mine": mine, "theirs": theirs}


def private_caller(node, people, coll, state, step):
    carol = node.api(people["carol"][1])
    if step == 0:
        assert carol.call("POST", f"/{coll}", {"v": "new"}).status == 201
    else:
        assert carol.call("PATCH", f"/{coll}/{state['mine']}", {"v": f"patched {step}"}).status == 200


def private_noise(node, people, coll, state, step):
    """bob and alice write rows only they can read: creates, updates, deletes, an ACL naming dave."""
    for who in ("alice", "bob"):
        api = node.api(people[who][1])
        made = [api.call("POST", f"/{coll}", {"v": f"{who} {k}"}).body["_id"] for k in range(3)]
        assert api.call("PATCH", f"/{coll}/{made[0]}", {"v": "changed"}).status == 200
        assert api.call("DELETE", f"/{coll}/{made[1]}").status in (200, 204)
        assert api.call("PATCH", f"/{coll}/{made[2]}", {"_acl": {"read": [people["dave"][0]]}}).status == 200
    assert node.api(people["bob"][1]).call("PATCH", f"/{coll}/{state['theirs']}", {"v": f"bob {step}"}).status == 200


def messaging_setup(node, people, coll):
    return {}


def messaging_caller(node, people, coll, state, step):
    """carol writes to dave, then to alice (messages, and the threads the hooks update)."""
    carol = node.api(people["carol"][1])
    to = people["dave" if step == 0 else "alice"][0]
    r = carol.call("POST", "/messages", {"recipientId": to, "text": f"carol {step}"})
    assert r.status == 201, r
    if step == 1:
        assert carol.call("PATCH", f"/messages/{r.body['_id']}", {"text": "carol edited"}).status == 200


def messaging_noise(node, people, coll, state, step):
    """alice and bob talk: carol is no participant of their messages or thread."""
    alice, bob = node.api(people["alice"][1]), node.api(people["bob"][1])
    for k in range(2):
        r = alice.call("POST", "/messages", {"recipientId": people["bob"][0], "text": f"a{k}"})
        assert r.status == 201, r
        assert alice.call("PATCH", f"/messages/{r.body['_id']}", {"text": "edited"}).status == 200
        assert bob.call("POST", "/messages", {"recipientId": people["alice"][0], "text": f"b{k}"}).status == 201


VARIANTS = {
    "private collection": ("prvCount", private_setup, private_caller, private_noise),
    "messages, non-participant": ("messages", messaging_setup, messaging_caller, messaging_noise),
    "threads, non-participant": ("threads", messaging_setup, messaging_caller, messaging_noise),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_delta_pages_do_not_count_others_private_changes(node, people, variant):
    coll, setup, caller, noise = VARIANTS[variant]
    carol = node.api(people["carol"][1])
    state = setup(node, people, coll)
    runs = {}
    for noisy in (False, True, False):
        start = head_cursor(carol, coll)
        for step in range(2):
            if noisy:
                noise(node, people, coll, state, step)
            caller(node, people, coll, state, step)
        if noisy:
            noise(node, people, coll, state, 2)
        seen, end = pages(carol, coll, start)
        runs.setdefault(noisy, []).append(seen)
        # Nothing more after the last page; others' later writes make no page either.
        if noisy:
            noise(node, people, coll, state, 3)
        r = carol.call("GET", delta_path(coll, end, limit=1))
        assert (r.status, r.body["changed"], r.body["deleted"], r.body["more"]) == (200, [], [], False), r
    quiet = runs[False][0]
    assert runs[False][1] == quiet, "the caller's own actions page the same each time"
    assert runs[True][0] == quiet, (variant, runs[True][0], quiet)
    assert len(quiet) >= 2 and all(len(p[0]) == 1 for p in quiet), quiet  # the test does page


def test_an_entity_leaving_the_callers_view_is_still_reported_deleted(node, people):
    """Visibility before LIMIT keeps delta's promise: what the caller could read at the
    cursor (or, paging on, since the sync began) and no longer can is in `deleted`."""
    coll = "prvCount"
    bob, carol = node.api(people["bob"][1]), node.api(people["carol"][1])
    shared = [bob.call("POST", f"/{coll}", {"v": f"shared {k}", "_acl": {"read": [people["carol"][0]]}}).body["_id"]
              for k in range(3)]
    start = head_cursor(carol, coll)
    private_noise(node, people, coll, {"theirs": shared[2]}, 9)  # also changes shared[2]: still carol's to read
    # Revoked (an ACL without carol), deleted, and one still shared but changed.
    assert bob.call("PATCH", f"/{coll}/{shared[0]}", {"_acl": {"read": []}}).status == 200
    assert bob.call("DELETE", f"/{coll}/{shared[1]}").status in (200, 204)
    seen, _ = pages(carol, coll, start)
    changed = [d["v"] for p in seen for d in p[0]]
    assert changed == ["bob 9"] and sum(p[1] for p in seen) == 2 and len(seen) == 3, seen

    # Paging on (a sync in progress): an entity seen on an earlier page and hidden
    # before the next is still reported, once.
    more = [bob.call("POST", f"/{coll}", {"v": f"more {k}", "_acl": {"read": [people["carol"][0]]}}).body["_id"]
            for k in range(2)]
    start = head_cursor(carol, coll)
    for k, eid in enumerate(more):
        assert bob.call("PATCH", f"/{coll}/{eid}", {"v": f"again {k}"}).status == 200
    r = carol.call("GET", delta_path(coll, start, limit=1))
    assert [d["v"] for d in r.body["changed"]] == ["again 0"] and r.body["more"], r.body
    assert bob.call("PATCH", f"/{coll}/{more[0]}", {"_acl": {"read": []}}).status == 200
    assert bob.call("PATCH", f"/{coll}/{more[1]}", {"_acl": {"read": []}}).status == 200
    private_noise(node, people, coll, {"theirs": shared[2]}, 10)
    rest, _ = pages(carol, coll, r.body["cursor"])
    assert sum(p[1] for p in rest) == 2 and [d["v"] for p in rest for d in p[0]] == ["bob 10"], rest


# ---------------------------------------------------------------------------------------------
# Keyset cursors: sealed, the same length whatever others insert, tampering is 400.

def callers(node, people):
    """(name, client, collection): a user on a private collection and on messages, anonymous on a public one."""
    return [
        ("carol on a private collection", node.api(people["carol"][1]), "prvCursor"),
        ("carol on messages", node.api(people["carol"][1]), "messages"),
        ("anonymous on a public collection", node.api(), "pubCursor"),
    ]


def list_path(coll, after=None, limit=2, sort=None):
    path = f"/{coll}?limit={limit}&sort={q(sort or {'_createdAt': 1})}"
    return path + (f"&after={urllib.parse.quote(after, safe='')}" if after is not None else "")


def decodes_to_json(token):
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        json.loads(raw.decode())
        return True
    except (ValueError, UnicodeDecodeError):
        return False


def others_insert(node, people, n):
    for who in ("alice", "bob"):
        api = node.api(people[who][1])
        for k in range(n):
            assert api.call("POST", "/prvCursor", {"v": k}).status == 201
            assert api.call("POST", "/messages", {"recipientId": people["dave"][0], "text": f"{who} {k}"}).status == 201


def test_keyset_cursors_are_sealed_and_do_not_follow_others_inserts(node, people):
    carol = node.api(people["carol"][1])
    for k in range(5):
        assert carol.call("POST", "/prvCursor", {"v": k}).status == 201
        assert carol.call("POST", "/pubCursor", {"v": k}).status == 201
        assert carol.call("POST", "/messages", {"recipientId": people["dave"][0], "text": f"c{k}"}).status == 201
    for name, api, coll in callers(node, people):
        first = api.call("GET", list_path(coll))
        assert first.status == 200 and len(first.body) == 2, (name, first)
        token = first.header("X-Roost-Next")
        assert token and not decodes_to_json(token) and "{" not in token, (name, token)
        nxt = api.call("GET", list_path(coll, token))
        assert nxt.status == 200 and len(nxt.body) == 2, (name, nxt)
        # Others insert many rows (private ones, and visible ones only on the public collection).
        others_insert(node, people, 40)
        if coll == "pubCursor":
            for k in range(40):
                assert node.api(people["bob"][1]).call("POST", "/pubCursor", {"v": 100 + k}).status == 201
        again = api.call("GET", list_path(coll))
        token2 = again.header("X-Roost-Next")
        assert again.body == first.body, name
        assert len(token2) == len(token) and token2 != token, (name, token, token2)
        assert api.call("GET", list_path(coll, token2)).body == nxt.body, name
        # Deeper pages: their cursors are no longer than the first's.
        deeper = api.call("GET", list_path(coll, nxt.header("X-Roost-Next")))
        assert deeper.status == 200 and len(deeper.header("X-Roost-Next") or token) == len(token), name


@pytest.mark.parametrize("mangle", [
    "flip a middle character", "flip the last character", "truncate", "append", "readable JSON",
    "not base64", "another order",
])
def test_a_changed_or_made_up_cursor_is_400_json(node, people, mangle):
    for name, api, coll in callers(node, people):
        if api.call("GET", list_path(coll)).header("X-Roost-Next") is None:
            for k in range(3):
                node.api(people["carol"][1]).call("POST", f"/{coll}", {"v": k} if coll != "messages"
                                                  else {"recipientId": people["dave"][0], "text": "x"})
        token = api.call("GET", list_path(coll)).header("X-Roost-Next")
        assert token, name
        mid = len(token) // 2
        flip = lambda t, i: t[:i] + ("A" if t[i] != "A" else "B") + t[i + 1:]
        readable = base64.urlsafe_b64encode(json.dumps({"o": "_createdAt:1", "v": ["x", 1]}).encode()).decode().rstrip("=")
        bad = {
            "flip a middle character": flip(token, mid),
            "flip the last character": flip(token, len(token) - 2),
            "truncate": token[:mid],
            "append": token + "AAAA",
            "readable JSON": readable,
            "not base64": "!!not a cursor!!",
            "another order": token,
        }[mangle]
        sort = {"_createdAt": -1} if mangle == "another order" else None
        r = api.call("GET", list_path(coll, bad, sort=sort))
        assert r.status == 400 and r.body["error"] == "InvalidQuery", (name, mangle, r)
        assert api.call("GET", list_path(coll)).status == 200  # still serving


# ---------------------------------------------------------------------------------------------
# Server-made ids: no counter, no shared process part.

ID_CALLERS = {
    "a user on a private collection": ("carol", "prvIdsA"),
    "anonymous on a public collection": (None, "pubIdsB"),
}


@pytest.mark.parametrize("variant", ID_CALLERS)
def test_server_made_ids_do_not_count_others_creates(node, people, variant):
    who, coll = ID_CALLERS[variant]
    caller = node.api(people[who][1] if who else None)
    others = [node.api(people[n][1]) for n in ("alice", "bob")]
    mine, everyone = [], []
    for round_ in range(40):
        before = int(time.time())
        r = caller.call("POST", f"/{coll}", {"round": round_})
        assert r.status == 201, r
        mine.append(r.body["_id"])
        everyone.append(r.body["_id"])
        # The seconds since the epoch lead, so ids still sort roughly by creation time.
        assert before - 1 <= int(r.body["_id"][:8], 16) <= int(time.time()) + 1, r.body["_id"]
        for api in others:
            for target in ("prvIdsA", "pubIdsB"):
                made = api.call("POST", f"/{target}", {"noise": round_})
                assert made.status == 201, made
                everyone.append(made.body["_id"])
    assert all(len(i) == 24 and all(c in "0123456789abcdef" for c in i) for i in everyone)
    suffixes = [int(i[8:], 16) for i in mine]
    # No part is shared by all ids (the old process part), and no suffix follows another
    # by a count: with 64 random bits, a gap under 2^32 between any two has odds ~2^-31.
    assert len({i[8:18] for i in mine}) == len(mine), mine
    ordered = [int(i[8:], 16) for i in everyone]
    close = [(a, b) for a, b in zip(ordered, ordered[1:]) if abs(a - b) < 2 ** 32]
    assert not close, close
    # Each of the 64 bits is set in some of the caller's ids and clear in others.
    for bit in range(64):
        ones = sum((s >> bit) & 1 for s in suffixes)
        assert 2 <= ones <= len(suffixes) - 2, (bit, ones)
    assert len(set(everyone)) == len(everyone)
