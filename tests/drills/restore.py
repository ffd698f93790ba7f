"""Restore drill: back up a daemon under load, lose its data directory,
restore, and prove the restored daemon holds what it promised.

Load (against one live roostd): writer threads create and update documents
of `drill` (content derived from id and version), one uploader posts PNGs;
every acknowledged write is recorded with the time of its answer. A live
stream (`/drill/_live`) and delta-sync copies follow the collection.

Mid-load:
  - cursors are taken (`_deltaset` copies of `drill` and `files`, the live
    stream's last id), then `roostd backup --to GOOD` runs (its start is the
    line: writes acknowledged before it must come back), then
    `POST /admin/backups?wait=true`; more cursors are taken after it (they
    name positions the backup never held);
  - a second CLI backup into `backups.dir`, slowed with `--max-rate`, is
    kill -9ed mid-way: `GET /admin/backups` must list it `incomplete`,
    `verify-backup` and `restore` must refuse it (by directory and by path).

Then: stop the daemon, delete its data directory, `verify-backup GOOD`,
`roostd restore --from GOOD`, start roostd on it, and check:
  - `PRAGMA integrity_check` is ok (sqlite3 here, on the restored file);
  - every write acknowledged before the backup began is there with its
    content (a later version is allowed, any version must be one written);
    no document appears that nobody wrote;
  - every file of the backup's MANIFEST is on disk with its SHA-256, each
    original is served by `GET /files/:id` with it, each thumbnail by
    `GET /files/:id/thumbnail`; every upload acknowledged before the backup
    is served, with a thumbnail;
  - every cursor taken before or after the backup is refused with 410
    `CursorExpired` or, if accepted, brings its copy exactly to the restored
    collection (never silently wrong); the restore renewed the feed's epoch;
  - a live stream resumed with a `Last-Event-ID` from before (and after)
    the backup gets `event: reset` or a replay that brings its copy exactly
    to the restored collection, and then live events of new writes.

Run `PYTHONPATH=tests python -m drills.restore` (what `make drills` does); it prints one
summary line. tests/drills/test_drills_quick.py runs a small one.
"""

import argparse
import pathlib
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

from roost_harness import Client, Roostd, binary, one_request, png
from roost_harness import cursors as cursor_keys

from .common import ADMIN_TOKEN, print_report
from .feed import sync
from .live import FEED_HEAD_SQL, LiveStream, cursor_epoch, cursor_seq, live_path
from .restore_checks import apply_events, check_cursors, check_documents, check_files, check_streams
from .restore_load import COLLECTION, Ledger, content, uploader, writer

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def config(workdir):
    # The load comes from one machine, one caller: rate limits off (test_rate_limits.py tests them).
    return (f"rate_limits: off\ndefault_permission: public\nfiles_permission: public\nadmin_token: {ADMIN_TOKEN}\n"
            f"thumbnail_workers: 1\nbackups:\n  dir: {workdir}/scheduled\n  keep: 3\n")


