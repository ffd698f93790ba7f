"""The checks of the live drill (live.py): the change feed read from the
database (either engine) as the ground truth, and each subscriber's events
judged against what that truth implies for its user."""

from roost_harness import engine

from .live_stream import cursor_seq


def readable(user, state):
    """May `user` read this committed state of an entity of a private collection?"""
    if state is None:
        return False
    acl = state.get("_acl") or {}
    return acl.get("creator") == user or user in (acl.get("read") or []) or user in (acl.get("write") or [])


def expected_kind(op, before_ok, after_ok):
    if op == "create":
        return "create" if after_ok else None
    if op == "delete":
        return "delete" if before_ok else None
    return {(True, True): "update", (False, True): "enter", (True, False): "leave"}.get((before_ok, after_ok))


def feed_rows(data_dir, collections, after):
    """(seq, collection, _id, op) of the feed's rows for `collections` after `after`, on either engine."""
    ops = {1: "create", 2: "update", 3: "delete"}
    rows = engine.sql(data_dir, "SELECT seq, coll, id, op FROM _changes WHERE seq > ? ORDER BY seq", (after,))
    return [(int(s), c, i, ops.get(int(o), str(o))) for s, c, i, o in rows if c in collections]


def feed_head(data_dir):
    """The last position handed out: the newest row's (compaction keeps it), never below the horizon."""
    return int(engine.sql(data_dir, FEED_HEAD_SQL[engine.name()])[0][0])


FEED_HEAD_SQL = {
    "sqlite": "SELECT max(coalesce((SELECT max(seq) FROM _changes), 0), "
              "coalesce((SELECT CAST(value AS INTEGER) FROM _meta WHERE key = 'feed_horizon'), 0))",
    "postgresql": "SELECT greatest(coalesce((SELECT max(seq) FROM _changes), 0), "
                  "coalesce((SELECT value::bigint FROM _meta WHERE key = 'feed_horizon'), 0))",
}


def judge(sub, truth, start_seq):
    """Compares a user subscriber's concatenated events with what `truth`
    (the admin's events: seq -> (collection, _id, op, before, after)) implies."""
    out = {"lost": [], "duplicated": [], "out_of_order": [], "wrong_user": [], "wrong": []}
    hot_only = len(sub.topics) == 1 and sub.topics[0].get("query") == {"hot": True}
    followed = {t["collection"] for t in sub.topics}

    def sees(state):
        return readable(sub.user, state) and (not hot_only or (state or {}).get("hot") is True)

    expected = {}
    for seq, (coll, eid, op, before, after) in truth.items():
        if seq <= start_seq or coll not in followed:
            continue
        kind = expected_kind(op, sees(before), sees(after))
        if kind:
            expected[seq] = (coll, eid, kind, after if kind in ("create", "update", "enter") else None)
    seen = {}
    last = start_seq
    for e in sub.events:
        if e.kind == "reset":
            out["wrong"].append(f"{sub.name}: unexpected reset {e.data}")
            continue
        seq = cursor_seq(e.id)
        if seq in seen:
            out["duplicated"].append(f"{sub.name}: {e} again")
            continue
        seen[seq] = e
        if seq <= last:
            out["out_of_order"].append(f"{sub.name}: {e} after position {last}")
        last = max(last, seq)
        if seq not in expected:
            t = truth.get(seq)
            if t is None or not (readable(sub.user, t[3]) or readable(sub.user, t[4])):
                out["wrong_user"].append(f"{sub.name} ({sub.user}): {e}, a change it could not read: {t and t[:3]}")
            else:
                out["wrong"].append(f"{sub.name}: {e} not expected (filter?) for {t[:3]}")
            continue
        coll, eid, kind, entity = expected[seq]
        if (e.collection, e.entity_id, e.kind) != (coll, eid, kind):
            out["wrong"].append(f"{sub.name}: {e}, expected {kind} {coll}/{eid}")
        elif e.entity != entity:
            out["wrong"].append(f"{sub.name}: {e} entity {str(e.entity)[:120]} != committed {str(entity)[:120]}")
    for seq in sorted(set(expected) - set(seen)):
        out["lost"].append(f"{sub.name} ({sub.user}): missed {expected[seq][2]} {expected[seq][0]}/{expected[seq][1]} @{seq}")
    return out, len(expected)
