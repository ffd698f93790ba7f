"""The change feed's part of the crash drill (crash.py): after every kill -9
and restart, the feed still holds every acknowledged write and never hands
out a position twice.

A `FeedCheck` is a delta-sync client of the drill collection and of the file
store that lives through all the kills: it lists both before the first load
(cursor C0), syncs from its last cursor after every restart, and its replayed
copy must equal the collection. Per cycle:

  - before the load: sync, keep the cursor Ck and a snapshot of the ledger;
  - after the kill (daemon down; read directly, either engine): `_changes.seq` strictly
    increasing, the head (max(seq), never below the horizon) >= max(seq); remember that
    head and a digest of every feed row up to it;
  - after the restart: write a sentinel; in SQL its position is above the
    head at the kill and the rows up to that head are unchanged (no position
    reused or rewritten); `_deltaset?since=Ck` (random page sizes, until
    more=false) shows exactly the documents whose stored version changed in
    the cycle (every acknowledged create and update, with its content) plus
    the sentinel, and no deletions; the files delta shows every upload
    acknowledged in the cycle; the replayed copies equal the collection.
  - at the end also: a fresh listing (no since) equals the collection; the
    delta since C0 shows every document and nothing deleted; after the clean
    stop, in SQL, the ids with feed rows in the drill collection are exactly
    the stored ones, each with one create.

The paged sync and the feed's rows as read from SQL are in feed_sync.py.
"""

from roost_harness import Client, engine

from .common import list_all
from .feed_sync import PAGE_SIZES, _delta, _digest, feed_rows, position_failures, sync  # noqa: F401 (the drills' API)


