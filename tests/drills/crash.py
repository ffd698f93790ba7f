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
import random
import sys
import tempfile
import threading
import time

from roost_harness import Roostd, RoostdError

from .common import print_report
from .crash_hooks import DEFAULT_HOOKS, CrashDrillHooks, WebhookDeliveryHooks  # noqa: F401 (the drills' API)
from .feed import FeedCheck
from .crash_checks import (
    COLLECTION,
    Ledger,
    WORKERS,
    _load,
    _verify,
    _wait_thumbnails,
    content,
    disk_state,
    same_content,
)


CONFIG = """\
# The load comes from one machine, one caller: rate limits off (test_rate_limits.py tests them).
rate_limits: off
default_permission: public
files_permission: public
thumbnail_workers: 1
upload_workers: 2
durability: process
"""


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
