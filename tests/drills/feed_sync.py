"""The change feed's reading side for the drills: paged `_deltaset` syncs and
the feed's rows and head read from a stopped (or live, read-only) database."""

import hashlib
import json
import urllib.parse

from roost_harness import Client, engine

from .live_judge import FEED_HEAD_SQL

PAGE_SIZES = [1, 7, 50, 1000]


def _delta(client, coll, since, limit):
    params = {"limit": str(limit)}
    if since:
        params["since"] = since
    reply = client.request("GET", f"/{coll}/_deltaset?{urllib.parse.urlencode(params)}")
    if reply.status != 200:
        raise RuntimeError(f"GET /{coll}/_deltaset answered {reply.status}: {reply.raw[:200]!r}")
    body = reply.json()
    if reply.headers.get("x-roost-cursor") != body["cursor"]:
        raise RuntimeError(f"X-Roost-Cursor {reply.headers.get('x-roost-cursor')!r} is not the body's cursor")
    return body


def sync(port, coll, since, rng, copy=None, max_pages=20000):
    """Pages from `since` (None: a listing) until more=false, applying each page
    to `copy`. Returns (cursor, changed {id: doc, latest wins}, deleted ids, pages)."""
    client = Client(port, timeout=30)
    changed, deleted, pages = {}, set(), 0
    try:
        cursor = since
        for _ in range(max_pages):
            body = _delta(client, coll, cursor, rng.choice(PAGE_SIZES))
            pages += 1
            for d in body["changed"]:
                changed[d["_id"]] = d
                deleted.discard(d["_id"])
                if copy is not None:
                    copy[d["_id"]] = d
            for d in body["deleted"]:
                deleted.add(d["_id"])
                changed.pop(d["_id"], None)
                if copy is not None:
                    copy.pop(d["_id"], None)
            cursor = body["cursor"]
            if not body["more"]:
                return cursor, changed, deleted, pages
        raise RuntimeError(f"/{coll}/_deltaset: more=true after {max_pages} pages")
    finally:
        client.close()


def feed_rows(data_dir):
    """Read-only: (rows [(seq, coll, id, op)] in rowid order (seq order on PostgreSQL,
    which has no row order of its own), the feed's head: the largest position handed
    out, which compaction keeps in the table, never below the horizon)."""
    order = "rowid" if engine.name() == "sqlite" else "seq"
    rows = [(int(s), c, i, int(o)) for s, c, i, o in engine.sql(data_dir, f"SELECT seq, coll, id, op FROM _changes ORDER BY {order}")]
    head = engine.sql(data_dir, FEED_HEAD_SQL[engine.name()])
    return rows, (int(head[0][0]) if head else 0)


def _digest(rows):
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()


def position_failures(rows, head, where):
    """`_changes.seq` strictly increasing, and the head at or above its largest value."""
    failures = []
    seqs = [r[0] for r in rows]
    bad = [(a, b) for a, b in zip(seqs, seqs[1:]) if b <= a]
    if bad:
        failures.append(f"{where}: _changes.seq not strictly increasing: {bad[:3]}")
    if seqs and head < seqs[-1]:
        failures.append(f"{where}: the feed head is {head}, below max(seq) {seqs[-1]}")
    return failures
