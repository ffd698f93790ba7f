"""Crash drill: kill -9 roostd at random moments under a write load, restart,
repeat; then prove that nothing acknowledged was lost.

Load (4 client threads on keep-alive connections):
  - creates  (POST /drill with a known _id and content derived from it),
  - updates  (PUT /drill/:id replacing the document with its next version),
  - uploads  (POST /files with a small generated PNG),
  - whatever the hooks add (messages and webhooks: see `CrashDrillHooks`).

Checks:
  - every write that got a 2xx is present with exactly its content (an update
    in flight at the kill may or may not have landed, but nothing else);
  - a write refused with an answer (such as 503) did not land;
  - after each kill, `PRAGMA integrity_check` on DATA_DIR/roost.db is ok and
    every row of `_files` has its file in files/objects/<ab>/<id>;
  - restart after every kill works; thumbnail jobs cut short finish;
  - at the end, after a clean SIGTERM stop: integrity ok, no file without its
    row, no row without its file, no temporary files left;
  - the change feed (feed.py): a delta-sync client of the drill collection and
    the files lives through every kill; after each restart `_deltaset` since
    the cursor it took before the load holds every write of the cycle and a
    write made after the restart, its replayed copy equals the collection, and
    in SQL no feed position was reused (`_changes.seq` increasing, the
    sequence at or above it, rows up to the head at the kill unchanged); at
    the end, every acknowledged write since the first cursor and a feed row
    for exactly the stored documents.

Run `PYTHONPATH=tests python -m drills.crash --cycles 20` (what `make drills` does); it
prints one summary line. tests/drills/test_drills_quick.py runs 3 cycles.
"""

import argparse
import hashlib
import pathlib
import random
import sqlite3
import sys
import tempfile
import threading
import time
import urllib.parse

from roost_harness import Client, Roostd, RoostdError, png

from .common import ADMIN_TOKEN, list_all, print_report
from .feed import FeedCheck
from .outage import stored_messages
from .webhook_receiver import Receiver, deliveries, sign_up, webhooks_config

CONFIG = """\
default_permission: public
files_permission: public
thumbnail_workers: 1
upload_workers: 2
durability: process
"""
COLLECTION = "drill"
WORKERS = 4


class CrashDrillHooks:
    """HOOK POINT for more write kinds and checks (messages, webhook delivery).

    The messaging work adds a subclass, e.g. `WebhookDeliveryHooks`, that
    starts a `standardwebhooks` receiver in `begin`, returns the endpoint in
    `config`, posts messages in `write`, and in `verify(final=True)` checks
    that every message that got a 2xx had its webhook delivered (each
    `webhook-id` at least once, valid signature) after the restarts. Add it
    to `DEFAULT_HOOKS` below and every crash drill run (make drills and the
    quick CI test) includes it.
    """

    name = "hook"

    def config(self):
        """Extra YAML appended to the drill's roost.yaml."""
        return ""

    def begin(self, workdir):
        """Once, before the first start (start receivers here)."""

    def after_start(self, daemon, cycle):
        """After every (re)start, before the load."""

    def write(self, client, rng, worker):
        """One write under load on `client` (a keep-alive `Client`); return a
        short kind name when a write was made, None to let the drill pick its
        own kinds. Network errors must propagate (the daemon was killed)."""
        return None

    def verify(self, daemon, final):
        """After a restart (and with final=True once at the end): returns
        (checked, failures, lost), failures and lost being lists of strings."""
        return 0, [], []

    def counts(self):
        """Writes this hook made: {kind: [tried, acknowledged]}, shown in the summary line."""
        return {}

    def summary(self):
        """A short phrase for the summary line ("" for none)."""
        return ""

    def end(self):
        """Once, at the very end, also after an error: stop what `begin` started."""


