"""Issue #17, "Done means": three roostd nodes (A, B, C) on one throwaway
PostgreSQL database and one S3 bucket (moto), each with its own port and data
directory, as behind a load balancer. What one node commits, every node
serves; what must happen once happens once although every node runs the
same background workers:

 - a write on A is read on B and C (GET, list, count); `_id` and `If-Match`
   conflicts between nodes are decided by the database;
 - a live subscriber on C receives A's writes, in order;
 - sessions hold across nodes (log in on A, use on B, log out on C: 401 on A),
   and so does the log-in throttle (failures spread over A, B, C block as on one node);
 - each webhook is delivered once per endpoint (all three nodes dispatch);
 - each uploaded image's thumbnail is made once (bucket versioning counts every PUT);
 - kill -9 of A under a bounded write load loses no acknowledged write
   (every 201 reads back on B), and A comes back on the same database.

The kill -9 case runs last: the others run on a whole cluster."""

import collections
import http.client
import json
import threading
import uuid

import pytest

from drills.live import LiveStream, live_path
from roost_harness import ADMIN_TOKEN, Client, assert_error, json_query, png
from roost_harness.cluster import Cluster, wait_until
from roost_harness.postgres import postgres_cluster  # noqa: F401 (fixture)
from roost_harness.s3 import MotoS3
from webhook_support import SECRET, Receiver

PASSWORD = "correct horse battery"


def config(receivers):
    endpoints = "".join(f"""    - name: hook{i}
      url: {r.url}
      secret: {SECRET}
      events: [hooked.created]
""" for i, r in enumerate(receivers))
    return f"""password_cost: owasp
hash_concurrency: 2
admin_token: {ADMIN_TOKEN}
default_permission: public
files_permission: public
live_heartbeat: 1
thumbnail_sizes: [128]
thumbnail_workers: 1
collections:
  notes: {{permission: public}}
  hooked: {{permission: public}}
webhooks:
  retry_schedule: [0.2, 0.3, 0.5, 1, 1]
  timeout: 2
  endpoints:
{endpoints}"""


@pytest.fixture(scope="module")
def receivers():
    started = [Receiver().start(), Receiver().start()]
    yield started
    for r in started:
        r.stop()


@pytest.fixture(scope="module")
def bucket(tmp_path_factory):
    with MotoS3(tmp_path_factory.mktemp("moto"), versioning=True) as s3:
        yield s3


@pytest.fixture(scope="module")
def nodes(tmp_path_factory, postgres_cluster, bucket, receivers):  # noqa: F811 (fixture)
    with Cluster(tmp_path_factory.mktemp("cluster"), postgres_cluster.database("cross"), bucket,
                 config(receivers)) as cluster:
        yield cluster


def in_threads(work, args):
    """Runs work(arg) on a thread per arg; re-raises the first error any of them raised."""
    errors = []

    def guarded(arg):
        try:
            work(arg)
        except BaseException as error:  # noqa: BLE001 - re-raised below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(arg,)) for arg in args]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    if errors:
        raise errors[0]


def created(node, collection, body):
    r = node.call("POST", f"/{collection}", body)
    assert r.status == 201, (node.name, r)
    return r.body


def test_a_write_on_one_node_is_read_on_every_other(nodes):
    a, b, c = nodes
    tag = uuid.uuid4().hex
    mine = [created(a, "notes", {"tag": tag, "n": n}) for n in range(5)]
    for entity in mine:
        got = b.call("GET", f"/notes/{entity['_id']}")
        assert got.status == 200 and got.body == entity, (got, entity)
    listed = c.call("GET", "/notes?query=" + json_query({"tag": tag}) + "&sort=" + json_query({"n": 1}))
    assert listed.status == 200 and listed.body == mine, listed
    assert b.call("GET", "/notes/_count?query=" + json_query({"tag": tag})).body == {"count": 5}
    # Conflicts between nodes: the database decides.
    assert_error(b.call("POST", "/notes", {"_id": mine[0]["_id"], "tag": tag}), 409)
    etag = a.call("GET", f"/notes/{mine[1]['_id']}").header("etag")
    assert b.call("PATCH", f"/notes/{mine[1]['_id']}", {"n": 10}, headers={"If-Match": etag}).status == 200
    assert_error(c.call("PATCH", f"/notes/{mine[1]['_id']}", {"n": 11}, headers={"If-Match": etag}), 412)
    assert a.call("GET", f"/notes/{mine[1]['_id']}").body["n"] == 10
    assert c.call("DELETE", f"/notes/{mine[2]['_id']}").status == 200
    assert_error(a.call("GET", f"/notes/{mine[2]['_id']}"), 404)


