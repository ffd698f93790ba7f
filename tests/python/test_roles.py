"""Roles (#35): the admin API (`/admin/roles`), members, `GET /users/me`'s
roles, `_acl` entries that must name an existing user or role, and the
internal `_roles` feed collection no client can reach. Both engines."""
import json
import time
import urllib.parse
import uuid

import pytest

from drills.live_paths import live_path, metric
from drills.live_stream import LiveStream
from roost_harness import ADMIN_TOKEN, FAST_HASHING, assert_error, running_roostd

CONFIG = FAST_HASHING + f"""\
admin_token: {ADMIN_TOKEN}
default_permission: public
collections:
  notes:
    permission: private
  boards:
    permission: shared
  posts:
    permission: public
    rules:
      update: '{{"owner": "@caller.id"}}'
"""


@pytest.fixture(scope="module")
def roost():
    with running_roostd(CONFIG) as d:
        yield d


def admin(roost, method, path, body=None):
    return roost.call(method, path, body, token=ADMIN_TOKEN)


def new_role(roost, prefix="r"):
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    r = admin(roost, "POST", "/admin/roles", {"name": name})
    assert r.status == 201 and r.body == {"name": name}, r
    return name


def role_listing(roost, name):
    r = admin(roost, "GET", "/admin/roles")
    assert r.status == 200 and r.header("Cache-Control") == "no-store", r
    found = [x for x in r.body["roles"] if x["name"] == name]
    return found[0] if found else None


def me_roles(roost, token):
    r = roost.call("GET", "/users/me", token=token)
    assert r.status == 200, r
    return r.body["roles"]


# ---------------------------------------------------------------------------
# Role CRUD and names.

@pytest.mark.parametrize("body,status,code", [
    ({"name": "editors.v2_x-1"}, 201, None),
    ({"name": "a"}, 201, None),
    ({"name": "x" * 64}, 201, None),
    ({"name": "x" * 65}, 400, "InvalidDocument"),
    ({"name": ""}, 400, "InvalidDocument"),
    ({"name": "has space"}, 400, "InvalidDocument"),
    ({"name": "role:mod"}, 400, "InvalidDocument"),
    ({"name": "ünï"}, 400, "InvalidDocument"),
    ({"name": "a/b"}, 400, "InvalidDocument"),
    ({"name": 7}, 400, "InvalidDocument"),
    ({}, 400, "InvalidDocument"),
    ({"name": "ok", "members": []}, 400, "InvalidDocument"),
    ([], 400, "InvalidJSON"),
])
def test_create_role_names(roost, body, status, code):
    r = admin(roost, "POST", "/admin/roles", body)
    if status == 201:
        assert r.status == 201 and r.body == body, r
        listed = role_listing(roost, body["name"])
        assert listed["members"] == 0 and listed["createdAt"].endswith("Z"), listed
        assert_error(admin(roost, "POST", "/admin/roles", body), 409, "Conflict")
        assert admin(roost, "DELETE", f"/admin/roles/{body['name']}").status == 200
        assert role_listing(roost, body["name"]) is None
    else:
        assert_error(r, status, code)


def test_role_delete_and_unknown_names(roost):
    name = new_role(roost)
    assert admin(roost, "DELETE", f"/admin/roles/{name}").body == {"deleted": True}
    for path in (f"/admin/roles/{name}", "/admin/roles/no%20such", "/admin/roles/" + "y" * 70):
        assert_error(admin(roost, "DELETE", path), 404, "NotFound")
        assert_error(admin(roost, "GET", path + "/members"), 404, "NotFound")


def settled_writes(roost):
    """The write counter once the writes already on their way (the new account's) have landed."""
    writes = metric(roost.port, "roost_write_operations_total")
    for _ in range(50):
        time.sleep(0.2)
        now = metric(roost.port, "roost_write_operations_total")
        if now == writes:
            return now
        writes = now
    return writes


