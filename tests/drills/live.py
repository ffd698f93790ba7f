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

`LiveStream` (below) is the SSE client tests/python/test_live.py uses too.
Run `PYTHONPATH=tests python -m drills.live --cycles 10`; it prints one summary line.
"""

import argparse
import json
import pathlib
import random
import socket
import sqlite3
import sys
import tempfile
import threading
import time
import urllib.parse

from roost_harness import Client, Roostd, cursors

from .common import ADMIN_TOKEN, list_all, print_report


# ---------------------------------------------------------------------------------------------
# The SSE client.

class Event:
    __slots__ = ("id", "kind", "data", "t")

    def __init__(self, id, kind, data, t):
        self.id, self.kind, self.data, self.t = id, kind, data, t

    @property
    def entity_id(self):
        return self.data.get("_id") if isinstance(self.data, dict) else None

    @property
    def collection(self):
        return self.data.get("collection") if isinstance(self.data, dict) else None

    @property
    def entity(self):
        return self.data.get("entity") if isinstance(self.data, dict) else None

    def __repr__(self):
        return f"<{self.kind} {self.collection}/{self.entity_id} @{cursor_seq(self.id)}>"


def cursor_seq(token):
    """The feed position inside an event id (sealed; the checks open it with the
    database's key, registered with `cursors.register`, only to verify
    ordering), or None."""
    return cursors.cursor_seq(token) if token else None


def cursor_epoch(token):
    return cursors.cursor_epoch(token)


class LiveStream:
    """One SSE request on a raw socket. The response head is read at once
    (`status`, `headers`, and `body`/`json` when it is not a stream); a 200
    stream is then read by a thread that de-chunks the body incrementally,
    splits lines and collects events (`events`, with arrival times),
    `comments` (heartbeats), `retry`.

    `end` says how the stream ended: "clean" (the last, empty chunk arrived),
    "eof" (closed without it), "reset" (connection reset), "closed" (we
    closed it), or None while it runs. `read=False` starts no reader thread
    (a slow client that never reads)."""

    def __init__(self, port, path, token=None, last_event_id=None, headers=None, read=True, rcvbuf=None,
                 timeout=10.0, on_event=None):
        self.path = path
        self.events = []
        self.comments = []
        self.retry = None
        self.end = None
        self.body = b""
        self.cond = threading.Condition()
        self.on_event = on_event
        self._closing = False
        self._thread = None
        self.opened = time.monotonic()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        hdrs = {"Host": f"127.0.0.1:{port}", "Accept": "text/event-stream"}
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        if last_event_id:
            hdrs["Last-Event-ID"] = last_event_id
        hdrs.update(headers or {})
        head = f"GET {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()) + "\r\n"
        self.sock.sendall(head.encode())
        self._buf = b""
        self._read_head()
        if self.status != 200:
            self._read_plain_body()
            self._finish("closed")
            return
        if read:
            self.sock.settimeout(None)
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    # -- the head, and non-stream bodies
    def _recv(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError
        return data

    def _read_head(self):
        while b"\r\n\r\n" not in self._buf:
            self._buf += self._recv()
        head, self._buf = self._buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            self.headers[k.strip().lower()] = v.strip()
        self.chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()

    def _read_plain_body(self):
        try:
            if self.chunked:
                out = bytearray()
                for piece in self._chunks():
                    out += piece
                self.body = bytes(out)
            else:
                n = int(self.headers.get("content-length", "0"))
                while len(self._buf) < n:
                    self._buf += self._recv()
                self.body = self._buf[:n]
        except (OSError, EOFError):
            pass

    def json(self):
        return json.loads(self.body) if self.body else None

    def _chunks(self):
        """Yields the de-chunked body's pieces as they arrive; returns at the last chunk."""
        while True:
            while b"\r\n" not in self._buf:
                self._buf += self._recv()
            size_line, self._buf = self._buf.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while b"\r\n" not in self._buf:  # trailers end with an empty line
                    self._buf += self._recv()
                return
            while len(self._buf) < size + 2:
                self._buf += self._recv()
            piece, self._buf = self._buf[:size], self._buf[size + 2:]
            yield piece

    # -- the stream
    def _run(self):
        text = b""
        fields = {}
        end = "eof"
        try:
            pieces = self._chunks() if self.chunked else self._raw_pieces()
            for piece in pieces:
                text += piece
                while b"\n" in text:
                    line, text = text.split(b"\n", 1)
                    line = line.rstrip(b"\r").decode()
                    fields = self._line(line, fields)
            else:
                end = "clean" if self.chunked else "eof"
        except EOFError:
            end = "eof"
        except ConnectionResetError:
            end = "reset"
        except OSError:
            end = "closed" if self._closing else "reset"
        self._finish("closed" if self._closing else end)

    def _raw_pieces(self):
        if self._buf:
            yield self._buf
            self._buf = b""
        while True:
            yield self._recv()

    def _line(self, line, fields):
        now = time.monotonic()
        if line == "":
            if "event" in fields or "data" in fields:
                data = fields.get("data")
                try:
                    data = json.loads(data) if data is not None else None
                except ValueError:
                    pass
                event = Event(fields.get("id"), fields.get("event", "message"), data, now)
                with self.cond:
                    if self._closing:
                        return {}
                    self.events.append(event)
                    self.cond.notify_all()
                if self.on_event:
                    self.on_event(event)
            return {}
        if line.startswith(":"):
            with self.cond:
                self.comments.append((line[1:].strip(), now))
                self.cond.notify_all()
            return fields
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "retry":
            with self.cond:
                self.retry = int(value)
                self.cond.notify_all()
        elif name == "data":
            fields["data"] = fields["data"] + "\n" + value if "data" in fields else value
        elif name in ("id", "event"):
            fields[name] = value
        return fields

    def _finish(self, end):
        with self.cond:
            if self.end is None:
                self.end = end
                self.ended_at = time.monotonic()
            self.cond.notify_all()
        try:
            self.sock.close()
        except OSError:
            pass

    # -- for the tests
    def wait(self, predicate, timeout=10.0):
        """Waits (bounded) until predicate(self) holds; returns whether it did."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(min(left, 0.2))
            return True

    def wait_ready(self, timeout=10.0):
        """The `retry:` preamble arrived: the hub admitted the stream."""
        return self.wait(lambda s: s.retry is not None or s.end is not None, timeout)

    def wait_events(self, n, timeout=10.0):
        return self.wait(lambda s: len(s.events) >= n or s.end is not None, timeout) and len(self.events) >= n

    def wait_end(self, timeout=10.0):
        return self.wait(lambda s: s.end is not None, timeout)

    def snapshot(self):
        with self.cond:
            return list(self.events)

    @property
    def last_id(self):
        with self.cond:
            ids = [e.id for e in self.events if e.id]
            return ids[-1] if ids else None

    def close(self):
        """Closes our side at once; events parsed before are kept, nothing after."""
        with self.cond:
            self._closing = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass
        if self._thread is not None:
            self._thread.join(5)
        with self.cond:
            if self.end is None:
                self.end = "closed"
                self.ended_at = time.monotonic()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def events_path(subscriptions, **params):
    q = {"subscribe": json.dumps(subscriptions), **params}
    return "/events?" + urllib.parse.urlencode(q)


def live_path(collection, query=None, **params):
    q = dict(params)
    if query is not None:
        q["query"] = json.dumps(query)
    return f"/{collection}/_live" + ("?" + urllib.parse.urlencode(q) if q else "")


def metric(port, name):
    """The value of one unlabelled metric on /metrics (0.0 when absent)."""
    c = Client(port, timeout=10)
    try:
        text = c.request("GET", "/metrics").raw.decode()
    finally:
        c.close()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


# ---------------------------------------------------------------------------------------------
# The drill.

NOTES = "livenotes"
CONFIG = f"""\
password_cost: interactive
hash_concurrency: 2
admin_token: {ADMIN_TOKEN}
live_heartbeat: 1
collections:
  {NOTES}: {{permission: private}}