def roostd_cli(*args, timeout=300):
    return subprocess.run([str(binary()), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def take_cursors(daemon, copies, rng):
    """Syncs each copy from its cursor; returns {name: (cursor, frozen copy)}."""
    out = {}
    for coll in (COLLECTION, "files"):
        cursor, _, _, _ = sync(daemon.port, coll, copies[coll][0], rng, copies[coll][1])
        copies[coll] = (cursor, copies[coll][1])
        out[coll] = (cursor, dict(copies[coll][1]))
    return out


def live_state(stream):
    """(last id, copy of the collection as the stream's events built it)."""
    events = stream.snapshot()
    copy = {}
    apply_events(copy, events)
    return next((e.id for e in reversed(events) if e.id), None), copy


def moved_on(port, count, failures):
    """Writes `count` new documents after the restore; returns how many."""
    client = Client(port, timeout=30)
    try:
        for n in range(count):
            reply = client.request("PUT", f"/{COLLECTION}/moved-on-{n}", {"after": "restore", "n": n})
            if reply.status != 201:
                failures.append(f"a write after the restore answered {reply.status}: {reply.raw[:120]!r}")
                return n
        return count
    finally:
        client.close()


def kill_a_backup(daemon, target, failures):
    """Starts a slowed CLI backup into `target`, kill -9s it once it is copying."""
    slow = subprocess.Popen([str(binary()), "backup", "--config", str(daemon.config_path), "--data-dir",
                             str(daemon.data_dir), "--to", str(target), "--max-rate", "16K"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any((p / "roost.db").exists() for p in target.glob(".partial-*")):
            time.sleep(0.05)
        time.sleep(0.3)
        if slow.poll() is not None:
            failures.append(f"the slowed backup ended ({slow.returncode}) before it could be killed")
    finally:
        slow.send_signal(signal.SIGKILL)
        slow.wait()
    partials = list(target.glob(".partial-*"))
    reply = one_request(daemon.port, "GET", "/admin/backups", headers=ADMIN, timeout=30)
    states = [b["state"] for b in reply.json()["backups"]] if reply.status == 200 else reply
    if states != ["verified", "incomplete"]:
        failures.append(f"GET /admin/backups after the killed backup: {states}, not [verified, incomplete]")
    if list(target.glob(".partial-*/MANIFEST")):
        failures.append("the killed backup's partial directory holds a MANIFEST")
    refusals = [roostd_cli("verify-backup", target)] + [roostd_cli("verify-backup", p) for p in partials]
    refusals += [roostd_cli("restore", "--from", p, "--data-dir", daemon.workdir / "never") for p in partials]
    for r in refusals:
        if r.returncode == 0:
            failures.append(f"{r.args[1:3]} accepted the killed backup: {r.stdout.strip()[:200]}")
    if (daemon.workdir / "never" / "roost.db").exists():
        failures.append("restore from the killed backup wrote a database")
    return len(partials)


def run(writers=3, warmup=2.0, after=1.0, images=6, seed=None, workdir=None, log=print):
    seed = seed if seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    own = workdir is None
    workdir = pathlib.Path(workdir or tempfile.mkdtemp(prefix="roost-restore-drill-"))
    daemon = Roostd(workdir, config(workdir))
    cursor_keys.register(daemon.data_dir)
    failures, lost, info = [], [], {"seed": seed}
    ledger, stop = Ledger(), threading.Event()
    pngs = [png(120 + 17 * i, 90 + 11 * i, i + 3) for i in range(images)]
    good = workdir / "good"
    streams = []
    try:
        daemon.start()
        copies = {COLLECTION: (None, {}), "files": (None, {})}
        take_cursors(daemon, copies, rng)
        stream = LiveStream(daemon.port, live_path(COLLECTION), timeout=30)
        streams.append(stream)
        stream.wait_ready()
        threads = [threading.Thread(target=writer, args=(daemon.port, ledger, stop, w, random.Random(seed + w)))
                   for w in range(writers)]
        threads.append(threading.Thread(target=uploader, args=(daemon.port, ledger, stop, pngs)))
        for t in threads:
            t.start()
        stop.wait(warmup)
        cursors = {"before": take_cursors(daemon, copies, rng)}
        lives = {"before": live_state(stream)}
        began = time.monotonic()
        log(f"restore drill: backing up under load ({ledger.tried} writes so far)")
        taken = roostd_cli("backup", "--config", daemon.config_path, "--data-dir", daemon.data_dir, "--to", good)
        info["backup_seconds"] = round(time.monotonic() - began, 2)
        if taken.returncode != 0 or "verified" not in taken.stdout:
            failures.append(f"roostd backup failed: {taken.stderr.strip()[:300]}")
        reply = one_request(daemon.port, "POST", "/admin/backups?wait=true", headers=ADMIN, timeout=300)
        if reply.status != 201 or reply.json().get("verified") is not True:
            failures.append(f"POST /admin/backups?wait=true answered {reply.status}: {reply.raw[:200]!r}")
        stop.wait(after)
        cursors["after"] = take_cursors(daemon, copies, rng)
        stream.wait(lambda s: False, timeout=0.5)
        lives["after"] = live_state(stream)
        info["partials"] = kill_a_backup(daemon, workdir / "scheduled", failures)
        stop.set()
        for t in threads:
            t.join(60)
        stream.close()
        epoch = cursor_epoch(cursors["before"][COLLECTION][0])
        daemon.stop(timeout=25, strict=False)

        verified = roostd_cli("verify-backup", good)
        if verified.returncode != 0:
            failures.append(f"verify-backup {good}: {verified.stdout.strip()[:300]}")
        shutil.rmtree(daemon.data_dir)
        restored = roostd_cli("restore", "--from", good, "--data-dir", daemon.data_dir)
        if restored.returncode != 0:
            failures.append(f"roostd restore failed: {restored.stderr.strip()[:300]}")
            raise RuntimeError("restore failed")
        db = sqlite3.connect(f"file:{daemon.data_dir}/roost.db?mode=ro", uri=True)
        try:
            integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
            new_epoch = db.execute("SELECT value FROM _meta WHERE key = 'epoch'").fetchone()[0]
            head = db.execute(FEED_HEAD_SQL["sqlite"]).fetchone()[0]
        finally:
            db.close()
        if integrity != "ok":
            failures.append(f"integrity_check on the restored database: {integrity}")
        if new_epoch == epoch:
            failures.append("the restore kept the change feed's epoch: old cursors could be read on a new timeline")
        daemon.start()

        docs, files = ledger.acked_before(began)
        stored = check_documents(daemon.port, COLLECTION, docs, ledger, content, failures, lost)
        manifest = next(good.glob("roost-*/MANIFEST"))
        info["files"] = check_files(daemon, manifest, files, failures, lost)
        # New writes take the feed past every position handed out before the restore, as
        # when clients come back to a restored server that has moved on: an old cursor
        # read on the new timeline would skip changes.
        past = max([cursor_seq(c) for by_coll in cursors.values() for c, _ in by_coll.values()]
                   + [cursor_seq(last) or 0 for last, _ in lives.values()])
        info["moved_on"] = moved_on(daemon.port, past - head + 3, failures)
        info["cursors"] = check_cursors(daemon.port, cursors, COLLECTION, failures)
        info["streams"] = check_streams(daemon.port, lives, COLLECTION, streams, failures)
        failures += ledger.server_errors
        info.update(docs=len(docs), stored=len(stored), tried=ledger.tried, uploads=len(files))
    finally:
        stop.set()
        for s in streams:
            s.close()
        daemon.close()
        if own and not failures and not lost:
            shutil.rmtree(workdir, ignore_errors=True)
    c, s = info.get("cursors", {}), info.get("streams", {})
    line = (f"restore drill: {info.get('tried', 0)} writes under load, backup {info.get('backup_seconds', '?')} s; "
            f"restored {info.get('docs', 0)} documents acknowledged before it ({info.get('stored', 0)} stored) and "
            f"{info.get('uploads', 0)} uploads, {info.get('files', 0)} manifest files by SHA-256 and GET; "
            f"killed backup refused ({info.get('partials', 0)} partial); cursors {c.get('refused', 0)} refused 410, "
            f"{c.get('replayed', 0)} replayed exactly; streams {s.get('reset', 0)} reset, {s.get('replayed', 0)} replayed; "
            f"integrity ok; {len(failures)} failures, {len(lost)} lost (seed {seed})")
    return {"line": line, "failures": failures, "lost": lost, "info": info, "seed": seed, "log_tail": daemon.log_tail()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--writers", type=int, default=3)
    ap.add_argument("--warmup", type=float, default=5.0, help="seconds of load before the backup")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--workdir")
    args = ap.parse_args(argv)
    return print_report(run(args.writers, args.warmup, seed=args.seed, workdir=args.workdir,
                            log=lambda m: print(m, file=sys.stderr)))


if __name__ == "__main__":
    sys.exit(main())