def test_non_admin_callers_are_refused(roost):
    name = new_role(roost)
    uid, token = roost.new_user("outsider")
    routes = [("GET", "/admin/roles", None), ("POST", "/admin/roles", {"name": "sneaky"}),
              ("DELETE", f"/admin/roles/{name}", None), ("GET", f"/admin/roles/{name}/members", None),
              ("PUT", f"/admin/roles/{name}/members/{uid}", None), ("DELETE", f"/admin/roles/{name}/members/{uid}", None)]
    # No refused call writes. A background job (a sweep, the feed's upkeep) may write at any moment,
    # so the calls are repeated: a refusal that wrote would write each time, a job does not keep coinciding.
    for _attempt in range(3):
        writes = settled_writes(roost)
        for caller, status, code in ((None, 401, "Unauthorized"), (token, 403, "Forbidden"), ("not-a-token", 401, "InvalidToken")):
            for method, path, body in routes:
                assert_error(roost.call(method, path, body, token=caller), status, code)
        if metric(roost.port, "roost_write_operations_total") == writes:
            break
    else:
        raise AssertionError("refused /admin/roles calls wrote (the write counter moved in each of 3 rounds)")
    assert role_listing(roost, "sneaky") is None and role_listing(roost, name)["members"] == 0
    assert me_roles(roost, token) == []


# ---------------------------------------------------------------------------
# Members.

def test_members_add_remove_page_and_me(roost):
    team, other = new_role(roost, "team"), new_role(roost, "aaa")
    users = sorted((roost.new_user("member") for _ in range(3)), key=lambda u: u[0])
    for uid, _ in users:
        r = admin(roost, "PUT", f"/admin/roles/{team}/members/{uid}")
        assert r.status == 200 and r.body == {"member": True, "changed": True}, r
    again = admin(roost, "PUT", f"/admin/roles/{team}/members/{users[0][0]}")
    assert again.status == 200 and again.body["changed"] is False, again
    assert admin(roost, "PUT", f"/admin/roles/{other}/members/{users[0][0]}").status == 200
    assert role_listing(roost, team)["members"] == 3

    # Paged by user id, with usernames.
    first = admin(roost, "GET", f"/admin/roles/{team}/members?limit=2")
    assert first.status == 200 and [m["userID"] for m in first.body["members"]] == [users[0][0], users[1][0]], first
    assert first.body["members"][0]["username"] == roost.usernames[users[0][0]]
    rest = admin(roost, "GET", f"/admin/roles/{team}/members?limit=2&after={urllib.parse.quote(first.body['next'])}")
    assert [m["userID"] for m in rest.body["members"]] == [users[2][0]] and rest.body["next"] is None, rest
    for bad in ("0", "1001", "x"):
        assert_error(admin(roost, "GET", f"/admin/roles/{team}/members?limit={bad}"), 400, "InvalidQuery")

    # The member sees their roles, sorted; nobody else sees them on the user's record.
    assert me_roles(roost, users[0][1]) == sorted([team, other])
    assert me_roles(roost, users[1][1]) == [team]
    for token in (users[1][1], ADMIN_TOKEN):
        r = roost.call("GET", f"/users/{users[0][0]}", token=token)
        assert r.status == 200 and "roles" not in r.body, r
    listing = roost.call("GET", "/users", token=users[1][1])
    assert listing.status == 200 and all("roles" not in u for u in listing.body), listing

    # Removing: 200 once, then 404; unknown role or user: 404.
    assert admin(roost, "DELETE", f"/admin/roles/{team}/members/{users[0][0]}").body == {"member": False, "changed": True}
    assert_error(admin(roost, "DELETE", f"/admin/roles/{team}/members/{users[0][0]}"), 404, "NotFound")
    assert me_roles(roost, users[0][1]) == [other]
    assert_error(admin(roost, "PUT", f"/admin/roles/{team}/members/no-such-user"), 404, "NotFound")
    assert_error(admin(roost, "PUT", f"/admin/roles/nope-{team}/members/{users[0][0]}"), 404, "NotFound")
    assert_error(admin(roost, "PUT", f"/admin/roles/bad%20name/members/{users[0][0]}"), 404, "NotFound")
    assert role_listing(roost, team)["members"] == 2

    # Deleting the role ends every membership, at once.
    assert admin(roost, "DELETE", f"/admin/roles/{team}").status == 200
    assert me_roles(roost, users[1][1]) == [] and me_roles(roost, users[0][1]) == [other]


def test_deleting_an_account_ends_its_memberships(roost):
    team = new_role(roost)
    uid, token = roost.new_user("leaver")
    assert admin(roost, "PUT", f"/admin/roles/{team}/members/{uid}").status == 200
    assert role_listing(roost, team)["members"] == 1
    r = roost.call("DELETE", f"/users/{uid}", {"password": "correct horse battery"}, token=token)
    assert r.status in (200, 204), r
    assert role_listing(roost, team)["members"] == 0
    assert admin(roost, "GET", f"/admin/roles/{team}/members").body["members"] == []