"""
FOLLOWED = (NOTES, "messages", "threads")


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


class Subscriber:
    """A user's (or the admin's) stream that drops and resumes at random."""

    def __init__(self, name, user, token, topics, rng):
        self.name, self.user, self.token, self.topics, self.rng = name, user, token, topics, rng
        self.events = []          # every event of every session, concatenated
        self.sessions = 0
        self.resets = 0
        self.stream = None
        self.last_id = None
        self.errors = []
        self.away = False         # offline for a whole kill cycle: resumes with a backlog

    def path(self, since_param):
        params = {}
        if since_param and self.last_id:
            params["since"] = self.last_id
        return events_path(self.topics, **params)

    def connect(self, port):
        use_param = self.rng.random() < 0.3
        self.stream = LiveStream(port, self.path(use_param), token=self.token,
                                 last_event_id=None if use_param else self.last_id, timeout=5)
        self.sessions += 1
        if self.stream.status != 200:
            self.errors.append(f"{self.name}: stream answered {self.stream.status} {self.stream.body[:120]!r}")
            self.stream = None
            return False
        return True

    def harvest(self):
        """Takes the closed stream's events into the concatenation."""
        if self.stream is None:
            return
        self.stream.close()
        for e in self.stream.snapshot():
            if e.kind == "reset":
                self.resets += 1
            self.events.append(e)
            if e.id:
                self.last_id = e.id
        self.stream = None


