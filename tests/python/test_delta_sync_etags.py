"""Issue #15, conditional writes: ETag on every entity response, If-Match and
If-None-Match on documents and users."""

import uuid

import pytest

from roost_harness import ADMIN_TOKEN

from delta_sync_support import delta_path, error_code, node, people, png


# ---------------------------------------------------------------------------------------------
# 4. ETag, If-Match, If-None-Match

def etag_of(resp):
    return f'"{resp.body["_updatedAt"]}"'


def test_every_entity_response_has_its_etag(node, people):
    api = node.api(people["ann"][1])
    base = f"/etagNotes/e{uuid.uuid4().hex[:8]}"
    responses = [
        ("POST", api.call("POST", "/etagNotes", {"_id": base.rsplit("/", 1)[1], "a": 1})),
        ("GET", api.call("GET", base)),
        ("PUT existing", api.call("PUT", base, {"a": 2})),
        ("PATCH", api.call("PATCH", base, {"b": 3})),
        ("PUT new", api.call("PUT", base + "x", {"a": 1})),
    ]
    problems = [(what, r.status, r.header("ETag"), r.body.get("_updatedAt")) for what, r in responses
                if r.status not in (200, 201) or r.header("ETag") != etag_of(r)]
    assert problems == [], problems
    # A copy from a delta carries the same _updatedAt as the ETag of a GET.
    delta = {d["_id"]: d for d in api.call("GET", delta_path("etagNotes")).body["changed"]}
    assert f'"{delta[base.rsplit("/", 1)[1]]["_updatedAt"]}"' == api.call("GET", base).header("ETag")


@pytest.mark.parametrize("method,body", [("PUT", {"a": 9}), ("PATCH", {"a": 9}), ("DELETE", None)])
def test_if_match(node, people, method, body):
    api = node.api(people["ann"][1])
    path = f"/etagNotes/m{uuid.uuid4().hex[:8]}"
    first = api.call("PUT", path, {"a": 1})
    assert first.status == 201
    current = api.call("PATCH", path, {"a": 2})
    stale, tag = first.header("ETag"), current.header("ETag")
    assert stale != tag
    for header in (stale, '"nope"', f"W/{tag}"):
        r = api.call(method, path, body, headers={"If-Match": header})
        assert (r.status, error_code(r), r.header("ETag")) == (412, "PreconditionFailed", tag), (header, r)
    after = api.call("GET", path)
    assert after.status == 200 and after.body == current.body, "a refused write changed the entity"
    r = api.call(method, path, body, headers={"If-Match": f'"x", {tag}'})
    assert r.status == 200, r
    if method != "DELETE":
        assert r.header("ETag") != tag and r.header("ETag") == etag_of(r)
        assert api.call(method, path, body, headers={"If-Match": "*"}).status == 200
    else:
        assert api.call("GET", path).status == 404
        assert api.call("DELETE", path, headers={"If-Match": "*"}).status == 404


def test_if_none_match_star_only_creates(node, people):
    api = node.api(people["ann"][1])
    path = f"/etagNotes/n{uuid.uuid4().hex[:8]}"
    created = api.call("PUT", path, {"a": 1}, headers={"If-None-Match": "*"})
    assert created.status == 201 and created.header("ETag") == etag_of(created), created
    again = api.call("PUT", path, {"a": 2}, headers={"If-None-Match": "*"})
    assert (again.status, error_code(again), again.header("ETag")) == (412, "PreconditionFailed", created.header("ETag"))
    assert api.call("GET", path).body == created.body
    # If-Match on an id that does not exist: nothing to match, so 412 and nothing created.
    missing = f"/etagNotes/none{uuid.uuid4().hex[:8]}"
    r = api.call("PUT", missing, {"a": 1}, headers={"If-Match": created.header("ETag")})
    assert r.status == 412 and api.call("GET", missing).status == 404, r


def test_rapid_patches_get_distinct_increasing_etags(node, people):
    api = node.api(people["ann"][1])
    path = f"/etagNotes/r{uuid.uuid4().hex[:8]}"
    tags = [api.call("PUT", path, {"i": -1}).header("ETag")]
    for i in range(25):
        r = api.call("PATCH", path, {"i": i})
        assert r.status == 200
        tags.append(r.header("ETag"))
    assert len(set(tags)) == len(tags) and tags == sorted(tags), tags


