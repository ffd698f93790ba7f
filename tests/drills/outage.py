"""Receiver outage drill: the webhook receiver goes away under a message load
and comes back; every committed message's `message.created` event must then
arrive, signed, under one stable webhook-id.

  - A `standardwebhooks` receiver (tests/drills/webhook_receiver.py) verifies
    every delivery: a bad signature is answered 400 and counted. Before the
    load it proves it refuses a forged and a tampered delivery.
  - Two users, alice and bob, message each other from two threads at a steady
    rate (`--messages` in all over `--load-seconds`).
  - At a quarter of the load the receiver stops listening (roostd's attempts
    get "connection refused") for `--outage-seconds`, then listens again on
    the same port while the load goes on.
  - roostd retries on a shortened schedule that outlasts the outage (the
    drill computes it), so nothing should be dead-lettered.

Checks, after waiting (bounded) for the deliveries to drain:
  - every message that got a 201 is stored, and its event arrived at least once
    with a valid signature, carrying that message and its text;
  - each message's event arrived under exactly one webhook-id (stable across
    retries), and each webhook-id carried one message;
  - no delivery failed verification; the admin API shows nothing dead or pending.

Run `PYTHONPATH=tests python -m drills.outage` (300 messages, 10 s outage: what
`make drills` does); it prints one summary line.
tests/drills/test_drills_webhooks.py runs it small.
"""

import argparse
import sys
import tempfile
import threading
import time

from roost_harness import Client, Roostd

from .common import ADMIN_TOKEN, list_all, print_report
from .webhook_receiver import Receiver, deliveries, delivery_metrics, sign_up, webhooks_config

CONFIG = """\
# The load comes from one machine, one caller: rate limits off (test_rate_limits.py tests them).
rate_limits: off
password_cost: owasp
"""


def retry_schedule(outage_seconds):
    """Short delays whose sum, less the 20 % jitter, outlasts the outage twice over."""
    delays = [0.2, 0.5, 1, 1]
    while sum(delays) * 0.8 < 2 * outage_seconds + 2:
        delays.append(2)
    return "[" + ", ".join(f"{d:g}" for d in delays) + "]"


def stored_messages(port, token):
    """Every message `token`'s user may read: _id -> text."""
    return {m["_id"]: m.get("text") for m in list_all(port, "messages", token=token)}