class FeedCheck:
    def __init__(self, collection, content, same_content, rng):
        self.coll, self.content, self.same_content, self.rng = collection, content, same_content, rng
        self.copies = {collection: {}, "files": {}}
        self.cursors = {}            # the mirror clients' cursors
        self.initial = None          # C0 per collection (before any load)
        self.snapshot = None         # (cursors, {doc id: version}, set of file ids) before the load
        self.at_kill = None          # (head, digest of rows up to it, count)
        self.sentinels = {}          # id -> cycle
        self.checked = 0
        self.changes_seen = 0
        self.pages = 0
        self.max_head = 0

    # -- before the load -------------------------------------------------------------------
    def before_load(self, daemon, ledger, cycle):
        for coll in (self.coll, "files"):
            cursor, _, _, pages = sync(daemon.port, coll, self.cursors.get(coll), self.rng, self.copies[coll])
            self.cursors[coll] = cursor
            self.pages += pages
        if self.initial is None:
            self.initial = dict(self.cursors)
        with ledger.lock:
            versions = {i: v[0] for i, v in ledger.docs.items()}
            files = set(ledger.files)
        self.snapshot = (dict(self.cursors), versions, files)

    # -- daemon down after the kill --------------------------------------------------------
    def after_kill(self, data_dir, cycle):
        rows, head = feed_rows(data_dir)
        self.at_kill = (head, _digest([r for r in rows if r[0] <= head]), len(rows))
        self.max_head = max(self.max_head, head)
        self.checked += 1
        return position_failures(rows, head, f"cycle {cycle} after kill -9")

    # -- after the restart (ledger already resolved by crash._verify) ----------------------
    def after_restart(self, daemon, ledger, cycle, final=False):
        failures, lost = [], []
        where = "final restart" if final else f"restart after cycle {cycle - 1}"
        sentinel = f"feed-sentinel-{cycle if not final else 'final'}"
        reply = _one(daemon.port, "PUT", f"/{self.coll}/{sentinel}", {"feed": cycle})
        if reply.status != 201:
            failures.append(f"{where}: sentinel write answered {reply.status}")
        else:
            self.sentinels[sentinel] = cycle
        if self.at_kill is not None:
            head, digest, _ = self.at_kill
            rows, now_head = feed_rows(daemon.data_dir)
            failures += position_failures(rows, now_head, where)
            if _digest([r for r in rows if r[0] <= head]) != digest:
                failures.append(f"{where}: feed rows at or below the head at the kill ({head}) changed after the restart")
            mine = [r[0] for r in rows if r[1] == self.coll and r[2] == sentinel]
            if reply.status == 201 and (not mine or max(mine) <= head):
                failures.append(f"{where}: the sentinel written after the restart got position {mine}, "
                                f"not above the head at the kill ({head}): a position was reused")
            self.checked += 3
            self.at_kill = None
        if self.snapshot is not None:
            failures_, lost_ = self._check_cycle(daemon, ledger, where, sentinel if reply.status == 201 else None)
            failures += failures_
            lost += lost_
        if final:
            f, l = self._check_from_the_beginning(daemon, ledger)
            failures += f
            lost += l
        return failures, lost

    def _expected_docs(self, ledger):
        with ledger.lock:
            return {i: v[0] for i, v in ledger.docs.items() if v[0] is not None}

    def _check_cycle(self, daemon, ledger, where, sentinel):
        failures, lost = [], []
        cursors, before, files_before = self.snapshot
        self.snapshot = None
        now = self._expected_docs(ledger)
        # The cycle's delta, from the cursor taken before the load and the kill.
        _, changed, deleted, pages = sync(daemon.port, self.coll, cursors[self.coll], self.rng)
        self.pages += pages
        self.changes_seen += len(changed)
        # What changed in the cycle (acknowledged, or committed at the kill without its answer), and
        # the sentinel written after the restart; earlier sentinels were written before the cursor.
        expected = {i for i, v in now.items() if before.get(i) != v} | ({sentinel} if sentinel else set())
        for i in sorted(expected - set(changed)):
            lost.append(f"{where}: {i} (version {now.get(i)}) changed in the cycle but is not in _deltaset since the "
                        f"cursor taken before the load")
        for i in sorted(set(changed) - expected):
            failures.append(f"{where}: _deltaset shows {i} changed, but its stored version did not change in the cycle")
        for i in sorted(set(changed) & set(now)):
            self.checked += 1
            if not self.same_content(changed[i], self.content(i, now[i])):
                failures.append(f"{where}: {i} in _deltaset is not its stored version {now[i]}: {changed[i]}")
        if deleted:
            failures.append(f"{where}: _deltaset shows deletions in a collection nobody deletes from: {sorted(deleted)[:3]}")
        # Files: every upload acknowledged in the cycle.
        with ledger.lock:
            new_files = set(ledger.files) - files_before
            all_files = set(ledger.files)
        _, fchanged, fdeleted, pages = sync(daemon.port, "files", cursors["files"], self.rng)
        self.pages += pages
        for fid in sorted(new_files - set(fchanged)):
            lost.append(f"{where}: upload {fid} (acknowledged) is not in /files/_deltaset since the cursor before the load")
        for fid in sorted(fdeleted & all_files):
            lost.append(f"{where}: acknowledged upload {fid} is in /files/_deltaset's deleted")
        self.checked += len(new_files) + 1
        # The mirrors, replayed across every kill so far, equal what is stored.
        for coll in (self.coll, "files"):
            cursor, _, _, pages = sync(daemon.port, coll, self.cursors[coll], self.rng, self.copies[coll])
            self.cursors[coll] = cursor
            self.pages += pages
        stored = {d["_id"]: d for d in list_all(daemon.port, self.coll)}
        mirror = self.copies[self.coll]
        if mirror != stored:
            missing = sorted(set(stored) - set(mirror))
            extra = sorted(set(mirror) - set(stored))
            stale = sorted(i for i in set(stored) & set(mirror) if stored[i] != mirror[i])
            failures.append(f"{where}: the copy replayed from _deltaset since the first cursor differs from the "
                            f"collection: missing {missing[:3]}, extra {extra[:3]}, stale {stale[:3]}")
        for fid in sorted(all_files - set(self.copies["files"])):
            lost.append(f"{where}: acknowledged upload {fid} is missing from the replayed /files/_deltaset copy")
        self.checked += 2
        return failures, lost

    def _check_from_the_beginning(self, daemon, ledger):
        failures, lost = [], []
        stored = {d["_id"]: d for d in list_all(daemon.port, self.coll)}
        # A fresh listing (no since), paged.
        listing = {}
        sync(daemon.port, self.coll, None, self.rng, listing)
        if listing != stored:
            failures.append(f"final: a fresh _deltaset listing differs from the collection "
                            f"({len(listing)} vs {len(stored)} documents)")
        # Since the cursor taken before the first load: every document, nothing deleted.
        _, changed, deleted, pages = sync(daemon.port, self.coll, self.initial[self.coll], self.rng)
        self.pages += pages
        for i, v in sorted(self._expected_docs(ledger).items()):
            self.checked += 1
            if i not in changed:
                lost.append(f"final: acknowledged document {i} (version {v}) is not in _deltaset since the first cursor")
            elif not self.same_content(changed[i], self.content(i, v)):
                failures.append(f"final: {i} in _deltaset since the first cursor is not version {v}")
        extra = set(changed) - set(stored)
        if extra or deleted:
            failures.append(f"final: since the first cursor, changes of documents not stored {sorted(extra)[:3]} "
                            f"or deletions {sorted(deleted)[:3]}")
        _, fchanged, _, _ = sync(daemon.port, "files", self.initial["files"], self.rng)
        with ledger.lock:
            all_files = set(ledger.files)
        for fid in sorted(all_files - set(fchanged)):
            lost.append(f"final: acknowledged upload {fid} is not in /files/_deltaset since the first cursor")
        self.checked += 2
        return failures, lost

    # -- after the final clean stop --------------------------------------------------------
    def after_stop(self, data_dir):
        """Nothing commits without its feed row, nothing is in the feed that did not commit."""
        rows, head = feed_rows(data_dir)
        failures = position_failures(rows, head, "final (stopped)")
        self.max_head = max(self.max_head, head)
        table = engine.sql(data_dir, "SELECT id FROM _collections WHERE name = ?", (self.coll,))
        stored = {r[0] for r in engine.sql(data_dir, f"SELECT id FROM c_{int(table[0][0])}")} if table else set()
        creates = {}
        ops = {}
        for _, coll, i, op in rows:
            if coll == self.coll:
                creates[i] = creates.get(i, 0) + (op == 1)
                ops.setdefault(i, []).append(op)
        without = sorted(stored - set(ops))
        if without:
            failures.append(f"final: {len(without)} stored documents have no feed row: {without[:3]}")
        ghosts = sorted(set(ops) - stored)
        if ghosts:
            failures.append(f"final: feed rows for {len(ghosts)} documents that are not stored: {ghosts[:3]}")
        odd = sorted(i for i in stored if creates.get(i) != 1 or 3 in ops.get(i, []))
        if odd:
            failures.append(f"final: documents without exactly one create in the feed: {odd[:3]}")
        self.checked += 3
        return failures

    def summary(self):
        return (f"feed: {self.changes_seen} changes synced across restarts in {self.pages} pages, "
                f"head {self.max_head}, {self.checked} feed checks")


def _one(port, method, path, body):
    client = Client(port, timeout=15)
    try:
        return client.request(method, path, body)
    finally:
        client.close()
