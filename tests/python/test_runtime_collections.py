"""Collections set up at run time (issue #36, docs/COLLECTIONS.md): `/admin/collections` creates,
changes, empties and drops collections whose level, indexes, references, rules and JSON Schema are
stored in the database; the config file's collections are read-only there (409 ManagedByConfig);
settings are checked before anything changes; index builds run in the background while writes go on
and never change an answer; a change survives a restart and reaches every node sharing PostgreSQL;
`roostd export-collections` and `roostd check-schema` read them. Runs on both engines (ENGINE_SUITE)."""

import json
import subprocess
import threading
import time
import urllib.parse

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, binary, clean_env, engine
from live_support import Node

CONFIG = FAST_HASHING + f"admin_token: {ADMIN_TOKEN}\ndefault_permission: shared\nauto_create_collections: false\nrate_limits: off\n" \
    "collections:\n  fixed:\n    permission: public\n"
JSON_TYPE = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    n = Node(tmp_path_factory.mktemp("runtime"), CONFIG)
    n.start()
    yield n
    n.stop()
    n.close()


def admin(node, method, path, body=None, headers=None):
    return node.call(method, path, body, token=ADMIN_TOKEN, headers=headers)


def q(value):
    return urllib.parse.quote(json.dumps(value))


def wait_until(check, timeout=20.0, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"not within {timeout} s")


def detail(node, name):
    r = admin(node, "GET", f"/admin/collections/{name}")
    assert r.status == 200, r
    return r.body


def test_a_collection_set_up_at_run_time_takes_writes_with_its_level_and_schema(node):
    user = node.sign_up("alice")
    # auto_create_collections is off: an unknown collection takes no write until it is set up.
    assert node.call("POST", "/notes", {"text": "x"}, token=user["token"]).status in (403, 404)
    r = admin(node, "POST", "/admin/collections", {"name": "notes", "permission": "private",
                                                    "schema": {"type": "object", "required": ["text"],
                                                               "properties": {"text": {"type": "string", "maxLength": 20}}}})
    assert r.status == 201, r
    assert r.body["managedBy"] == "runtime" and r.headers.get("etag") == f'"{r.body["version"]}"'
    bad = node.call("POST", "/notes", {"text": 12}, token=user["token"])
    assert (bad.status, bad.body["error"]) == (400, "SchemaViolation") and bad.body["violations"][0]["pointer"] == "/text", bad
    ok = node.call("POST", "/notes", {"text": "hello"}, token=user["token"])
    assert ok.status == 201, ok
    # private: another user sees nothing, anonymous must sign in
    bob = node.sign_up("bob")
    assert node.call("GET", f"/notes/{ok.body['_id']}", token=bob["token"]).status == 404
    assert node.call("GET", "/notes").status == 401
    # The level changes at once (this node applied it before answering).
    r = admin(node, "PATCH", "/admin/collections/notes", {"permission": "shared", "schema": None})
    assert r.status == 200 and "schema" not in r.body["settings"], r
    assert node.call("GET", f"/notes/{ok.body['_id']}", token=bob["token"]).status == 200
    assert node.call("POST", "/notes", {"text": 12}, token=user["token"]).status == 201  # schema removed
    listed = {c["name"]: c for c in admin(node, "GET", "/admin/collections").body}
    assert listed["notes"]["managedBy"] == "runtime" and listed["notes"]["permission"] == "shared"
    assert listed["fixed"]["managedBy"] == "config"


@pytest.mark.parametrize("body, status, code", [
    ({"name": "fixed", "permission": "private"}, 409, "ManagedByConfig"),
    ({"name": "users"}, 400, "ReservedCollectionName"),
    ({"name": "_secret"}, 400, "InvalidCollectionName"),
    ({"name": "bad name!"}, 400, "InvalidCollectionName"),
    ({"name": "c1", "permission": "everyone"}, 400, "InvalidSettings"),
    ({"name": "c2", "indexes": ["a:sphere"]}, 400, "InvalidSettings"),
    ({"name": "c3", "rules": {"read": {"$where": "1"}}}, 400, "InvalidSettings"),
    ({"name": "c4", "schema": {"type": "object", "propertiez": {}}}, 400, "InvalidSettings"),
    ({"name": "c5", "references": {"owner": {"collection": "files"}}}, 400, "InvalidSettings"),
    ({"name": "c6", "push_sync": True}, 400, "InvalidSettings"),
    ({"permission": "public"}, 400, "InvalidSettings"),
])
def test_bad_settings_are_refused_and_change_nothing(node, body, status, code):
    before = admin(node, "GET", "/admin/collections").body
    r = admin(node, "POST", "/admin/collections", body)
    assert (r.status, r.body["error"]) == (status, code), r
    assert admin(node, "GET", "/admin/collections").body == before