def admin(node, method, path):
    return node.call(method, path, token=ADMIN_TOKEN)


def me_roles(node, token):
    r = node.call("GET", "/users/me", token=token)
    assert r.status == 200, (node.name, r)
    return r.body["roles"]


def test_role_changes_hold_on_every_node_at_the_next_request(nodes):
    a, b, c = nodes
    uid, token = a.new_user("roled")
    role = "cross-" + uuid.uuid4().hex[:8]
    assert b.call("POST", "/admin/roles", {"name": role}, token=ADMIN_TOKEN).status == 201
    assert_error(c.call("POST", "/admin/roles", {"name": role}, token=ADMIN_TOKEN), 409)
    assert admin(c, "PUT", f"/admin/roles/{role}/members/{uid}").status == 200
    assert [me_roles(n, token) for n in nodes] == [[role]] * 3
    assert admin(a, "DELETE", f"/admin/roles/{role}/members/{uid}").status == 200
    assert [me_roles(n, token) for n in nodes] == [[]] * 3
    # A role deleted on A while B and C add members: no member outlives its role.
    doomed = "doomed-" + uuid.uuid4().hex[:8]
    assert a.call("POST", "/admin/roles", {"name": doomed}, token=ADMIN_TOKEN).status == 201
    users = [a.new_user(f"joiner{i}") for i in range(6)]
    statuses = collections.Counter()

    def add(i):
        statuses[admin((b, c)[i % 2], "PUT", f"/admin/roles/{doomed}/members/{users[i][0]}").status] += 1

    in_threads(lambda i: add(i) if i < len(users) else statuses.update([admin(a, "DELETE", f"/admin/roles/{doomed}").status]),
               range(len(users) + 1))
    assert set(statuses) <= {200, 404}, statuses
    assert_error(admin(b, "GET", f"/admin/roles/{doomed}/members"), 404)
    for i, (_, t) in enumerate(users):
        assert me_roles(nodes[i % 3], t) == [], users[i]


def test_a_subscriber_on_c_receives_a_s_writes_in_order(nodes):
    a, b, c = nodes
    _, token = a.new_user("watcher")
    tag = uuid.uuid4().hex
    stream = LiveStream(c.port, live_path("notes", {"tag": tag}), token=token)
    assert stream.status == 200, stream.status
    assert stream.wait_ready(10)
    try:
        expected = []
        for n in range(12):
            entity = created(a, "notes", {"tag": tag, "n": n})
            expected.append(("create", entity["_id"]))
            if n % 3 == 0:
                assert a.call("PATCH", f"/notes/{entity['_id']}", {"seen": True}).status == 200
                expected.append(("update", entity["_id"]))
        sentinel = created(b, "notes", {"tag": tag, "sentinel": True})
        expected.append(("create", sentinel["_id"]))
        assert stream.wait(lambda s: any(e.entity_id == sentinel["_id"] for e in s.events), 20), \
            (stream.snapshot(), nodes.logs())
        got = [(e.kind, e.entity_id) for e in stream.snapshot()]
        assert got == expected
    finally:
        stream.close()


def test_sessions_hold_across_nodes(nodes):
    a, b, c = nodes
    user_id, first_token = a.new_user("traveller")
    username = a.usernames[user_id]
    login = a.log_in(username, PASSWORD)
    assert login.status == 200, login
    token = login.body["token"]
    me = b.call("GET", "/users/me", token=token)
    assert me.status == 200 and me.body["_id"] == user_id
    assert c.call("POST", "/logout", token=token).status in (200, 204)
    assert_error(a.call("GET", "/users/me", token=token), 401, "InvalidToken")
    assert_error(b.call("GET", "/users/me", token=token), 401, "InvalidToken")
    assert b.call("GET", "/users/me", token=first_token).status == 200, "only the presented session ended"


def test_the_log_in_throttle_holds_across_nodes(nodes):
    """tests/python/accounts_throttle_cases.py pins the limit on one node: five
    failures, then even the right password is refused."""
    a, b, c = nodes
    user_id, _ = a.new_user("victim")
    username = a.usernames[user_id]
    for attempt, node in enumerate([a, b, c, a, b]):
        assert_error(node.log_in(username, f"guess number {attempt}"), 401, "InvalidCredentials")
    for node in (c, a, b):
        blocked = node.log_in(username, PASSWORD)
        assert_error(blocked, 429, "TooManyAttempts")
        assert 1 <= int(blocked.header("Retry-After")) <= 900


