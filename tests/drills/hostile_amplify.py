"""The hostile drill's amplification classes (issue #33): one small request
must not make the daemon hold, store or send a multiple of what it changed.

- resolve: a document holding many references to one large target, and
  many documents full of references, read with `?resolve=` (bounded per
  response: at most 8 MiB added, 10,000 expansions, 1000 targets read);
- feed: batches of one-field PATCHes to a large document (the change feed
  keeps a reverse patch, not the whole document; the answer carries the
  entity once).
Each returns its requests through the bounds drill's `_Tally`."""

import json
import random
import string
import urllib.parse

from roost_harness import engine

from .hostile_corpus_cases import COLLECTION

MiB = 1 << 20


def _blob(n, seed):
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters) for _ in range(n))


def _ref(_id):
    return {"_type": "ref", "_collection": COLLECTION, "_id": _id}


def bound_resolve(t):
    c = COLLECTION
    big = t.send("seed-target", "POST", f"/{c}", {"blob": _blob(900_000, 1)}, allowed={201})
    if big is None or big.status != 201:
        return
    target = big.json()["_id"]
    for copies in (150, 2000):
        r = t.send(f"holder-{copies}", "POST", f"/{c}", {"refs": [_ref(target)] * copies}, allowed={201})
        if r is None or r.status != 201:
            continue
        holder = r.json()["_id"]
        got = t.send(f"resolve-{copies}", "GET", f"/{c}/{holder}?resolve=refs", allowed={200})
        if got is not None and len(got.raw) > 10 * MiB:
            t.failures.append(f"{t.name} resolve-{copies}: answered {len(got.raw) >> 20} MiB (at most 8 MiB added)")
    for i in range(8):
        t.send(f"dense-{i}", "POST", f"/{c}", {"dense": "yes", "refs": [_ref(target)] * 4000}, allowed={201})
    q = urllib.parse.quote(json.dumps({"dense": "yes"}))
    got = t.send("resolve-list", "GET", f"/{c}?resolve=refs&limit=50&query={q}", allowed={200})
    if got is not None and len(got.raw) > 10 * MiB + 8 * 300_000:
        t.failures.append(f"{t.name} resolve-list: answered {len(got.raw) >> 20} MiB")


def bound_feed(t):
    c = COLLECTION
    size = 200_000
    r = t.send("seed-doc", "POST", f"/{c}", {"blob": _blob(size, 2), "n": 0}, allowed={201})
    if r is None or r.status != 201:
        return
    doc = r.json()["_id"]
    before = _feed_bytes(t.daemon)
    for round_ in range(2):
        ops = [{"method": "PATCH", "path": f"/{c}/{doc}", "body": {"n": round_ * 100 + i}} for i in range(50)]
        got = t.send(f"batch-{round_}", "POST", "/_batch", {"operations": ops}, allowed={200})
        if got is not None and got.status == 200 and len(got.raw) > 2 * size:
            t.failures.append(f"{t.name} batch-{round_}: answered {len(got.raw)} bytes for one {size}-byte document")
    grown = _feed_bytes(t.daemon) - before
    if grown > 100 * 2000:
        t.failures.append(f"{t.name}: the change feed grew {grown} bytes for 100 one-field updates (whole copies: {100 * size})")


def _feed_bytes(daemon):
    return int(engine.sql(daemon.data_dir, "SELECT coalesce(sum(length(prev_doc)), 0) FROM _changes")[0][0])