class WebhookDeliveryHooks(CrashDrillHooks):
    """Messages under the kills, and their webhooks across the restarts.

    A `standardwebhooks` receiver (webhook_receiver.Receiver) runs for the
    whole drill; roostd has one `message.created` endpoint pointing at it with
    a short retry schedule. Once alice and bob are signed up, about a fifth of
    the writes are messages between them (POST /messages). After every
    restart: every acknowledged message is stored and a refused one is not.
    At the end (bounded wait): every message that got a 201, and every other
    message found stored (committed without its answer, at a kill), has its
    event delivered at least once with a valid signature, under one
    webhook-id; nothing is dead-lettered; no delivery failed verification.
    """

    name = "messages"
    SCHEDULE = "[0.2, 0.5, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]"

    def __init__(self, drain_timeout=60.0):
        self.drain_timeout = drain_timeout
        self.receiver = Receiver()
        self.final_stats = None
        self.tried, self.acked = 0, {}

    def config(self):
        return webhooks_config(self.receiver.url, self.SCHEDULE, admin_token=ADMIN_TOKEN)

    def begin(self, workdir):
        self.lock = threading.Lock()
        self.users = None            # [(id, token), (id, token)]
        self.seq = 0
        self.tried = 0
        self.acked = {}              # message _id -> text (got a 201)
        self.unverified = set()      # acknowledged since the last restart check
        self.refused = []            # texts refused with an answer
        self.unknown = set()         # texts in flight at a kill
        self.server_errors = []
        self.committed_unacked = 0
        self.final_stats = None
        self.receiver.start()
        self.self_test_failures = self.receiver.self_test()

    def after_start(self, daemon, cycle):
        if self.users is None:
            self.users = [sign_up(daemon.port, "alice"), sign_up(daemon.port, "bob")]

    def write(self, client, rng, worker):
        if self.users is None:
            return None
        (me, token), (peer, _) = self.users[worker % 2], self.users[1 - worker % 2]
        with self.lock:
            self.seq += 1
            self.tried += 1
            text = f"message {self.seq} from worker {worker}"
            self.unknown.add(text)
        reply = client.request("POST", "/messages", {"recipientId": peer, "text": text},
                               {"Authorization": f"Bearer {token}"})
        with self.lock:
            self.unknown.discard(text)
            if reply.status == 201:
                mid = reply.json()["_id"]
                self.acked[mid] = text
                self.unverified.add(mid)
            else:
                self.refused.append(text)
                if reply.status >= 500 and reply.status != 503:
                    self.server_errors.append(f"POST /messages -> {reply.status} {reply.raw[:120]!r}")
        return "message"

    def _stored(self, daemon):
        return stored_messages(daemon.port, self.users[0][1])

    def verify(self, daemon, final):
        if self.users is None:
            return 0, list(self.self_test_failures if final else []), []
        failures, lost, checked = [], [], 0
        stored = self._stored(daemon)
        with self.lock:
            to_check = set(self.acked) if final else set(self.unverified)
            self.unverified.clear()
            refused = set(self.refused)
            acked = dict(self.acked)
        for mid in sorted(to_check):
            checked += 1
            if mid not in stored:
                lost.append(f"message {mid} ({acked[mid]!r}) got a 201 but is not stored")
            elif stored[mid] != acked[mid]:
                failures.append(f"message {mid}: stored text {stored[mid]!r}, sent {acked[mid]!r}")
        for mid, text in stored.items():
            if text in refused:
                failures.append(f"message {mid} ({text!r}) was refused with an answer but is stored")
        if not final:
            return checked, failures, lost
        # Every committed message: acknowledged, or stored although its answer was lost at a kill.
        committed = dict(acked)
        for mid, text in stored.items():
            committed.setdefault(mid, text)
        self.committed_unacked = len(committed) - len(acked)
        missing = self.receiver.wait_for(committed, self.drain_timeout)
        c, f, l = self.receiver.check(acked, refused)
        checked += c
        failures += f
        lost += l
        for mid in sorted(missing - set(acked)):
            failures.append(f"message {mid} was committed (stored, its answer lost at a kill) but its webhook never arrived")
        checked += 2
        for status in ("dead", "pending"):
            rows = deliveries(daemon.port, ADMIN_TOKEN, status)
            if rows:
                failures.append(f"{len(rows)} webhook deliveries {status} after the drain: {rows[:2]}")
        failures += self.self_test_failures
        failures += [f"server error under load: {e}" for e in self.server_errors[:20]]
        self.final_stats = dict(self.receiver.stats(), committed=len(committed))
        return checked, failures, lost

    def counts(self):
        return {"messages": [self.tried, len(self.acked)]}

    def summary(self):
        s = self.final_stats
        if not s:
            return "webhooks not checked"
        return (f"webhooks: {s['events']} events arrived for {s['committed']} committed messages "
                f"({self.committed_unacked} committed without their answer), {s['requests']} deliveries, "
                f"{s['duplicates']} repeats of a webhook-id, {s['invalid']} bad signatures")

    def end(self):
        self.receiver.stop()