def run(messages=300, load_seconds=30.0, outage_seconds=10.0, outage_at=None, drain_timeout=None,
        workdir=None, log=print):
    started = time.monotonic()
    outage_at = load_seconds * 0.25 if outage_at is None else outage_at
    schedule = retry_schedule(outage_seconds)
    drain_timeout = drain_timeout if drain_timeout is not None else 30 + outage_seconds * 2
    own_tmp = None
    if workdir is None:
        own_tmp = tempfile.TemporaryDirectory(prefix="roost-outage-drill-")
        workdir = own_tmp.name
    receiver = Receiver()
    daemon = Roostd(workdir, CONFIG + webhooks_config(receiver.url, schedule, admin_token=ADMIN_TOKEN))
    failures, lost = [], []
    lock = threading.Lock()
    acked, refused, no_answer = {}, [], []   # acked: _id -> text
    acked_at = {}                            # _id -> monotonic time of its 201
    tried = [0]
    during_outage = [0]
    down = threading.Event()
    back_at = [None]
    checks = 0
    catchup = float("nan")
    stats = {}
    metrics = {}
    try:
        receiver.start()
        failures += receiver.self_test()
        daemon.start()
        alice = sign_up(daemon.port, "alice")
        bob = sign_up(daemon.port, "bob")
        pairs = [(alice, bob, "a2b"), (bob, alice, "b2a")]
        per_thread = [messages // 2 + (1 if i < messages % 2 else 0) for i in range(2)]
        t0 = time.monotonic()

        def sender(index):
            (me, my_token), (peer, _), tag = pairs[index]
            n = per_thread[index]
            interval = load_seconds / max(n, 1)
            client = Client(daemon.port, timeout=15, token=my_token)
            try:
                for i in range(n):
                    delay = t0 + i * interval - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                    text = f"{tag}-{i}: drill message {i} from {me}"
                    with lock:
                        tried[0] += 1
                        if down.is_set():
                            during_outage[0] += 1
                    try:
                        r = client.request("POST", "/messages", {"recipientId": peer, "text": text})
                    except OSError as e:
                        with lock:
                            no_answer.append(f"{text}: {type(e).__name__}: {e}")
                        continue
                    with lock:
                        if r.status == 201:
                            acked[r.json()["_id"]] = text
                            acked_at[r.json()["_id"]] = time.monotonic()
                        else:
                            refused.append(text)
                            failures.append(f"POST /messages answered {r.status}: {r.raw[:160]!r}")
            finally:
                client.close()

        threads = [threading.Thread(target=sender, args=(i,), daemon=True) for i in range(2)]
        for t in threads:
            t.start()
        time.sleep(max(0.0, t0 + outage_at - time.monotonic()))
        down.set()
        receiver.stop()
        log(f"receiver stopped at {time.monotonic() - t0:.1f} s ({len(acked)} messages acknowledged so far)")
        time.sleep(outage_seconds)
        receiver.start()
        down.clear()
        back_at[0] = time.monotonic()
        log(f"receiver back at {back_at[0] - t0:.1f} s ({len(acked)} acknowledged, {during_outage[0]} sent while down)")
        for t in threads:
            t.join(timeout=load_seconds + 120)
        if any(t.is_alive() for t in threads):
            failures.append("the message load did not finish")
        log(f"load done at {time.monotonic() - t0:.1f} s: {len(acked)}/{tried[0]} acknowledged; waiting for deliveries")
        with lock:
            committed = dict(acked)
        missing = receiver.wait_for(committed, drain_timeout)
        if not missing:  # how long after the receiver came back the backlog was in
            backlog = [m for m in committed if acked_at[m] < back_at[0]]
            last = max((receiver.first_arrival[m] for m in backlog), default=back_at[0])
            catchup = max(0.0, last - back_at[0])
        time.sleep(0.5)  # let a straggling retry show up in the counts
        c, f, l = receiver.check(committed, refused)
        checks += c
        failures += f
        lost += l
        # the messages themselves are stored
        stored = stored_messages(daemon.port, alice[1])
        for mid, text in committed.items():
            checks += 1
            if mid not in stored:
                lost.append(f"message {mid} got a 201 but is not stored")
            elif stored[mid] != text:
                failures.append(f"message {mid} stored with text {stored[mid]!r}, sent {text!r}")
        for status in ("dead", "pending"):
            checks += 1
            rows = deliveries(daemon.port, ADMIN_TOKEN, status)
            if rows:
                failures.append(f"{len(rows)} deliveries still {status} after the drain: {rows[:2]}")
        failures += [f"no answer: {e}" for e in no_answer[:10]]
        metrics.update(delivery_metrics(daemon.port))
        if during_outage[0] and not metrics.get("failed"):  # the drill itself would be broken
            failures.append(f"messages were sent while the receiver was down but roostd counted no failed attempt: {metrics}")
        if metrics.get("gave_up"):
            failures.append(f"roostd gave up on {metrics['gave_up']} deliveries")
        if not daemon.healthy():
            failures.append("roostd /healthz failed after the drill")
        stats = receiver.stats()
    except Exception as e:  # noqa: BLE001 - a drill that breaks is a failed drill with a line
        failures.append(f"drill error: {type(e).__name__}: {e}")
    finally:
        log_tail = daemon.log_tail(20)
        daemon.close()
        receiver.stop()
        if own_tmp is not None:
            own_tmp.cleanup()
    stats = stats or receiver.stats()
    line = (f"receiver outage drill: {tried[0]} messages tried, {len(acked)} acknowledged, "
            f"receiver down {outage_seconds:g} s mid-load ({during_outage[0]} messages sent meanwhile), "
            f"retry schedule of {schedule.count(',') + 1} delays; roostd made {metrics.get('failed', 0)} failed and "
            f"{metrics.get('delivered', 0)} successful attempts, the receiver got {stats['requests']} deliveries "
            f"({stats['invalid']} bad signatures, {stats['duplicates']} repeats of a webhook-id), "
            f"{stats['events']} events for {len(acked)} messages, caught up {catchup:.1f} s after the receiver "
            f"came back; {checks} checks, {len(failures)} failures, {len(lost)} lost; "
            f"{time.monotonic() - started:.0f} s")
    return {"line": line, "failures": failures, "lost": lost, "tried": tried[0], "acked": len(acked),
            "during_outage": during_outage[0], "stats": stats, "log_tail": log_tail}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=300)
    ap.add_argument("--load-seconds", type=float, default=30)
    ap.add_argument("--outage-seconds", type=float, default=10)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    result = run(args.messages, args.load_seconds, args.outage_seconds,
                 log=(lambda *_: None) if args.quiet else (lambda m: print(m, file=sys.stderr)))
    return print_report(result)


if __name__ == "__main__":
    sys.exit(main())