# ---------------------------------------------------------------------------
# _acl entries must name an existing user id or role:<existing role>.

def test_acl_entries_must_name_users_or_roles(roost):
    team = new_role(roost, "team")
    owner, owner_token = roost.new_user("owner")
    friend, _ = roost.new_user("friend")
    username = roost.usernames[friend]
    cases = [  # (collection, _acl, status, named in the message)
        ("notes", {"read": [username]}, 400, username),
        ("notes", {"read": [friend, "role:nope"]}, 400, "role:nope"),
        ("notes", {"write": ["role:" + team.upper()]}, 400, "role:" + team.upper()),
        ("boards", {"write": [team]}, 400, team),
        ("notes", {"read": ["role:" + team]}, 201, None),
        ("notes", {"read": [friend], "write": ["role:" + team, friend]}, 201, None),
        ("boards", {"write": [owner]}, 201, None),
    ]
    for collection, acl, status, named in cases:
        for token in (owner_token, ADMIN_TOKEN):   # the admin's typo locks people out too
            r = roost.call("POST", f"/{collection}", {"t": 1, "_acl": acl}, token=token)
            if status == 201:
                assert r.status == 201 and {k: r.body["_acl"][k] for k in acl} == acl, r
            else:
                assert_error(r, 400, "InvalidDocument")
                assert json.dumps(named) in r.body["description"] and f"_acl.{next(iter(acl))}" in r.body["description"], r


def test_acl_check_on_replace_and_patch_only_for_new_entries(roost):
    team = new_role(roost, "team")
    gone_role = new_role(roost, "gone")
    owner, token = roost.new_user("owner")
    leaver, leaver_token = roost.new_user("leaver")
    friend, _ = roost.new_user("friend")
    r = roost.call("POST", "/notes", {"t": 1, "_acl": {"read": [leaver, "role:" + gone_role], "write": ["role:" + team]}}, token=token)
    assert r.status == 201, r
    doc = r.body["_id"]
    # The user and the role named in the stored _acl go away.
    assert roost.call("DELETE", f"/users/{leaver}", {"password": "correct horse battery"}, token=leaver_token).status in (200, 204)
    assert admin(roost, "DELETE", f"/admin/roles/{gone_role}").status == 200
    # Edits that keep the stale entries pass: none of them is new.
    r = roost.call("PATCH", f"/notes/{doc}", {"t": 2}, token=token)
    assert r.status == 200 and r.body["_acl"]["read"] == [leaver, "role:" + gone_role], r
    r = roost.call("PATCH", f"/notes/{doc}", {"_acl": {"read": [leaver, "role:" + gone_role, friend]}}, token=token)
    assert r.status == 200, r
    r = roost.call("PUT", f"/notes/{doc}", {"t": 3, "_acl": {"read": [friend], "write": ["role:" + team, leaver]}}, token=token)
    assert r.status == 200, r   # leaver moved from read to write: still not new
    # A new bad entry is refused, on both verbs; the stored document is unchanged.
    for method, body in (("PATCH", {"_acl": {"write": ["role:" + gone_role]}}),
                         ("PUT", {"t": 4, "_acl": {"read": [friend, "nobody"]}}),
                         ("PATCH", {"t": 5, "_acl": {"read": [roost.usernames[friend]]}})):
        assert_error(roost.call(method, f"/notes/{doc}", body, token=token), 400, "InvalidDocument")
    stored = roost.call("GET", f"/notes/{doc}", token=token).body
    assert stored["t"] == 3 and stored["_acl"]["read"] == [friend], stored
    # PUT to a new id creates: checked like a create.
    assert_error(roost.call("PUT", f"/notes/{owner}:fresh-{uuid.uuid4().hex[:6]}", {"_acl": {"read": ["nobody"]}}, token=token), 400, "InvalidDocument")


def test_a_caller_the_update_rule_refuses_hears_403_not_which_principals_exist(roost):
    owner, owner_token = roost.new_user("poster")
    _, other_token = roost.new_user("editor")
    r = roost.call("POST", "/posts", {"owner": owner, "t": 1}, token=owner_token)
    assert r.status == 201, r
    path = f"/posts/{r.body['_id']}"
    for method, body in (("PATCH", {"_acl": {"read": ["nobody"]}}), ("PUT", {"owner": owner, "_acl": {"write": ["role:nope"]}})):
        assert_error(roost.call(method, path, body, token=other_token), 403, "AccessRuleDenied")
        assert_error(roost.call(method, path, body, token=owner_token), 400, "InvalidDocument")
    assert roost.call("PATCH", path, {"_acl": {"read": [owner]}}, token=owner_token).status == 200


