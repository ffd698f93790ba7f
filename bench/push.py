#!/usr/bin/env python3
"""Direct push benchmark (issue #39): notifications per second delivered to a
local APNs stand-in over ONE HTTP/2 connection (TLS, test CA; push_support.py's
hypercorn + h2 server, which verifies each provider token), and GET latency
meanwhile against its idle p99.

  bench/push.py [--roostd .build/release/roostd] [--devices 200] [--messages 250]
  bench/push.py --sync-only     # silent-sync coalescing under ~1,000 writes/s

One recipient with DEVICES iOS devices; MESSAGES messages sent through
/_batch make DEVICES x MESSAGES pushes. Rate = pushes / span from the first to
the last one the stand-in answered. The stand-in is Python: on a small machine
it is the bottleneck, and the rate measured is a lower bound for roostd's.
"""
import argparse
import os
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.dont_write_bytecode = True
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "python")]
from push_support import Provider, config, env, register, user  # noqa: E402
from roost_harness import ADMIN_TOKEN as ADMIN, Roostd  # noqa: E402


def get_latencies(base, token, seconds):
    """GET /users/me back to back on one connection for `seconds`: sorted latencies in ms."""
    out = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.monotonic()
        req = urllib.request.Request(base + "/users/me", headers={"Authorization": "Bearer " + token})
        urllib.request.urlopen(req).read()
        out.append((time.monotonic() - t) * 1000)
    return sorted(out)


def p99(values):
    return values[int(len(values) * 0.99)] if values else float("nan")


def sync_phase(a):
    """Silent-sync coalescing under a write load: one sync device, `sync_interval: 1`,
    creates in a push_sync collection as fast as /_batch takes them for 6 s."""
    with tempfile.TemporaryDirectory() as tmp:
        provider = Provider(Path(tmp)).start()
        extra = "collections:\n  tasks:\n    permission: shared\n    push_sync: true\n"
        roost = Roostd(str(Path(tmp) / "data"), config(provider, extra=extra, push_extra="  sync_interval: 1\n"),
                       env=env(provider)).start()
        try:
            _, alice_token = user(roost, "alice")
            _, bob_token = user(roost, "bob")
            register(roost, bob_token, "sync-bob", sync=True)
            time.sleep(1.5)
            writes, t0 = 0, time.monotonic()
            while time.monotonic() - t0 < 6:
                ops = [{"method": "POST", "path": "/tasks", "body": {"n": writes + i}} for i in range(100)]
                assert roost.call("POST", "/_batch", {"operations": ops}, alice_token, timeout=60).status == 200
                writes += 100
            elapsed = time.monotonic() - t0
            time.sleep(2)
            pushes = [r for r in provider.requests if r["token"] == "sync-bob"]
            print(f"sync: {writes} writes in {elapsed:.1f} s ({writes / elapsed:.0f}/s); pushes to the device: {len(pushes)} "
                  f"(interval 1 s: at most {int(elapsed) + 2})")
        finally:
            roost.stop(strict=False)
            provider.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roostd", default=os.environ.get("ROOSTD", str(ROOT / ".build/debug/roostd")))
    ap.add_argument("--devices", type=int, default=200)
    ap.add_argument("--messages", type=int, default=250)
    ap.add_argument("--sync-only", action="store_true")
    a = ap.parse_args()
    os.environ["ROOSTD"] = a.roostd
    if a.sync_only:
        return sync_phase(a)
    with tempfile.TemporaryDirectory() as tmp:
        provider = Provider(Path(tmp)).start()
        roost = Roostd(str(Path(tmp) / "data"), config(provider, push_extra="  timeout: 30\n"), env=env(provider)).start()
        try:
            _, alice_token = user(roost, "alice")
            bob, bob_token = user(roost, "bob")
            for i in range(a.devices):
                register(roost, bob_token, f"phone-{i:05d}")
            idle = get_latencies(roost.base, alice_token, 5)
            total = a.devices * a.messages
            busy = []
            reader = threading.Thread(target=lambda: busy.extend(get_latencies(roost.base, alice_token, 8)))
            reader.start()
            for start in range(0, a.messages, 50):
                ops = [{"method": "POST", "path": "/messages", "body": {"recipientId": bob, "text": f"m{i}"}}
                       for i in range(start, min(start + 50, a.messages))]
                resp = roost.call("POST", "/_batch", {"operations": ops}, alice_token, timeout=60)
                assert resp.status == 200, resp.body
            assert provider.wait_for(lambda p: len(p.requests) >= total, timeout=300), len(provider.requests)
            reader.join()
            with provider.lock:
                times = sorted(r["at"] for r in provider.requests)
                conns = {r["conn"] for r in provider.requests}
            span = times[-1] - times[0]
            ok = len(provider.delivered())
            print(f"pushes: {total}, delivered 200: {ok}, connections: {len(conns)}, provider tokens: {len(provider.jwts)}")
            print(f"rate: {total / span:.0f} notifications/s over {span:.2f} s")
            print(f"GET /users/me p99: idle {p99(idle):.2f} ms, during pushes {p99(busy):.2f} ms "
                  f"({len(idle)} and {len(busy)} requests)")
            m = urllib.request.urlopen(roost.base + "/metrics").read().decode()
            print([line for line in m.splitlines() if line.startswith(("roost_push_connections_opened_total", "roost_push_deliveries_total"))])
            failures = [line for line in roost.log_text().splitlines() if "push attempt failed" in line]
            print(f"failed attempts logged: {len(failures)}", failures[:3])
        finally:
            roost.stop(strict=False)
            provider.stop()


if __name__ == "__main__":
    main()
