"""Shared by the live-update tests (test_live*.py): the daemons' configurations, a roostd
with keep-alive clients per token, the module-scoped `roost`, `limits` and `people`
fixtures, and assertions on streams."""

import urllib.parse
import uuid

import pytest

from drills.common import ADMIN_TOKEN
from drills.live import LiveStream, cursor_seq
from roost_harness import Client, Roostd, cursors


CONFIG = f"""\
password_cost: interactive
hash_concurrency: 2
admin_token: {ADMIN_TOKEN}
live_heartbeat: 1
default_permission: shared
collections:
  livePub: {{permission: public}}
  liveShared: {{permission: shared}}
  livePriv: {{permission: private}}
  liveRO: {{permission: readonly}}
"""

LIMITS_CONFIG = CONFIG + "live_max_connections: 3\nlive_buffer_bytes: 65536\nsession_lifetime: 3\n"
PER_ADDRESS_CONFIG = CONFIG + 'live_max_connections: 10\nlive_max_per_address: 2\ntrusted_proxies: ["127.0.0.1"]\n'


PASSWORD = "correct horse battery"


def q(s):
    return urllib.parse.quote(s, safe="")


class Node(Roostd):
    """A roostd with a keep-alive client per token (no retries: a dropped connection is an error here)."""

    usernames = {}

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        cursors.register(self.data_dir)   # event ids are sealed: the checks open them with its key

    def api(self, token=None):
        return Client(self.port, timeout=15, token=token)

    def new_user(self, name):
        """Signs up `name` plus a random suffix; returns (user _id, token)."""
        username = f"{name}-{uuid.uuid4().hex[:6]}"
        r = self.api().request("POST", "/users", {"username": username, "password": PASSWORD,
                                                  "email": f"{name}@example.com"})
        assert r.status == 201, r
        self.usernames[r.json()["user"]["_id"]] = username
        return r.json()["user"]["_id"], r.json()["token"]

    def stream(self, path, token=None, **kw):
        s = LiveStream(self.port, path, token=token, **kw)
        if s.status == 200:
            assert s.wait_ready(10), f"no retry: preamble on {path}"
        return s


def _daemon(tmp_path_factory, name, config):
    node = Node(tmp_path_factory.mktemp(name), config)
    node.start()
    return node


@pytest.fixture(scope="module")
def roost(tmp_path_factory):
    node = _daemon(tmp_path_factory, "live", CONFIG)
    yield node
    node.stop()
    node.close()


@pytest.fixture(scope="module")
def limits(tmp_path_factory):
    node = _daemon(tmp_path_factory, "live-limits", LIMITS_CONFIG)
    yield node
    node.stop()
    node.close()


@pytest.fixture(scope="module")
def people(roost):
    return {name: roost.new_user(name) for name in ("alice", "bob", "carol")}


def kinds(events):
    return [(e.kind, e.entity_id) for e in events]


def assert_ascending(events):
    seqs = [cursor_seq(e.id) for e in events]
    assert all(s is not None for s in seqs), events
    assert seqs == sorted(set(seqs)), f"ids not strictly ascending: {seqs}"


def assert_error(reply_or_stream, status, code=None):
    body = reply_or_stream.json()
    assert reply_or_stream.status == status, (reply_or_stream.status, body)
    assert isinstance(body, dict) and set(body) == {"error", "description"}, body
    if code:
        assert body["error"] == code, body


def until_sentinel(stream, sentinel_id, timeout=10):
    assert stream.wait(lambda s: any(e.entity_id == sentinel_id for e in s.events) or s.end, timeout), \
        f"sentinel {sentinel_id} did not arrive: {stream.snapshot()}"
    return [e for e in stream.snapshot()]
