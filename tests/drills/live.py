"""Live-updates drill (issue #16): every event a subscriber may see, exactly
once, in commit order, across reconnects and kill -9 restarts, and never an
event to the wrong user.

  - Four users write to a `private` collection from their own threads:
    creates, updates (their own documents and those whose `_acl.write` names
    them), random `_acl.read`/`_acl.write` changes, a `hot` flag flipped at
    random, deletes; and they message each other (`messages` and `threads`).
  - Each user has two subscribers, `GET /events` on [notes, messages,
    threads] and one on notes with `{"hot": true}`, and an admin subscriber
    follows everything. Subscribers drop their connection at random moments
    and resume with `Last-Event-ID` (or `?since=`).
  - Every `--cycles` the daemon is killed (SIGKILL) under the load and
    restarted on the same data directory; everyone resumes, but a few
    subscribers stay away for the next cycle (a phone offline) and come back
    with a backlog. Entities carry up to 2 KB of padding, so backlogs are
    hundreds of KB (live_buffer_bytes is the default 1 MiB).

Checks, after a last clean stop:
  - the admin's concatenated stream is exactly the change feed (`_changes`,
    read from the database file) of the followed collections after the
    start, in order: the ground truth of which state each change committed;
  - every acknowledged write is in it;
  - for every user subscriber, the events equal the ones the admin's stream
    implies for that user (the entity readable by the user before and/or
    after the change: creator, `_acl.read` or `_acl.write`; and for the
    filtered one, matching `hot: true`): counted as lost, duplicated, out of
    order, to the wrong user (an event for a change the user could read
    neither before nor after) and wrong kind or entity;
  - the replayed copy of each subscriber equals a fresh list under its rights.

`LiveStream` (live_stream.py) is the SSE client tests/python/test_live.py uses too;
the load is in live_load.py, the checks in live_judge.py.
Run `PYTHONPATH=tests python -m drills.live --cycles 10`; it prints one summary line.
"""

import argparse
import random
import sys
import tempfile
import threading
import time

from roost_harness import Client, Roostd, cursors

from .common import ADMIN_TOKEN, list_all, print_report
from .live_judge import FEED_HEAD_SQL, expected_kind, feed_head, feed_rows, judge, readable  # noqa: F401
from .live_load import CONFIG, FOLLOWED, NOTES, Ledger, Subscriber, writer  # noqa: F401
from .live_paths import events_path, live_path, metric  # noqa: F401 (the drills' and tests' API)
from .live_stream import Event, LiveStream, cursor_epoch, cursor_seq  # noqa: F401 (the drills' and tests' API)