# Hook classes (instantiated afresh for every run) or instances.
DEFAULT_HOOKS = [WebhookDeliveryHooks]


def content(doc_id, version):
    """The document a client stores for (id, version); checked byte for byte."""
    digest = hashlib.sha256(f"{doc_id}:{version}".encode()).hexdigest()
    return {"_id": doc_id, "v": version, "digest": digest, "tags": [digest[:6], version],
            "nested": {"a": {"b": [version, digest[-8:]]}}}


def same_content(stored, expected):
    return all(stored.get(k) == v for k, v in expected.items())


class Ledger:
    """What the clients know. For a document: the last acknowledged version
    (None: its create was never acknowledged) and the version in flight at
    the kill (None: none). For files: the acknowledged id → (sha256, bytes)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.docs = {}           # id -> [acked_version or None, pending_version or None]
        self.absent = set()      # creates refused with an answer: must not exist
        self.files = {}          # id -> (sha256, bytes)
        self.images_pending_check = set()
        self.counts = {"create": [0, 0], "update": [0, 0], "upload": [0, 0], "refused": 0}
        self.server_errors = []

    def tried(self, kind):
        with self.lock:
            self.counts.setdefault(kind, [0, 0])[0] += 1

    def acked(self, kind):
        with self.lock:
            self.counts.setdefault(kind, [0, 0])[1] += 1


def _load(port, ledger, hooks, rng, worker, cycle, stop):
    client = Client(port, timeout=15)
    mine = [i for i, (acked, pending) in ledger.docs.items() if i.endswith(f"w{worker}") and acked is not None]
    n = 0
    try:
        while not stop.is_set():
            n += 1
            kind = None
            for hook in hooks:
                if rng.random() < 0.2:
                    kind = hook.write(client, rng, worker)
                    if kind:
                        break
            if kind:
                continue
            r = rng.random()
            if r < 0.4 or not mine:
                doc_id = f"c{cycle}n{n}w{worker}"
                with ledger.lock:
                    ledger.docs[doc_id] = [None, 0]
                ledger.tried("create")
                reply = client.request("POST", f"/{COLLECTION}", content(doc_id, 0))
                with ledger.lock:
                    if reply.status == 201:
                        ledger.docs[doc_id] = [0, None]
                        ledger.counts["create"][1] += 1
                        mine.append(doc_id)
                    else:
                        del ledger.docs[doc_id]
                        ledger.absent.add(doc_id)
                        ledger.counts["refused"] += 1
                        if reply.status >= 500 and reply.status != 503:
                            ledger.server_errors.append(f"POST /{COLLECTION} -> {reply.status} {reply.raw[:120]!r}")
            elif r < 0.75:
                doc_id = rng.choice(mine)
                with ledger.lock:
                    version = ledger.docs[doc_id][0] + 1
                    ledger.docs[doc_id][1] = version
                ledger.tried("update")
                reply = client.request("PUT", f"/{COLLECTION}/{urllib.parse.quote(doc_id)}", content(doc_id, version))
                with ledger.lock:
                    ledger.docs[doc_id][1] = None
                    if reply.status == 200:
                        ledger.docs[doc_id][0] = version
                        ledger.counts["update"][1] += 1
                    else:
                        ledger.counts["refused"] += 1
                        if reply.status >= 500 and reply.status != 503:
                            ledger.server_errors.append(f"PUT -> {reply.status} {reply.raw[:120]!r}")
            else:
                image = png(rng.randint(4, 24), rng.randint(4, 24), rng.randint(1, 10**6))
                ledger.tried("upload")
                reply = client.request("POST", "/files", image, {"Content-Type": "image/png"})
                if reply.status == 201:
                    meta = reply.json()
                    with ledger.lock:
                        ledger.files[meta["_id"]] = (hashlib.sha256(image).hexdigest(), image)
                        ledger.counts["upload"][1] += 1
                else:
                    with ledger.lock:
                        ledger.counts["refused"] += 1
                        if reply.status >= 500 and reply.status != 503:
                            ledger.server_errors.append(f"POST /files -> {reply.status} {reply.raw[:120]!r}")
    except (OSError, ValueError, KeyError) as e:  # killed under us (http.client raises OSError subclasses)
        _ = e
    finally:
        client.close()


def _all_docs(port):
    return {d["_id"]: d for d in list_all(port, COLLECTION)}


def _verify(daemon, ledger, verify_bytes_of, failures, lost):
    """Checks the documents (all) and the files in `verify_bytes_of`; resolves
    writes whose outcome was unknown at the kill. Returns how many it checked."""
    checked = 0
    docs = _all_docs(daemon.port)
    with ledger.lock:
        for doc_id, (acked, pending) in list(ledger.docs.items()):
            checked += 1
            stored = docs.get(doc_id)
            if stored is None:
                if acked is not None:
                    lost.append(f"document {doc_id} (acknowledged version {acked}) is missing")
                    del ledger.docs[doc_id]
                else:
                    del ledger.docs[doc_id]  # create never acknowledged and did not land: fine
                continue
            candidates = [v for v in (acked, pending) if v is not None]
            match = next((v for v in candidates if same_content(stored, content(doc_id, v))), None)
            if match is None:
                if acked is not None and isinstance(stored.get("v"), int) and stored["v"] < acked:
                    lost.append(f"document {doc_id}: acknowledged version {acked}, found {stored.get('v')}")
                else:
                    failures.append(f"document {doc_id}: content matches none of versions {candidates}: {stored}")
                ledger.docs[doc_id] = [stored.get("v") if isinstance(stored.get("v"), int) else acked, None]
            else:
                ledger.docs[doc_id] = [match, None]
        for doc_id in ledger.absent:
            checked += 1
            if doc_id in docs:
                failures.append(f"document {doc_id} was refused with an answer but exists")
        ledger.absent.clear()
        files = [(fid, ledger.files[fid]) for fid in verify_bytes_of if fid in ledger.files]
    client = Client(daemon.port, timeout=30)
    try:
        for fid, (sha, image) in files:
            checked += 1
            reply = client.request("GET", f"/files/{fid}")
            if reply.status != 200:
                lost.append(f"file {fid} answered {reply.status}")
            elif hashlib.sha256(reply.raw).hexdigest() != sha:
                lost.append(f"file {fid}: bytes differ from the upload")
            meta = client.request("GET", f"/files/{fid}/meta")
            if meta.status != 200 or meta.json().get("sha256") != sha or meta.json().get("size") != len(image):
                failures.append(f"file {fid}: metadata {meta.status} {meta.raw[:200]!r}")
    finally:
        client.close()
    return checked


def object_path(data_dir, fid):
    return pathlib.Path(data_dir) / "files" / "objects" / fid[-2:] / fid


def disk_state(data_dir):
    """Stopped daemon only: integrity_check, rows of `_files`, files on disk."""
    data_dir = pathlib.Path(data_dir)
    db = sqlite3.connect(str(data_dir / "roost.db"), timeout=5)
    try:
        integrity = [r[0] for r in db.execute("PRAGMA integrity_check").fetchall()]
        rows = {r[0] for r in db.execute("SELECT id FROM _files").fetchall()}
    finally:
        db.close()
    objects = data_dir / "files" / "objects"
    on_disk = {p.name for p in objects.glob("*/*") if p.is_file()} if objects.exists() else set()
    misplaced = [str(p) for p in objects.glob("*/*")
                 if p.is_file() and p != object_path(data_dir, p.name)] if objects.exists() else []
    tmp = data_dir / "files" / "tmp"
    temporaries = [p.name for p in tmp.iterdir()] if tmp.exists() else []
    return {"integrity": integrity, "rows": rows, "files": on_disk, "misplaced": misplaced, "tmp": temporaries}


def _wait_thumbnails(daemon, ids, timeout):
    """Every image's configured thumbnails become ready (jobs resume after kills)."""
    deadline = time.monotonic() + timeout
    waiting = set(ids)
    client = Client(daemon.port, timeout=15)
    try:
        while waiting and time.monotonic() < deadline:
            for fid in sorted(waiting):
                reply = client.request("GET", f"/files/{fid}/meta")
                thumbs = (reply.json() or {}).get("thumbnails", {}) if reply.status == 200 else {}
                if thumbs and all(t.get("state") in ("ready", "failed") for t in thumbs.values()):
                    waiting.discard(fid)
            if waiting:
                time.sleep(0.5)
    finally:
        client.close()
    return waiting