def test_acl_check_in_a_batch(roost):
    owner, token = roost.new_user("batcher")
    r = roost.call("POST", "/_batch", {"operations": [
        {"method": "POST", "path": "/notes", "body": {"t": 1, "_acl": {"read": [owner]}}},
        {"method": "POST", "path": "/notes", "body": {"t": 2, "_acl": {"read": ["nobody"]}}},
    ]}, token=token)
    assert r.status == 400 and r.body["error"] == "InvalidDocument" and r.body["operation"] == 1, r
    assert '"nobody"' in r.body["description"], r
    assert roost.call("GET", "/notes/_count", token=token).body["count"] == 0   # all or nothing


# ---------------------------------------------------------------------------
# The `_roles` feed entries never reach a client.

@pytest.mark.parametrize("path", [
    "/_roles", "/_roles/_count", "/_roles/_deltaset", "/_roles/_live", "/_roles/anything",
    "/events?subscribe=" + urllib.parse.quote(json.dumps([{"collection": "_roles"}])),
])
def test_roles_feed_collection_is_unreachable(roost, path):
    _, token = roost.new_user("prober")
    for caller in (None, token, ADMIN_TOKEN):
        r = roost.call("GET", path, token=caller)
        assert r.status == 400 and r.body["error"] in ("ReservedCollectionName", "InvalidCollectionName"), (caller, r)


def test_membership_changes_reset_only_the_member_s_streams(roost):
    """A `_roles` feed entry is never an event: the member's own streams end
    with `reset` (what they may read changed), everyone else's carry on."""
    team = new_role(roost)
    uid, token = roost.new_user("streamer")
    _, other_token = roost.new_user("bystander")
    mine = LiveStream(roost.port, live_path("boards"), token=token)
    theirs = LiveStream(roost.port, live_path("boards"), token=other_token)
    try:
        assert mine.status == 200 and mine.wait_ready(10) and theirs.status == 200 and theirs.wait_ready(10)
        assert admin(roost, "PUT", f"/admin/roles/{team}/members/{uid}").status == 200
        assert mine.wait(lambda s: any(e.kind == "reset" for e in s.events), 10), mine.snapshot()
        reset = [e for e in mine.snapshot() if e.kind == "reset"][0]
        assert "roles" in reset.data["reason"] and uid not in json.dumps(reset.data) and team not in json.dumps(reset.data), reset.data
        assert all(e.kind == "reset" for e in mine.snapshot()), mine.snapshot()
        r = roost.call("POST", "/boards", {"marker": team}, token=other_token)
        assert r.status == 201
        assert theirs.wait_events(1, 10)
        events = theirs.snapshot()
        assert len(events) == 1 and events[0].kind != "reset" and events[0].entity["marker"] == team, events
    finally:
        mine.close()
        theirs.close()
    # A delta sync of another collection does not carry them either.
    d = roost.call("GET", "/boards/_deltaset", token=token)
    assert d.status == 200 and "_roles" not in json.dumps(d.body), d


# ---------------------------------------------------------------------------
# Roles in `_acl` (with the access-rule wiring of #35): a membership change
# holds on the very next request, for reads, lists, counts and writes.

def member_view(roost, token, path, tag):
    """(GET status, rows listed, count, PATCH status) of a member for the doc at `path`."""
    got = roost.call("GET", path, token=token).status
    query = urllib.parse.quote(json.dumps({"tag": tag}))
    listed = roost.call("GET", f"/notes?query={query}", token=token)
    count = roost.call("GET", f"/notes/_count?query={query}", token=token)
    assert listed.status == 200 and count.status == 200, (listed, count)
    patched = roost.call("PATCH", path, {"touched": True}, token=token).status
    return got, len(listed.body), count.body["count"], patched


