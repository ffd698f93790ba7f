"""Shared set-up of the reference tests: the declared references, a daemon and
small request helpers."""

import tempfile
import urllib.parse

import pytest

from roost_harness import ADMIN_TOKEN as ADMIN, Roostd
from webhook_support import Receiver, config as webhook_config


REFS = """default_permission: public
references_max_cascade: {bound}
collections:
  secrets:
    permission: private
  r_restrict:
    references:
      target: {{collection: targets, on_delete: restrict}}
  r_cascade:
    references:
      target: {{collection: targets, on_delete: cascade}}
  r_nullify:
    references:
      target: {{collection: targets, on_delete: nullify}}
  notes:
    references:
      secret: {{collection: secrets, on_delete: restrict}}
      owner: {{collection: users, on_delete: cascade}}
  posts:
    references:
      author: {{collection: authors, on_delete: cascade}}
  comments:
    references:
      post: {{collection: posts, on_delete: cascade}}
  bulk:
    references:
      target: {{collection: targets, on_delete: cascade}}
  messages:
    references:
      spot: {{collection: targets, on_delete: nullify}}
"""

EVENTS = ("authors.deleted", "posts.deleted", "comments.deleted", "r_nullify.updated")


def ref(collection, id_):
    return {"_type": "ref", "_collection": collection, "_id": id_}


@pytest.fixture(scope="module")
def roost():
    receiver = Receiver().start()
    with tempfile.TemporaryDirectory() as tmp:
        hooks = webhook_config(receiver.url, events=EVENTS)
        daemon = Roostd(tmp, hooks + REFS.format(bound=50)).start()
        daemon.receiver = receiver
        try:
            yield daemon
        finally:
            daemon.stop()
            receiver.stop()


def admin(roost, method, path, body=None):
    resp = roost.call(method, path, body, ADMIN)
    return resp.status, resp.body


def create(roost, collection, body, token=ADMIN):
    r = roost.call("POST", f"/{collection}", body, token)
    assert r.status == 201, r.body
    return r.body["_id"]


def exists(roost, collection, id_):
    return admin(roost, "GET", f"/{collection}/{id_}")[0] == 200


def feed_cursor(roost, collection):
    code, page = admin(roost, "GET", f"/{collection}/_deltaset")
    while page["more"]:
        code, page = admin(roost, "GET", f"/{collection}/_deltaset?since={urllib.parse.quote(page['cursor'])}")
    return page["cursor"]


def batch_create(roost, collection, bodies):
    for start in range(0, len(bodies), 100):
        ops = [{"method": "POST", "path": f"/{collection}", "body": b} for b in bodies[start:start + 100]]
        code, body = admin(roost, "POST", "/_batch", {"operations": ops})
        assert code == 200, body


def count(roost, collection):
    return admin(roost, "GET", f"/{collection}/_count")[1]["count"]