def test_each_webhook_is_delivered_once_per_endpoint(nodes, receivers):
    tag = uuid.uuid4().hex
    ids, lock = [], threading.Lock()

    def write(node):
        client = Client(node.port, timeout=15)
        try:
            for n in range(10):
                r = client.call("POST", "/hooked", {"tag": tag, "n": n, "node": node.name})
                assert r.status == 201, r
                with lock:
                    ids.append(r.body["_id"])
        finally:
            client.close()

    in_threads(write, list(nodes))
    assert len(ids) == 30

    def mine(receiver):
        return [(wid, p) for wid, p in receiver.accepted() if p["data"].get("tag") == tag]

    for receiver in receivers:
        assert receiver.wait_for(lambda r: len({p["data"]["_id"] for _, p in mine(r)}) == 30, 30), nodes.logs()
    # Every node's dispatcher had the chance to send a duplicate: give them a few polls more.
    wait_until(lambda: False, timeout=3)
    for receiver in receivers:
        got = mine(receiver)
        per_id = collections.Counter(wid for wid, _ in got)
        assert all(n == 1 for n in per_id.values()), per_id.most_common(3)
        assert sorted(p["data"]["_id"] for _, p in got) == sorted(ids)
        assert len(receiver.requests) == len(receiver.accepted()), "no delivery was refused or retried"


def test_each_thumbnail_is_made_once(nodes, bucket):
    uploads = []
    for i, node in enumerate(list(nodes) * 2):
        status, _, raw = node.request("POST", "/files", png(200 + i, 150, i), {"Content-Type": "image/png"})
        assert status == 201, raw
        uploads.append(json.loads(raw)["_id"])

    def ready(file_id, node):
        meta = node.call("GET", f"/files/{file_id}/meta").body
        return all(t["state"] == "ready" for t in meta["thumbnails"].values())

    c = nodes[2]
    assert wait_until(lambda: all(ready(f, c) for f in uploads), timeout=60), nodes.logs()
    wait_until(lambda: False, timeout=2)  # a second claim would have made its copy by now
    for file_id in uploads:
        keys = sorted(bucket.keys(f"files/{file_id}/"))
        assert keys == [f"files/{file_id}/original", f"files/{file_id}/thumb/128.webp"], keys
        assert bucket.versions(f"files/{file_id}/thumb/128.webp") == 1, file_id
        assert nodes[0].call("GET", f"/files/{file_id}/thumbnail?size=128").status == 200


def test_kill_9_of_a_under_write_load_loses_no_acknowledged_write(nodes):
    a, b, c = nodes
    tag = uuid.uuid4().hex
    acked, lock, killed = {}, threading.Lock(), threading.Event()

    def write(worker):
        client = Client(a.port, timeout=10)
        try:
            for n in range(100):
                body = {"tag": tag, "worker": worker, "n": n}
                try:
                    r = client.call("POST", "/notes", body)
                except (OSError, http.client.HTTPException):
                    if killed.is_set():
                        return  # A is gone: this write may or may not have committed
                    raise
                assert r.status == 201, r
                with lock:
                    acked[r.body["_id"]] = body
        finally:
            client.close()

    def kill_after_100():
        assert wait_until(lambda: len(acked) >= 100, timeout=60, interval=0.01), "A acknowledged too few writes"
        killed.set()
        a.kill9()

    in_threads(lambda job: job(), [kill_after_100] + [lambda w=w: write(w) for w in range(4)])
    assert len(acked) < 400, "the load ended before the kill: nothing was in flight"
    for entity_id, body in acked.items():
        got = b.call("GET", f"/notes/{entity_id}")
        assert got.status == 200, (entity_id, got)
        assert {k: got.body[k] for k in body} == body
    count = b.call("GET", "/notes/_count?query=" + json_query({"tag": tag})).body["count"]
    assert len(acked) <= count <= 400
    assert created(c, "notes", {"tag": tag, "after": True})["_id"], "B and C serve on while A is down"
    a.start(timeout=60)
    assert a.call("GET", "/notes/_count?query=" + json_query({"tag": tag})).body["count"] == count + 1