@pytest.mark.parametrize("acl_list,granted", [
    ("read", (200, 1, 1, 403)),    # may read, not write
    ("write", (200, 1, 1, 200)),   # write implies read
])
def test_membership_change_holds_on_the_next_request(roost, acl_list, granted):
    team = new_role(roost, "team")
    _, owner_token = roost.new_user("owner")
    member, member_token = roost.new_user("member")
    tag = uuid.uuid4().hex
    doc = roost.call("POST", "/notes", {"tag": tag, "_acl": {acl_list: ["role:" + team]}}, token=owner_token)
    assert doc.status == 201, doc
    path = f"/notes/{doc.body['_id']}"
    hidden = (404, 0, 0, 404)
    assert member_view(roost, member_token, path, tag) == hidden
    assert admin(roost, "PUT", f"/admin/roles/{team}/members/{member}").status == 200
    assert member_view(roost, member_token, path, tag) == granted   # the very next request
    assert admin(roost, "DELETE", f"/admin/roles/{team}/members/{member}").status == 200
    assert member_view(roost, member_token, path, tag) == hidden
    # Deleting the role ends the grant too; the stale entry grants nobody.
    assert admin(roost, "PUT", f"/admin/roles/{team}/members/{member}").status == 200
    assert member_view(roost, member_token, path, tag) == granted
    assert admin(roost, "DELETE", f"/admin/roles/{team}").status == 200
    assert member_view(roost, member_token, path, tag) == hidden


@pytest.mark.parametrize("change", ["add", "remove"])
def test_a_delta_cursor_from_before_a_role_change_is_expired(roost, change):
    """A sync cursor carries the caller's roles: after a change it is 410
    CursorExpired (the device syncs again), so none keeps rows it may no
    longer read and none misses rows it now may."""
    team = new_role(roost, "team")
    _, owner_token = roost.new_user("owner")
    member, member_token = roost.new_user("member")
    if change == "remove":
        assert admin(roost, "PUT", f"/admin/roles/{team}/members/{member}").status == 200
    tag = uuid.uuid4().hex
    assert roost.call("POST", "/notes", {"tag": tag, "_acl": {"read": ["role:" + team]}}, token=owner_token).status == 201
    query = urllib.parse.quote(json.dumps({"tag": tag}))
    first = roost.call("GET", f"/notes/_deltaset?query={query}", token=member_token)
    assert first.status == 200 and len(first.body["changed"]) == (1 if change == "remove" else 0), first
    cursor = urllib.parse.quote(first.body["cursor"])
    assert roost.call("GET", f"/notes/_deltaset?query={query}&since={cursor}", token=member_token).status == 200
    method = "PUT" if change == "add" else "DELETE"
    assert admin(roost, method, f"/admin/roles/{team}/members/{member}").status == 200
    assert_error(roost.call("GET", f"/notes/_deltaset?query={query}&since={cursor}", token=member_token), 410, "CursorExpired")
    again = roost.call("GET", f"/notes/_deltaset?query={query}", token=member_token)
    assert again.status == 200 and len(again.body["changed"]) == (1 if change == "add" else 0), again


def test_a_removed_member_s_open_stream_gets_nothing_more(roost):
    """An open live stream of a member removed from a role must not deliver
    later changes of rows only the role granted: it ends with a `reset`
    (then the client syncs again) and carries none of them."""
    team = new_role(roost, "team")
    _, owner_token = roost.new_user("owner")
    member, member_token = roost.new_user("member")
    assert admin(roost, "PUT", f"/admin/roles/{team}/members/{member}").status == 200
    tag = uuid.uuid4().hex
    doc = roost.call("POST", "/notes", {"tag": tag, "n": 0, "_acl": {"read": ["role:" + team]}}, token=owner_token).body
    stream = LiveStream(roost.port, live_path("notes", {"tag": tag}), token=member_token)
    try:
        assert stream.status == 200 and stream.wait_ready(10)
        assert roost.call("PATCH", f"/notes/{doc['_id']}", {"n": 1}, token=owner_token).status == 200
        assert stream.wait(lambda s: any(e.entity and e.entity.get("n") == 1 for e in s.events), 10), stream.snapshot()
        assert admin(roost, "DELETE", f"/admin/roles/{team}/members/{member}").status == 200
        assert roost.call("PATCH", f"/notes/{doc['_id']}", {"n": 2, "secret": "after removal"}, token=owner_token).status == 200
        assert stream.wait(lambda s: any(e.kind == "reset" for e in s.events), 10), stream.snapshot()
        leaked = [e for e in stream.snapshot() if e.entity and e.entity.get("n") == 2]
        assert leaked == [], stream.snapshot()
    finally:
        stream.close()