def run(cycles=20, seed=None, workdir=None, min_load=0.05, max_load=1.5, hooks=None, log=print):
    """Runs the drill; returns a dict with the counts and the summary line."""
    seed = seed if seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    hooks = [h() if isinstance(h, type) else h for h in (DEFAULT_HOOKS if hooks is None else hooks)]
    own_tmp = None
    if workdir is None:
        own_tmp = tempfile.TemporaryDirectory(prefix="roost-crash-drill-")
        workdir = own_tmp.name
    ledger = Ledger()
    failures, lost = [], []
    info = {"kills": 0, "orphans_after_kill": 0, "tmp_after_kill": 0, "restarts": 0, "checked": 0}
    started = time.monotonic()
    daemon = None
    feed = FeedCheck(COLLECTION, content, same_content, random.Random(rng.random()))
    try:
        for hook in hooks:
            hook.begin(workdir)
        daemon = Roostd(workdir, CONFIG + "".join(h.config() for h in hooks))
        verify_next = set()
        for cycle in range(1, cycles + 1):
            try:
                daemon.start()
            except RoostdError as e:
                failures.append(f"cycle {cycle}: restart failed: {e}")
                break
            info["restarts"] += 1
            info["checked"] += _verify(daemon, ledger, verify_next, failures, lost)
            if cycle > 1:
                f, l = feed.after_restart(daemon, ledger, cycle)
                failures += f
                lost += l
            for hook in hooks:
                c, f, l = hook.verify(daemon, final=False)
                info["checked"] += c
                failures += f
                lost += l
                hook.after_start(daemon, cycle)
            feed.before_load(daemon, ledger, cycle)
            before = set(ledger.files)
            stop = threading.Event()
            threads = [threading.Thread(target=_load, args=(daemon.port, ledger, hooks, random.Random(rng.random()), w,
                                                            cycle, stop), daemon=True) for w in range(WORKERS)]
            for t in threads:
                t.start()
            time.sleep(rng.uniform(min_load, max_load))
            daemon.kill9()
            info["kills"] += 1
            stop.set()
            for t in threads:
                t.join(timeout=30)
            verify_next = set(ledger.files) - before
            state = disk_state(daemon.data_dir)
            if state["integrity"] != ["ok"]:
                failures.append(f"cycle {cycle}: integrity_check after kill -9: {state['integrity'][:5]}")
            for fid in sorted(state["rows"] - state["files"]):
                lost.append(f"cycle {cycle}: row {fid} has no file after kill -9")
            if state["misplaced"]:
                failures.append(f"cycle {cycle}: files outside objects/<ab>/: {state['misplaced'][:3]}")
            failures += feed.after_kill(daemon.data_dir, cycle)
            info["orphans_after_kill"] += len(state["files"] - state["rows"])
            info["tmp_after_kill"] += len(state["tmp"])
            log(f"cycle {cycle}/{cycles}: kill -9 after {sum(v[0] for v in ledger.counts.values() if isinstance(v, list))} "
                f"writes tried; rows {len(state['rows'])}, files {len(state['files'])}")
        # Final restart: everything, all file bytes, thumbnails, hooks; then a clean stop.
        if not any("restart failed" in f for f in failures):
            try:
                daemon.start()
                info["restarts"] += 1
                info["checked"] += _verify(daemon, ledger, set(ledger.files), failures, lost)
                f, l = feed.after_restart(daemon, ledger, cycles + 1, final=True)
                failures += f
                lost += l
                images = list(ledger.files)
                unfinished = _wait_thumbnails(daemon, images, timeout=30 + len(images) * 0.05)
                if unfinished:
                    failures.append(f"{len(unfinished)} images' thumbnails still pending after restarts: {sorted(unfinished)[:3]}")
                for hook in hooks:
                    c, f, l = hook.verify(daemon, final=True)
                    info["checked"] += c
                    failures += f
                    lost += l
                if not daemon.healthy():
                    failures.append("final /healthz failed")
                code = daemon.stop(timeout=25, strict=False)
                if code != 0:
                    failures.append(f"clean stop after the drill exited with {code}")
                state = disk_state(daemon.data_dir)
                if state["integrity"] != ["ok"]:
                    failures.append(f"final integrity_check: {state['integrity'][:5]}")
                for fid in sorted(state["rows"] - state["files"]):
                    lost.append(f"final: row {fid} has no file")
                orphans = state["files"] - state["rows"]
                if orphans:
                    failures.append(f"final: {len(orphans)} files without rows after restart: {sorted(orphans)[:3]}")
                if state["tmp"]:
                    failures.append(f"final: {len(state['tmp'])} temporary files left in files/tmp")
                failures += feed.after_stop(daemon.data_dir)
                missing_rows = set(ledger.files) - state["rows"]
                for fid in sorted(missing_rows):
                    lost.append(f"final: acknowledged upload {fid} has no row")
            except (RoostdError, RuntimeError) as e:
                failures.append(f"final restart failed: {e}")
        info["checked"] += feed.checked
        if ledger.server_errors:
            failures += [f"server error under load: {e}" for e in ledger.server_errors[:20]]
    finally:
        if daemon is not None:
            daemon.close()
        for hook in hooks:
            hook.end()
        log_tail = daemon.log_tail(20) if daemon is not None else ""
        if own_tmp is not None:
            own_tmp.cleanup()
    c = dict(ledger.counts)
    for hook in hooks:
        for kind, (t, a) in hook.counts().items():
            c[kind] = [c.get(kind, [0, 0])[0] + t, c.get(kind, [0, 0])[1] + a]
    acked = sum(v[1] for v in c.values() if isinstance(v, list))
    tried = sum(v[0] for v in c.values() if isinstance(v, list))
    hook_notes = "".join(f"; {n}" for n in [feed.summary()] + [h.summary() for h in hooks] if n)
    extra = "".join(f", {k} {v[1]}/{v[0]}" for k, v in c.items() if k not in ("create", "update", "upload", "refused"))
    line = (f"crash drill (seed {seed}): {info['kills']} kill -9 cycles, {tried} writes tried, {acked} acknowledged "
            f"(creates {c['create'][1]}/{c['create'][0]}, updates {c['update'][1]}/{c['update'][0]}, "
            f"uploads {c['upload'][1]}/{c['upload'][0]}{extra}), {c['refused']} refused with an answer, "
            f"{info['checked']} checks, {len(failures)} failures, {len(lost)} lost; "
            f"{info['orphans_after_kill']} unacknowledged upload files swept at restart{hook_notes}; "
            f"{time.monotonic() - started:.0f} s")
    return {"line": line, "failures": failures, "lost": lost, "tried": tried, "acked": acked, "seed": seed,
            "info": info, "log_tail": log_tail}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    result = run(args.cycles, args.seed, log=(lambda *_: None) if args.quiet else (lambda m: print(m, file=sys.stderr)))
    return print_report(result)


if __name__ == "__main__":
    sys.exit(main())