class Ledger:
    def __init__(self):
        self.lock = threading.Lock()
        self.acked = []           # (collection, _id, _updatedAt) of every acknowledged write
        self.docs = {}            # NOTES _id -> creator (alive as far as we know)
        self.tried = 0
        self.refused = 0
        self.no_answer = 0


def writer(port_box, user, token, users, ledger, stop, rng, pause):
    client = None
    n = 0
    while not stop.is_set():
        if pause.is_set():
            time.sleep(0.02)
            continue
        if client is None or client.port != port_box[0]:
            client = Client(port_box[0], timeout=5, token=token)
        r = rng.random()
        with ledger.lock:
            mine = [i for i, c in ledger.docs.items() if c == user]
            anyone = list(ledger.docs)
        try:
            with ledger.lock:
                ledger.tried += 1
            if r < 0.25 or not mine:
                n += 1
                doc_id = f"{user}:{n}"
                reply = client.request("PUT", f"/{NOTES}/{urllib.parse.quote(doc_id)}",
                                       {"n": n, "hot": rng.random() < 0.5, "pad": "p" * rng.randint(0, 2000),
                                        "_acl": {"read": rng.sample(users, rng.randint(0, 2)), "write": []}})
                if reply.status in (200, 201):
                    with ledger.lock:
                        ledger.docs[doc_id] = user
            elif r < 0.45:
                target = rng.choice(anyone)   # may be someone else's: allowed when _acl.write names us
                reply = client.request("PATCH", f"/{NOTES}/{urllib.parse.quote(target)}",
                                       {"n": rng.randint(0, 10**6), "hot": rng.random() < 0.5,
                                        "pad": "q" * rng.randint(0, 2000)})
            elif r < 0.7:
                target = rng.choice(mine)
                acl = {"read": rng.sample(users, rng.randint(0, 3)), "write": rng.sample(users, rng.randint(0, 1))}
                reply = client.request("PATCH", f"/{NOTES}/{urllib.parse.quote(target)}", {"_acl": acl})
            elif r < 0.8:
                target = rng.choice(mine)
                reply = client.request("DELETE", f"/{NOTES}/{urllib.parse.quote(target)}")
                if reply.status == 200:
                    with ledger.lock:
                        ledger.docs.pop(target, None)
                        ledger.acked.append((NOTES, target, None))
                    continue
            else:
                others = [u for u in users if u != user]
                reply = client.request("POST", "/messages", {"recipientId": rng.choice(others), "text": f"hi {n}"})
            if reply.status in (200, 201):
                body = reply.json()
                coll = "messages" if "threadId" in body else NOTES
                with ledger.lock:
                    ledger.acked.append((coll, body["_id"], body.get("_updatedAt")))
            else:
                with ledger.lock:
                    ledger.refused += 1
        except Exception:  # noqa: BLE001 - the daemon was killed: no answer, outcome unknown
            with ledger.lock:
                ledger.no_answer += 1
            if client is not None:
                client.close()
            time.sleep(0.05)
        time.sleep(rng.uniform(0, 0.01))


def feed_rows(data_dir, collections, after):
    """(seq, collection, _id, op) of the feed's rows for `collections` after `after`."""
    ops = {1: "create", 2: "update", 3: "delete"}
    db = sqlite3.connect(f"file:{pathlib.Path(data_dir) / 'roost.db'}?mode=ro", uri=True, timeout=10)
    try:
        rows = db.execute("SELECT seq, coll, id, op FROM _changes WHERE seq > ? ORDER BY seq", (after,)).fetchall()
    finally:
        db.close()
    return [(s, c, i, ops.get(o, str(o))) for s, c, i, o in rows if c in collections]


def feed_head(data_dir):
    """The last position handed out: the newest row's (compaction keeps it), never below the horizon."""
    db = sqlite3.connect(f"file:{pathlib.Path(data_dir) / 'roost.db'}?mode=ro", uri=True, timeout=10)
    try:
        return db.execute(FEED_HEAD_SQL).fetchone()[0]
    finally:
        db.close()


FEED_HEAD_SQL = ("SELECT max(coalesce((SELECT max(seq) FROM _changes), 0), "
                 "coalesce((SELECT CAST(value AS INTEGER) FROM _meta WHERE key = 'feed_horizon'), 0))")


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
