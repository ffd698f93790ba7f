"""`?resolve=` is bounded per response (issue #33): at most 1000 distinct
targets read, 10,000 references expanded, 8 MiB added and 1 s spent, counted
over every document and field of the response. Past a bound the remaining
references stay references and the response carries `X-Roost-Resolve:
truncated`; the daemon keeps answering others meanwhile. Runs on both engines."""

import concurrent.futures
import json
import random
import time
import urllib.parse
import uuid

import pytest

from roost_harness import FAST_HASHING, random_letters, running_roostd

CONFIG = FAST_HASHING + """max_body_bytes: 2097152
collections:
  pub: {permission: public}
  team: {permission: shared}
"""

MiB = 1024 * 1024
_rng = random.Random(7)


def blob(n):
    return random_letters(_rng, n)


def ref(coll, _id):
    return {"_type": "ref", "_collection": coll, "_id": _id}


@pytest.fixture(scope="module")
def roost():
    with running_roostd(CONFIG) as d:
        yield d


@pytest.fixture(scope="module")
def users(roost):
    return [roost.new_user(n)[1] for n in ("ann", "ben")]


def post(roost, coll, body, token=None):
    r = roost.call("POST", f"/{coll}", body, token=token, timeout=60)
    assert r.status == 201, r
    return r.body["_id"]


@pytest.mark.parametrize("coll,who", [("pub", None), ("team", 0)], ids=["public-anonymous", "shared-signed-in"])
def test_many_references_to_one_large_target_stop_at_the_byte_bound(roost, users, coll, who):
    token = users[who] if who is not None else None
    big = post(roost, coll, {"blob": blob(900_000)}, token)
    holder = post(roost, coll, {"refs": [ref(coll, big)] * 150, "one": ref(coll, big)}, token)
    started = time.monotonic()
    r = roost.call("GET", f"/{coll}/{holder}?resolve=refs,one", token=users[1] if who is not None else None, timeout=60)
    assert r.status == 200, r
    assert len(r.raw) <= 8 * MiB + 2 * MiB, len(r.raw)        # not 150 × 900 KB = 135 MB
    assert r.headers.get("x-roost-resolve") == "truncated"
    expanded = [x for x in r.body["refs"] if "blob" in x]
    kept = [x for x in r.body["refs"] if x.get("_type") == "ref"]
    assert 1 <= len(expanded) <= 10 and len(expanded) + len(kept) == 150
    assert time.monotonic() - started < 20
    # the same list page is bounded too
    page = roost.call("GET", f"/{coll}?resolve=refs&limit=5", token=token, timeout=60)
    assert page.status == 200 and len(page.raw) <= 10 * MiB + 5 * MiB


def test_distinct_targets_stop_at_a_thousand_reads(roost):
    targets = []
    ops = []
    for i in range(1100):
        _id = f"t-{uuid.uuid4().hex[:10]}"
        targets.append(_id)
        ops.append({"method": "POST", "path": "/pub", "body": {"_id": _id, "i": i}})
    for k in range(0, len(ops), 100):
        assert roost.call("POST", "/_batch", {"operations": ops[k:k + 100]}).status == 200
    holder = post(roost, "pub", {"refs": [ref("pub", t) for t in targets]})
    r = roost.call("GET", f"/pub/{holder}?resolve=refs", timeout=60)
    assert r.status == 200 and r.headers.get("x-roost-resolve") == "truncated"
    expanded = [x for x in r.body["refs"] if "i" in x]
    assert len(expanded) == 1000
    assert [x["i"] for x in expanded] == list(range(1000))       # in order, the rest left as references
    assert all(x.get("_type") == "ref" for x in r.body["refs"][1000:])


def test_many_documents_full_of_references_share_one_budget_and_others_are_served(roost):
    small = post(roost, "pub", {"name": "target"})
    tag = uuid.uuid4().hex[:8]
    for _ in range(20):
        post(roost, "pub", {"tag": tag, "refs": [ref("pub", small)] * 4000})
    path = "/pub?resolve=refs&query=" + urllib.parse.quote(json.dumps({"tag": tag}))

    def heavy():
        return roost.call("GET", path, timeout=60)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        loads = [pool.submit(heavy) for _ in range(3)]
        time.sleep(0.05)
        t = time.monotonic()
        plain = roost.call("GET", f"/pub/{small}")
        plain_elapsed = time.monotonic() - t
        answers = [f.result() for f in loads]
    assert plain.status == 200 and plain_elapsed < 5, plain_elapsed
    for r in answers:
        assert r.status == 200, r
        assert r.headers.get("x-roost-resolve") == "truncated"
        expanded = sum(1 for doc in r.body for x in doc["refs"] if x.get("name") == "target")
        assert expanded <= 10_000, expanded                       # not 20 × 4000 = 80,000


def test_an_ordinary_resolve_is_whole_and_unmarked(roost):
    a = post(roost, "pub", {"name": "a"})
    b = post(roost, "pub", {"name": "b"})
    holder = post(roost, "pub", {"refs": [ref("pub", a), ref("pub", b)], "one": ref("pub", a), "missing": ref("pub", "nope")})
    r = roost.call("GET", f"/pub/{holder}?resolve=refs,one,missing")
    assert r.status == 200 and "x-roost-resolve" not in r.headers
    assert [x["name"] for x in r.body["refs"]] == ["a", "b"] and r.body["one"]["name"] == "a"
    assert r.body["missing"] == ref("pub", "nope")