def test_etags_on_other_entity_responses(node, people):
    """Issue #15: every entity response carries an ETag, and PUT/PATCH/DELETE honour
    If-Match, the member directory and a GET with ?resolve= included."""
    api = node.api(people["ann"][1])
    path = f"/etagNotes/res{uuid.uuid4().hex[:8]}"
    assert api.call("PUT", path, {"a": 1}).status == 201
    uid, token = node.new_user("tagged")
    uapi = node.api(token)
    me = uapi.call("GET", "/users/me")
    responses = [("GET ?resolve=a", api.call("GET", path + "?resolve=a")), ("GET /users/me", me),
                 ("PATCH /users/:id", uapi.call("PATCH", f"/users/{uid}", {"nick": "a"}))]
    missing = [what for what, r in responses if r.status != 200 or r.header("ETag") != etag_of(r)]
    stale = uapi.call("PATCH", f"/users/{uid}", {"nick": "b"}, headers={"If-Match": etag_of(me)})
    assert missing == [] and stale.status == 412, (missing, stale)


def test_user_and_file_responses_carry_the_stored_etag(node, people):
    uid, token = node.new_user("etagged")
    uapi, other = node.api(token), node.api(people["ben"][1])
    put = uapi.call("PUT", f"/users/{uid}", {"nick": "p"})
    responses = [("GET /users/:id (self)", uapi.call("GET", f"/users/{uid}")),
                 ("GET /users/:id (other)", other.call("GET", f"/users/{uid}")),
                 ("PUT /users/:id", put)]
    r = uapi.call("POST", "/files", raw_body=png(8, 6, 3), headers={"Content-Type": "image/png"})
    assert r.status == 201, r
    responses.append(("GET /files/:id/meta", uapi.call("GET", f"/files/{r.body['_id']}/meta")))
    wrong = [(what, r.status, r.header("ETag")) for what, r in responses if r.status != 200 or r.header("ETag") != etag_of(r)]
    assert wrong == [], wrong
    assert responses[0][1].header("ETag") == responses[1][1].header("ETag") == put.header("ETag")


def test_resolve_etag_is_the_entitys_own(node, people):
    """A resolved GET is another view of the same entity: its ETag is the entity's,
    not that of a referenced document written later."""
    api = node.api(people["ann"][1])
    ref, path = f"ref{uuid.uuid4().hex[:8]}", f"/etagNotes/own{uuid.uuid4().hex[:8]}"
    assert api.call("PUT", f"/etagNotes/{ref}", {"x": 1}).status == 201
    stored = api.call("PUT", path, {"link": {"_type": "ref", "_collection": "etagNotes", "_id": ref}})
    assert api.call("PATCH", f"/etagNotes/{ref}", {"x": 2}).status == 200
    resolved = api.call("GET", path + "?resolve=link")
    assert resolved.status == 200 and resolved.body["link"]["x"] == 2, resolved
    assert resolved.header("ETag") == stored.header("ETag") == etag_of(resolved), resolved


@pytest.mark.parametrize("method,body", [("PUT", {"nick": "z"}), ("PATCH", {"nick": "z"}), ("DELETE", None)])
def test_if_match_on_users(node, method, body):
    uid, token = node.new_user("cond")
    api = node.api(token)
    path = f"/users/{uid}"
    first = api.call("GET", path)
    current = api.call("PATCH", path, {"nick": "y"})
    stale, tag = first.header("ETag"), current.header("ETag")
    assert stale and tag and stale != tag
    for headers in ({"If-Match": stale}, {"If-Match": '"nope"'}, {"If-None-Match": tag}, {"If-None-Match": "*"}):
        r = api.call(method, path, body, headers=headers)
        assert (r.status, error_code(r), r.header("ETag")) == (412, "PreconditionFailed", tag), (headers, r)
    after = api.call("GET", path)
    assert after.status == 200 and after.body == current.body, "a refused write changed the user"
    r = api.call(method, path, body, headers={"If-Match": f'"x", {tag}', "If-None-Match": stale})
    assert r.status == 200, r
    if method == "DELETE":
        assert node.api(ADMIN_TOKEN).call("GET", path).status == 404
    else:
        assert r.header("ETag") == etag_of(r) != tag and r.body["nick"] == "z"


def test_stale_if_match_refuses_a_password_change(node):
    uid, token = node.new_user("pwcond")
    api = node.api(token)
    stale = api.call("GET", f"/users/{uid}").header("ETag")
    assert api.call("PATCH", f"/users/{uid}", {"nick": "n"}).status == 200
    r = api.call("PATCH", f"/users/{uid}", {"password": "another horse battery", "oldPassword": "correct horse battery"},
                 headers={"If-Match": stale})
    assert r.status == 412 and error_code(r) == "PreconditionFailed", r
    # Not changed: the session still works and the old password still signs in.
    assert api.call("GET", "/users/me").status == 200
    name = api.call("GET", "/users/me").body["username"]
    assert node.api().call("POST", "/login", {"username": name, "password": "correct horse battery"}).status == 200
