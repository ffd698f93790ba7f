"""Access rules on the built-in collections (docs/RULES.md): `collections.users.rules` (read,
update, delete) and `collections.files.rules` (read, create, delete), enforced on every path
that reveals or changes them: lists, reads by id, counts, delta sync, live streams, a user's
own files, profile updates, uploads and deletes. Operations their own endpoints decide
(users' create, files' update) and other settings are refused when the config is read."""

import json
import subprocess

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, Roostd, binary, clean_env, png
from live_support import Node

USERS_READ = {"$or": [{"public": True}, {"_id": "@caller.id"}]}
USERS_UPDATE = {"verified": "@previous.verified"}
FILES_READ = {"$or": [{"_acl.creator": "@caller.id"}, {"contentType": {"$regex": "^image/"}}]}
FILES_CREATE = {"size": {"$lte": 4000}}
FILES_DELETE = {"contentType": {"$ne": "image/png"}}

CONFIG = FAST_HASHING + f"""admin_token: {ADMIN_TOKEN}
files_permission: public
collections:
  users:
    rules:
      read: '{json.dumps(USERS_READ)}'
      update: '{json.dumps(USERS_UPDATE)}'
  files:
    rules:
      read: '{json.dumps(FILES_READ)}'
      create: '{json.dumps(FILES_CREATE)}'
      delete: '{json.dumps(FILES_DELETE)}'
"""


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    n = Node(tmp_path_factory.mktemp("builtin-rules"), CONFIG)
    n.start()
    yield n
    n.stop()
    n.close()


def upload(n, token, body, content_type):
    return n.call("POST", "/files", raw_body=body, token=token, headers={"Content-Type": content_type})


def test_users_read_rule_hides_private_profiles_everywhere(node):
    (a, ta), (b, tb), (c, tc) = node.new_user("alice"), node.new_user("bob"), node.new_user("carol")
    assert node.call("PATCH", f"/users/{c}", {"public": True}, token=tc).status == 200
    bob = node.api(tb)
    listed = {u["_id"] for u in bob.request("GET", "/users?limit=1000").json()}
    assert c in listed and b in listed and a not in listed
    assert bob.request("GET", f"/users/{a}").status == 404          # as for an id that does not exist
    assert bob.request("GET", f"/users/{c}").status == 200
    assert bob.request("GET", "/users/_count").json()["count"] == len(listed)
    delta = bob.request("GET", "/users/_deltaset").json()
    assert a not in {u["_id"] for u in delta["changed"]} and c in {u["_id"] for u in delta["changed"]}
    # /users/me is always the caller's own record.
    assert node.api(ta).request("GET", "/users/me").json()["_id"] == a
    # The admin passes every rule.
    assert node.call("GET", f"/users/{a}", token=ADMIN_TOKEN).status == 200


def test_users_update_rule_keeps_server_fields(node):
    (a, ta) = node.new_user("dave")
    r = node.call("PATCH", f"/users/{a}", {"verified": True}, token=ta)
    assert (r.status, r.body["error"]) == (403, "AccessRuleDenied"), r
    assert node.call("PATCH", f"/users/{a}", {"bio": "hello"}, token=ta).status == 200
    # The admin sets it; the user keeps it while changing other fields, and cannot drop it.
    assert node.call("PATCH", f"/users/{a}", {"verified": True}, token=ADMIN_TOKEN).status == 200
    assert node.call("PATCH", f"/users/{a}", {"bio": "again"}, token=ta).status == 200
    r = node.call("PATCH", f"/users/{a}", {"verified": None}, token=ta)
    assert r.status == 403, r


def test_files_rules_on_upload_read_list_live_and_delete(node):
    (a, ta), (b, tb) = node.new_user("erin"), node.new_user("frank")
    stream = node.stream("/files/_live", token=tb)
    image = upload(node, ta, png(16, 16, 1), "image/png")
    text = upload(node, ta, b"notes of erin", "text/plain")
    assert image.status == 201 and text.status == 201, (image, text)
    image_id, text_id = image.body["_id"], text.body["_id"]
    # create rule: too big is refused before anything is stored.
    big = upload(node, ta, b"x" * 5000, "text/plain")
    assert (big.status, big.body["error"]) == (403, "AccessRuleDenied"), big
    # read rule: frank sees the image, not erin's text; erin sees both.
    for path, status in ((f"/files/{image_id}/meta", 200), (f"/files/{text_id}/meta", 404), (f"/files/{text_id}", 404),
                         (f"/files/{image_id}", 200)):
        assert node.call("GET", path, token=tb).status == status, path
    assert node.call("GET", f"/files/{text_id}/meta", token=ta).status == 200
    assert {f["_id"] for f in node.call("GET", "/files", token=ta).body} >= {image_id, text_id}
    # Delta sync and live follow the rule.
    changed = {f["_id"] for f in node.call("GET", "/files/_deltaset", token=tb).body["changed"]}
    assert image_id in changed and text_id not in changed
    stream.wait(lambda s: any(e.entity_id == image_id for e in s.events), 5)
    stream.close()
    ids = {e.entity_id for e in stream.events}
    assert image_id in ids and text_id not in ids, ids
    # delete rule: PNGs stay; the text goes (files_permission public lets anyone try).
    r = node.call("DELETE", f"/files/{image_id}", token=ta)
    assert (r.status, r.body["error"]) == (403, "AccessRuleDenied"), r
    assert node.call("DELETE", f"/files/{text_id}", token=tb).status == 404   # hidden from frank: as if missing
    assert node.call("DELETE", f"/files/{text_id}", token=ta).status == 200


def check_config(tmp_path, text):
    path = tmp_path / "roost.yaml"
    path.write_text(text)
    return subprocess.run([str(binary()), "check-config", "--config", str(path)], capture_output=True, text=True,
                          timeout=30, env=clean_env())


@pytest.mark.parametrize("yaml, message", [
    ("collections:\n  users:\n    rules:\n      create: {a: 1}\n", "collections.users.rules.create: not for users"),
    ("collections:\n  files:\n    rules:\n      update: {a: 1}\n", "collections.files.rules.update: not for files"),
    ("collections:\n  users:\n    permission: private\n", "collections.users: only rules can be set"),
    ("collections:\n  files:\n    indexes: [size]\n", "collections.files: only rules and on_user_delete can be set"),
    ("collections:\n  files:\n    rules:\n      read: {owner: '@caller.name'}\n", "collections.files.rules.read"),
])
def test_check_config_refuses_what_the_built_in_collections_cannot_take(tmp_path, yaml, message):
    out = check_config(tmp_path, yaml)
    assert out.returncode != 0 and message in out.stderr + out.stdout, (out.stdout, out.stderr)


def test_check_config_accepts_built_in_rules(tmp_path):
    out = check_config(tmp_path, CONFIG)
    assert out.returncode == 0, (out.stdout, out.stderr)
