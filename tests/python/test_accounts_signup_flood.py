"""A sign-up flood does not take log-in down.

A taken username is answered 409 on a reader, before any hash; sign-ups that
do need a hash queue in the hash pool's own lane, behind every log-in, and
one hash thread is kept for log-ins. So while many clients sign up (a taken
name and fresh names) as fast as they can, a real user's log-ins and
password changes all succeed, promptly, and never hear 503."""

import concurrent.futures
import itertools
import threading
import time

import pytest

from roost_harness import running_roostd

# libsodium's `interactive` cost on purpose, not the tests' cheapest (FAST_HASHING, owasp): the
# check that taken names are never hashed counts on two hash threads hashing far fewer than 200
# passwords in FLOOD_SECONDS at this cost.
HASHING = "password_cost: interactive\nhash_concurrency: 2\n"
FLOOD_SECONDS = 4.0
# The longest a log-in (one hash) or password change (two) may take during
# the flood: it waits for no sign-up's hash (the hash pool turns away a job
# expected to wait past 3 s: a starved log-in would hear 503 at once).
LOG_IN_SECONDS = 2.5

# (what each flooding thread signs up, how many threads)
FLOODS = [
    ("taken", 24),
    ("fresh", 24),
    ("mixed", 32),
]


def sign_up_loop(d, kind, thread, stop, statuses):
    for i in itertools.count():
        if stop.is_set():
            return
        taken = kind == "taken" or (kind == "mixed" and thread % 2 == 0)
        name = ("Taken-Name", "taken-name", "TAKEN-NAME")[i % 3] if taken else f"fresh-{kind}-{thread}-{i}"
        r = d.call("POST", "/users", {"username": name, "password": f"flood password {thread} {i}"}, timeout=30)
        statuses.append(("taken" if taken else "fresh", r.status))


@pytest.mark.parametrize("kind,threads", FLOODS)
def test_log_in_keeps_working_through_a_sign_up_flood(kind, threads):
    # Sign-up rate limits off: this is about the hash pool, so the flood must reach it
    # (rate_limits.signups, which would turn most of it away first, is test_rate_limits.py's).
    with running_roostd(HASHING + "rate_limits:\n  signups: {per_second: 0}\n") as d:
        d.sign_up("taken-name", password="the owner's password")
        user = d.sign_up("real-user", password="the real password")
        password, token = "the real password", user["token"]
        stop, statuses, log_ins = threading.Event(), [], []
        with concurrent.futures.ThreadPoolExecutor(max_workers=threads) as pool:
            flood = [pool.submit(sign_up_loop, d, kind, t, stop, statuses) for t in range(threads)]
            time.sleep(0.5)  # let the flood build up first
            deadline = time.monotonic() + FLOOD_SECONDS
            for i in itertools.count():
                if time.monotonic() >= deadline:
                    break
                started = time.monotonic()
                if i % 3 == 2:  # a password change: its oldPassword and new hash are log-in work too
                    new = f"real password number {i}"
                    r = d.call("PATCH", f"/users/{user['user']['_id']}", {"password": new, "oldPassword": password},
                               token=token, timeout=30)
                    password = new if r.status == 200 else password
                else:
                    r = d.call("POST", "/login", {"username": "real-user", "password": password}, timeout=30)
                    token = r.body["token"] if r.status == 200 else token
                log_ins.append((r.status, time.monotonic() - started, r.header("Retry-After")))
            stop.set()
            for f in flood:
                f.result()
        assert len(log_ins) >= 3, log_ins
        assert [s for s, _, _ in log_ins] == [200] * len(log_ins), log_ins
        slowest = max(t for _, t, _ in log_ins)
        assert slowest < LOG_IN_SECONDS, log_ins
        taken = [s for k, s in statuses if k == "taken"]
        fresh = [s for k, s in statuses if k == "fresh"]
        if kind != "fresh":
            # A taken name is a 409 from a reader: no hash, so never a 503 for want of one.
            # Thousands in a few seconds: more than two hash threads could have hashed.
            assert len(taken) > 200 and set(taken) == {409}, (len(taken), sorted(set(taken)))
        if kind != "taken":
            # Fresh names do hash: some are made, the rest turned away with 503.
            assert fresh.count(201) >= 1 and set(fresh) <= {201, 503}, sorted(set(fresh))
        # The daemon still serves, and the owner of the taken name still logs in.
        assert d.log_in("taken-name", "the owner's password").status == 200
        print(f"{kind}: {len(log_ins)} log-ins, slowest {slowest:.2f} s, times {[round(t, 2) for _, t, _ in log_ins]}; sign-ups "
              f"{ {s: [x for _, x in statuses].count(s) for s in sorted({x for _, x in statuses})} }")