def run(cycles=10, cycle_seconds=2.0, users=4, seed=None, workdir=None, log=print):
    started = time.monotonic()
    seed = seed if seed is not None else random.randrange(2**31)
    rng = random.Random(seed)
    own_tmp = None
    if workdir is None:
        own_tmp = tempfile.TemporaryDirectory(prefix="roost-live-drill-")
        workdir = own_tmp.name
    daemon = Roostd(workdir, CONFIG)
    cursors.register(daemon.data_dir)
    failures, lost = [], []
    counts = {"duplicated": 0, "out_of_order": 0, "wrong_user": 0, "wrong": 0}
    subs, ledger = [], Ledger()
    kills = expected_total = delivered = sessions = resets = 0
    stop, pause = threading.Event(), threading.Event()
    threads = []
    try:
        daemon.start()
        port_box = [daemon.port]
        ids, tokens = [], {}
        for k in range(users):
            reply = Client(daemon.port, timeout=15).request(
                "POST", "/users", {"username": f"live{k}-{seed}", "password": "correct horse battery"})
            if reply.status != 201:
                raise RuntimeError(f"sign-up answered {reply.status}")
            uid = reply.json()["user"]["_id"]
            ids.append(uid)
            tokens[uid] = reply.json()["token"]
        everything = [{"collection": c} for c in FOLLOWED]
        admin = Subscriber("admin", None, ADMIN_TOKEN, everything, random.Random(rng.random()))
        subs.append(admin)
        for uid in ids:
            subs.append(Subscriber(f"all-{uid[-6:]}", uid, tokens[uid], everything, random.Random(rng.random())))
            subs.append(Subscriber(f"hot-{uid[-6:]}", uid, tokens[uid], [{"collection": NOTES, "query": {"hot": True}}],
                                   random.Random(rng.random())))
        for s in subs:
            if not s.connect(daemon.port) or not s.stream.wait_ready(10):
                raise RuntimeError(f"{s.name} could not subscribe: {s.errors}")
        start_seq = feed_head(daemon.data_dir)  # nothing commits between the sign-ups and the streams
        for uid in ids:
            t = threading.Thread(target=writer, args=(port_box, uid, tokens[uid], ids, ledger, stop,
                                                      random.Random(rng.random()), pause), daemon=True)
            t.start()
            threads.append(t)

        def churn(until):
            """Subscribers drop and resume at random until `until` (monotonic)."""
            while time.monotonic() < until:
                time.sleep(rng.uniform(0.02, 0.15))
                s = rng.choice(subs)
                if s.away or (s is admin and rng.random() < 0.5):
                    continue
                s.harvest()
                s.connect(port_box[0])

        for cycle in range(cycles):
            churn(time.monotonic() + cycle_seconds * rng.uniform(0.5, 1.0))
            daemon.kill9()
            kills += 1
            pause.set()
            time.sleep(rng.uniform(0, 0.2))
            for s in subs:
                s.harvest()
            daemon.start()
            port_box[0] = daemon.port
            pause.clear()
            for s in subs:
                s.away = s is not admin and cycle < cycles - 1 and rng.random() < 0.2
                if not s.away and not s.connect(daemon.port):
                    failures.append(f"cycle {cycle}: {s.name} could not resume: {s.errors[-1:]}")
        churn(time.monotonic() + cycle_seconds * 0.5)
        stop.set()
        for t in threads:
            t.join(10)
        # Let every subscriber catch up to the feed's head, then stop cleanly.
        sentinel = Client(daemon.port, timeout=10, token=ADMIN_TOKEN).request(
            "PUT", f"/{NOTES}/sentinel", {"_acl": {"read": ids, "write": []}, "hot": True})
        if sentinel.status not in (200, 201):
            failures.append(f"sentinel write answered {sentinel.status}")
        for s in subs:
            s.away = False
            if s.stream is None:
                s.connect(daemon.port)
            if s.stream is not None and not s.stream.wait(
                    lambda st: any(e.entity_id == "sentinel" for e in st.events) or st.end is not None, 20):
                failures.append(f"{s.name}: the sentinel did not arrive within 20 s")
            s.harvest()
        final_lists = {uid: {d["_id"]: d for d in list_all(daemon.port, NOTES, token=tokens[uid])} for uid in ids}
        code = daemon.stop(timeout=25, strict=False)
        if code not in (0, None):
            failures.append(f"roostd exited with {code} at the final stop")

        # The admin's concatenation is the truth, once it equals the feed.
        rows = feed_rows(daemon.data_dir, FOLLOWED, start_seq)
        got = [(cursor_seq(e.id), e.collection, e.entity_id, e.kind) for e in admin.events if e.kind != "reset"]
        if got != rows:
            diff = next((k for k, (a, b) in enumerate(zip(got, rows)) if a != b), min(len(got), len(rows)))
            lost.append(f"admin stream differs from the feed at #{diff}: stream {got[diff:diff + 2]} feed "
                        f"{rows[diff:diff + 2]} ({len(got)} vs {len(rows)} changes)")
        truth, state = {}, {}
        for e in admin.events:
            if e.kind == "reset":
                continue
            key = (e.collection, e.entity_id)
            truth[cursor_seq(e.id)] = (e.collection, e.entity_id, e.kind, state.get(key), e.entity)
            state[key] = e.entity
        seen_versions = {(t[0], t[1], (t[4] or {}).get("_updatedAt")) for t in truth.values() if t[2] != "delete"}
        deleted = {(t[0], t[1]) for t in truth.values() if t[2] == "delete"}
        with ledger.lock:
            acked = list(ledger.acked)
        for coll, eid, version in acked:
            if (coll, eid, version) not in seen_versions and (version is not None or (coll, eid) not in deleted):
                lost.append(f"acknowledged write {coll}/{eid} ({version or 'delete'}) is not in the admin's stream")
        for s in subs:
            sessions += s.sessions
            resets += s.resets
            failures += s.errors[:5]
            if s is admin:
                delivered += len(s.events)
                continue
            verdict, n_expected = judge(s, truth, start_seq)
            expected_total += n_expected
            delivered += len(s.events)
            lost += verdict["lost"]
            for k in counts:
                counts[k] += len(verdict[k])
                failures += verdict[k][:10]
            if s.topics[0].get("query") is None:  # the replayed copy equals a fresh list
                copy = {}
                for e in s.events:
                    if e.collection == NOTES:
                        if e.kind in ("create", "update", "enter"):
                            copy[e.entity_id] = e.entity
                        elif e.kind in ("delete", "leave"):
                            copy.pop(e.entity_id, None)
                if copy != final_lists[s.user]:
                    failures.append(f"{s.name}: the copy replayed from its events differs from its list: "
                                    f"{sorted(set(copy) ^ set(final_lists[s.user]))[:3]}")
    except Exception as e:  # noqa: BLE001 - a drill that breaks is a failed drill with a line
        failures.append(f"drill error: {type(e).__name__}: {e}")
    finally:
        stop.set()
        for s in subs:
            if s.stream is not None:
                s.stream.close()
        log_tail = daemon.log_tail(20)
        daemon.close()
        if own_tmp is not None:
            own_tmp.cleanup()
    line = (f"live drill (seed {seed}): {users} users, {len(subs)} subscribers, {kills} kill -9 cycles, "
            f"{ledger.tried} writes tried ({len(ledger.acked)} acknowledged, {ledger.no_answer} without an answer), "
            f"{sessions} stream sessions ({resets} resets), {delivered} events delivered for {expected_total} expected; "
            f"{len(lost)} lost, {counts['duplicated']} duplicated, {counts['out_of_order']} out of order, "
            f"{counts['wrong_user']} to the wrong user, {counts['wrong']} wrong; {len(failures)} failures; "
            f"{time.monotonic() - started:.0f} s")
    return {"line": line, "failures": failures, "lost": lost, "kills": kills, "expected": expected_total,
            "delivered": delivered, "counts": counts, "acked": len(ledger.acked), "log_tail": log_tail,
            "seed": seed, "sessions": sessions}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cycles", type=int, default=10)
    ap.add_argument("--cycle-seconds", type=float, default=2.0)
    ap.add_argument("--seed", type=int)
    args = ap.parse_args(argv)
    return print_report(run(args.cycles, args.cycle_seconds, seed=args.seed,
                            log=lambda m: print(m, file=sys.stderr)))


if __name__ == "__main__":
    sys.exit(main())