def test_only_the_admin_manages_collections_and_bodies_are_checked(node):
    user = node.sign_up("mallory")
    for token in (None, user["token"], "not-a-token"):
        r = node.call("POST", "/admin/collections", {"name": "evil", "permission": "public"}, token=token)
        assert r.status in (401, 403), r
        assert node.call("DELETE", "/admin/collections/fixed?confirm=fixed", token=token).status in (401, 403)
    assert admin(node, "GET", "/admin/collections/evil").status == 404
    r = node.call("POST", "/admin/collections", token=ADMIN_TOKEN, raw_body=b"{not json", headers=JSON_TYPE)
    assert (r.status, r.body["error"]) == (400, "InvalidJSON"), r
    r = node.call("POST", "/admin/collections", token=ADMIN_TOKEN, raw_body=b"name=x",
                  headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status == 415, r
    r = node.call("POST", "/admin/collections", token=ADMIN_TOKEN, raw_body=b" " * (3 << 20), headers=JSON_TYPE)
    assert r.status == 413, r


def test_dry_run_checks_without_saving_and_if_match_refuses_a_stale_change(node):
    r = admin(node, "POST", "/admin/collections?dry_run=true", {"name": "drafts", "rules": {"read": {"owner": "@caller.id"}}})
    assert r.status == 200 and r.body["valid"] is True, r
    assert admin(node, "GET", "/admin/collections/drafts").status == 404
    r = admin(node, "POST", "/admin/collections?dry_run=true", {"name": "drafts", "rules": {"read": {"owner": {"$regex": "("}}}})
    assert (r.status, r.body["error"]) == (400, "InvalidSettings"), r
    created = admin(node, "POST", "/admin/collections", {"name": "drafts", "permission": "shared"})
    assert created.status == 201
    assert admin(node, "POST", "/admin/collections", {"name": "drafts"}).status == 409
    version = created.body["version"]
    changed = admin(node, "PATCH", "/admin/collections/drafts", {"permission": "private"}, headers={"If-Match": f'"{version}"'})
    assert changed.status == 200 and changed.body["version"] > version, changed
    stale = admin(node, "PATCH", "/admin/collections/drafts", {"permission": "public"}, headers={"If-Match": f'"{version}"'})
    assert (stale.status, stale.body["error"]) == (412, "PreconditionFailed"), stale
    assert detail(node, "drafts")["permission"] == "private"
    assert admin(node, "PATCH", "/admin/collections/fixed", {"permission": "private"}).body["error"] == "ManagedByConfig"
    assert detail(node, "fixed")["reason"].startswith("The config file")


def test_an_index_is_built_in_the_background_while_writes_go_on_and_answers_never_change(node):
    assert admin(node, "POST", "/admin/collections", {"name": "items", "permission": "public"}).status == 201
    api = node.api()
    for i in range(3000):
        assert api.call("POST", "/items", {"n": i % 97, "k": f"k{i % 13}", **({"tags": [i % 5, 7]} if i % 3 == 0 else {})}).status == 201
    query = f"/items?query={q({'n': {'$gte': 10, '$lt': 20}})}&sort={q({'n': 1, '_id': 1})}&limit=500"
    before = [d["_id"] for d in api.call("GET", query).body]
    stop, failures, written = threading.Event(), [], []

    def write():
        client = node.api()
        i = 0
        while not stop.is_set():
            r = client.call("POST", "/items", {"n": 1000 + i, "k": "late"})
            (written if r.status == 201 else failures).append(r)
            i += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert admin(node, "PATCH", "/admin/collections/items", {"indexes": ["n", "tags"]}).status == 200
        states = []

        def ready():
            d = detail(node, "items")
            states.append([i["state"] for i in d["indexes"]])
            return all(i["state"] == "ready" for i in d["indexes"]) and len(d["indexes"]) == 2
        wait_until(ready, timeout=60)
    finally:
        stop.set()
        writer.join()
    assert not failures, failures[:3]
    assert written, "no write went through during the build"
    after = [d["_id"] for d in api.call("GET", query).body]
    assert after == before
    plan = admin(node, "GET", query + "&explain=true").body
    assert plan["strategy"] != "scan", plan
    # Documents written during the build are in the index too.
    late = api.call("GET", f"/items?query={q({'n': {'$gte': 1000}})}&count=true&limit=1")
    assert int(late.headers["x-total-count"]) == len(written)
    tagged = api.call("GET", f"/items?query={q({'tags': 7})}&count=true&limit=1")
    assert int(tagged.headers["x-total-count"]) == 1000
    # Dropping the index: reads stay right meanwhile and after.
    assert admin(node, "PATCH", "/admin/collections/items", {"indexes": ["tags"]}).status == 200
    assert [d["_id"] for d in api.call("GET", query).body] == before
    assert int(api.call("GET", f"/items?query={q({'tags': 7})}&count=true&limit=1").headers["x-total-count"]) == 1000


def test_emptying_and_dropping_delete_through_the_feed(node):
    assert admin(node, "POST", "/admin/collections", {"name": "temp", "permission": "public"}).status == 201
    api = node.api()
    ids = [api.call("POST", "/temp", {"i": i}).body["_id"] for i in range(1200)]
    cursor = api.call("GET", "/temp/_deltaset?limit=10000").body["cursor"]
    assert admin(node, "POST", "/admin/collections/temp/empty").status == 400  # no confirmation
    r = admin(node, "POST", "/admin/collections/temp/empty?confirm=temp")
    assert r.status == 202, r
    wait_until(lambda: detail(node, "temp").get("emptying", {}).get("done"), timeout=60)
    assert detail(node, "temp")["emptying"]["deleted"] == 1200
    delta = api.call("GET", f"/temp/_deltaset?since={cursor}&limit=10000").body
    assert sorted(d["_id"] for d in delta["deleted"]) == sorted(ids)
    assert api.call("POST", "/temp", {"i": 1}).status == 201  # still set up
    r = admin(node, "DELETE", "/admin/collections/temp?confirm=temp")
    assert r.status == 202, r
    assert api.call("POST", "/temp", {"i": 2}).status in (401, 403, 404)  # gone: auto_create_collections is off
    wait_until(lambda: admin(node, "GET", "/admin/collections/temp").status == 404, timeout=30)


def test_settings_survive_a_restart_and_export_and_check_schema_read_them(tmp_path):
    n = Node(tmp_path / "n", CONFIG)
    n.start()
    try:
        assert admin(n, "POST", "/admin/collections", {"name": "books", "permission": "public", "indexes": ["year"]}).status == 201
        api = n.api()
        for year in (1990, 2005, 2020):
            assert api.call("POST", "/books", {"year": year}).status == 201
        assert admin(n, "PATCH", "/admin/collections/books",
                     {"schema": {"type": "object", "properties": {"year": {"type": "integer", "minimum": 2000}}}}).status == 200
        violations = admin(n, "GET", "/admin/collections/books/violations").body
        assert violations["scanned"] == 3 and [v["violations"][0]["keyword"] for v in violations["failing"]] == ["minimum"]
        n.stop()
        env = clean_env()
        url = engine.database_url(n.data_dir)
        if url:
            env["ROOST_DATABASE_URL"] = url
        argv = [str(binary()), "--config", str(n.config_path), "--data-dir", str(n.data_dir)]
        out = subprocess.run([argv[0], "export-collections"] + argv[1:], env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert "books:" in out.stdout and "year" in out.stdout and "fixed" not in out.stdout.split("collections:")[1]
        check = subprocess.run([argv[0], "check-schema"] + argv[1:], env=env, capture_output=True, text=True, timeout=60)
        assert check.returncode == 1 and check.stdout.count("books/") == 1 and "/year" in check.stdout, check
        n.start()
        assert api.__class__(n.port).call("POST", "/books", {"year": 1999}).status == 400  # the schema holds after the restart
        # The index is listed once the restarted node has read it (seen empty for a moment under load, 29 Nov).
        wait_until(lambda: [i["index"] for i in detail(n, "books")["indexes"]] == ["year"], timeout=10)
        assert detail(n, "books")["managedBy"] == "runtime"
    finally:
        n.stop()
        n.close()


@pytest.mark.skipif(engine.name() != "postgresql", reason="nodes share one database only on PostgreSQL")
def test_a_change_on_one_node_holds_on_another_sharing_postgresql(tmp_path):
    a = Node(tmp_path / "a", CONFIG)
    a.start()
    b = Node(tmp_path / "b", CONFIG, env={"ROOST_DATABASE_URL": engine.database_url(a.data_dir)})
    b.start()
    try:
        assert admin(a, "POST", "/admin/collections", {"name": "shared_notes", "permission": "public",
                                                       "schema": {"type": "object", "required": ["t"]}}).status == 201
        wait_until(lambda: b.call("POST", "/shared_notes", {"x": 1}).status == 400, timeout=3)
        assert b.call("POST", "/shared_notes", {"t": 1}).status == 201
        assert admin(a, "PATCH", "/admin/collections/shared_notes", {"permission": "private"}).status == 200
        wait_until(lambda: b.call("GET", "/shared_notes").status == 401, timeout=3)
        assert detail(b, "shared_notes")["permission"] == "private"
    finally:
        b.stop()
        b.close()
        a.stop()
        a.close()


def test_the_served_openapi_has_a_model_per_collection_schema_for_those_who_may_see_it(node):
    import yaml
    from openapi_spec_validator import validate
    schema = {"type": "object", "required": ["name"], "$defs": {"money": {"type": "number", "minimum": 0}},
              "properties": {"name": {"type": "string"}, "price": {"$ref": "#/$defs/money"}}}
    assert admin(node, "POST", "/admin/collections", {"name": "shop_items", "permission": "public", "schema": schema}).status == 201
    assert admin(node, "POST", "/admin/collections", {"name": "ledger", "permission": "private", "schema": schema}).status == 201
    status, _, raw = node.request("GET", "/openapi.yaml", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert status == 200
    spec = yaml.safe_load(raw)
    validate(spec)
    models = spec["components"]["schemas"]
    assert models["Shop_itemsDocument"]["properties"]["price"]["$ref"] == "#/components/schemas/Shop_itemsDocument/$defs/money"
    assert "LedgerDocument" in models
    # Anyone else sees the models of public collections only.
    status, _, raw = node.request("GET", "/openapi.yaml")
    models = yaml.safe_load(raw)["components"]["schemas"]
    assert "Shop_itemsDocument" in models and "LedgerDocument" not in models


def test_references_set_up_at_run_time_are_enforced_at_once(node):
    assert admin(node, "POST", "/admin/collections", {"name": "authors", "permission": "public"}).status == 201
    author = node.call("POST", "/authors", {"name": "Le Guin"}).body["_id"]
    r = admin(node, "POST", "/admin/collections", {"name": "novels", "permission": "public",
                                                    "references": {"author": {"collection": "authors", "on_delete": "restrict"}}})
    assert r.status == 201, r

    def ref(i):
        return {"_type": "ref", "_collection": "authors", "_id": i}
    # The references apply within moments of the answer (a writer job after the change).
    wait_until(lambda: node.call("POST", "/novels", {"author": ref("nobody")}).status in (400, 409), timeout=5)
    bad = node.call("POST", "/novels", {"author": ref("nobody")})
    assert bad.status in (400, 409) and bad.body["error"] in ("InvalidDocument", "Referenced", "Conflict"), bad
    assert node.call("POST", "/novels", {"author": "a bare id"}).status == 400
    assert node.call("POST", "/novels", {"author": ref(author)}).status == 201
    held = admin(node, "DELETE", f"/authors/{author}")
    assert (held.status, held.body["error"]) == (409, "Referenced"), held
    # Dropping the declaration frees the target.
    assert admin(node, "PATCH", "/admin/collections/novels", {"references": None}).status == 200
    wait_until(lambda: admin(node, "DELETE", f"/authors/{author}").status == 200, timeout=5)


def test_a_level_or_rule_change_makes_older_sync_cursors_resync_once(node):
    user = node.sign_up("syncer")
    assert admin(node, "POST", "/admin/collections", {"name": "synced", "permission": "shared"}).status == 201
    assert node.call("POST", "/synced", {"v": 1}, token=user["token"]).status == 201
    cursor = node.call("GET", "/synced/_deltaset", token=user["token"]).body["cursor"]
    assert node.call("GET", f"/synced/_deltaset?since={cursor}", token=user["token"]).status == 200
    assert admin(node, "PATCH", "/admin/collections/synced", {"rules": {"read": {"v": {"$gt": 0}}}}).status == 200
    gone = node.call("GET", f"/synced/_deltaset?since={cursor}", token=user["token"])
    assert (gone.status, gone.body["error"]) == (410, "CursorExpired"), gone
    fresh = node.call("GET", "/synced/_deltaset", token=user["token"])
    assert fresh.status == 200 and [d["v"] for d in fresh.body["changed"]] == [1]
    assert node.call("GET", f"/synced/_deltaset?since={fresh.body['cursor']}", token=user["token"]).status == 200


def test_a_schema_reference_format_takes_roosts_reference_objects(node):
    schema = {"type": "object", "properties": {"author": {"format": "reference", "x-roost-collection": "writers"}}}
    assert admin(node, "POST", "/admin/collections", {"name": "essays", "permission": "public", "schema": schema}).status == 201
    assert node.call("POST", "/essays", {"author": {"_type": "ref", "_collection": "writers", "_id": "w1"}}).status == 201
    assert node.call("POST", "/essays", {"author": "w1"}).status == 201
    wrong = node.call("POST", "/essays", {"author": {"_type": "ref", "_collection": "other", "_id": "w1"}})
    assert (wrong.status, wrong.body["violations"][0]["pointer"]) == (400, "/author"), wrong


def test_the_served_openapi_follows_each_change_of_schema_and_level(node):
    import yaml

    def models(token=None):
        headers = {"Authorization": f"Bearer {token}"} if token else None
        return yaml.safe_load(node.request("GET", "/openapi.yaml", headers=headers)[2])["components"]["schemas"]
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert admin(node, "POST", "/admin/collections", {"name": "drifting", "permission": "private", "schema": schema}).status == 201
    assert "DriftingDocument" not in models() and "a" in models(ADMIN_TOKEN)["DriftingDocument"]["properties"]
    schema["properties"] = {"b": {"type": "integer"}}
    assert admin(node, "PATCH", "/admin/collections/drifting", {"schema": schema, "permission": "public"}).status == 200
    assert list(models()["DriftingDocument"]["properties"]) == ["b"]
    assert list(models(ADMIN_TOKEN)["DriftingDocument"]["properties"]) == ["b"]
    assert admin(node, "PATCH", "/admin/collections/drifting", {"schema": None}).status == 200
    assert "DriftingDocument" not in models(ADMIN_TOKEN)


@pytest.mark.parametrize("rows", [0, 3000])
def test_a_geo_index_checks_points_from_the_answer_on_before_it_is_built(node, rows):
    """The check follows the declaration, not the build: the first write after the 201
    (while the index may still be building) is judged, on a new and on a full collection."""
    name = f"spots{rows}"
    assert admin(node, "POST", "/admin/collections", {"name": name, "permission": "public"}).status == 201
    for start in range(0, rows, 100):
        batch = [{"method": "POST", "path": f"/{name}", "body": {"n": i}} for i in range(start, start + 100)]
        assert admin(node, "POST", "/_batch", {"operations": batch}).status == 200
    r = admin(node, "PATCH", f"/admin/collections/{name}", {"indexes": ["where:geo"]})
    assert r.status == 200, r
    for bad in ([37.77, -122.48], [10, 200], {"lat": 37.77, "lng": -122.48}):
        refused = node.call("POST", f"/{name}", {"where": bad})
        assert (refused.status, refused.body["error"]) == (400, "InvalidDocument"), (bad, refused)
        assert "[longitude, latitude]" in refused.body["description"]
    good = node.call("POST", f"/{name}", {"where": [-122.48, 37.77]})
    assert good.status == 201, good
    # An update that moves the point is judged too; one that leaves it alone is not.
    moved = node.call("PATCH", f"/{name}/{good.body['_id']}", {"where": [37.77, -122.48]})
    assert moved.status == 400, moved
    assert node.call("PATCH", f"/{name}/{good.body['_id']}", {"n": 1}).status == 200
    # The stored point is found once the build is done.
    wait_until(lambda: [i["state"] for i in detail(node, name)["indexes"]] == ["ready"], timeout=60)
    near = node.call("GET", f"/{name}?query=" + q({"where": {"$geoWithin": {"$centerSphere": [[-122.48, 37.77], 0.001]}}}))
    assert near.status == 200 and [d["_id"] for d in near.body] == [good.body["_id"]], near
    # A box reads the index's points (PostgreSQL: its points table, filled by the build or kept by the write).
    box = node.call("GET", f"/{name}?query=" + q({"where": {"$geoWithin": {"$box": [[-122.5, 37.7], [-122.4, 37.8]]}}}))
    assert box.status == 200 and [d["_id"] for d in box.body] == [good.body["_id"]], box
    # Nearest first; on PostgreSQL the build also made the points table's k-nearest index (valid), which the probe
    # walks where the planner finds it cheaper than sorting (not with these few points).
    nearest = node.call("GET", f"/{name}?limit=1&query=" + q({"where": {"$nearSphere": [-122.40, 37.70]}}))
    assert nearest.status == 200 and [d["_id"] for d in nearest.body] == [good.body["_id"]], nearest
    if engine.name() == "postgresql":
        (table_id,), = engine.sql(node.data_dir, "SELECT id FROM _collections WHERE name = ?", (name,))
        valid = engine.sql(node.data_dir, "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname LIKE ?",
                           (f"c\\_{table_id}\\_g%\\_p\\_near",))
        assert valid == [("t",)], valid
