#!/usr/bin/env python3
"""Direct push benchmark (issue #39), one run:

1. Rate: notifications per second delivered to a local APNs stand-in over ONE
   HTTP/2 connection (TLS, test CA). The stand-in is nginx (bench/push_nginx.py,
   at SCHED_IDLE: Apple's servers are another machine), checking each request
   as Apple does, every distinct ES256 provider token verified from its log
   (`--standin python`: bench/push_standin.py, raw `h2`). Every push must be
   answered 200 exactly once and counted delivered by roostd.
2. GET latency meanwhile: GET /users/me at --get-rate a second, one at a time on
   one keep-alive connection (bench/httpseq.c, so that the client is not what is
   measured), from when a round's last message is in to its last push, against
   the same GETs' p99 when idle. The pushes go in --rounds rounds with idle GETs
   before, between and after them, each side's GETs pooled: this machine's idle
   p99 drifts between 0.3 and 1 ms within minutes, and a single idle window
   before a single flood measured that drift as much as the pushes.
3. Silent-sync coalescing: one sync device, `push.sync_interval: 1`, creates in
   a `push_sync` collection at ~1,000 writes/s; pushes to the device counted by
   the (full-checking) hypercorn stand-in of tests/python/push_support.py.

  bench/push.py [--roostd .build/release/roostd] [--recipients 10] [--messages 3000] [--rounds 3] [--idle 12] [--get-rate 500] [--no-record]

RECIPIENTS users with 20 iOS devices each (a user's most); MESSAGES messages
to them in turn, sent through /_batch, make 20 x MESSAGES pushes. Rate = pushes / the rounds' spans,
each from the first to the last request of the round the stand-in answered.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "tests"), str(ROOT / "tests" / "python")]
import benchlib as B  # noqa: E402
import benchstats  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from push_support import KEY_ID, TEAM_ID, TOPIC, Provider, config, env, register, user  # noqa: E402
from push_nginx import NginxStandin  # noqa: E402
from push_standin import Checker  # noqa: E402
from roost_harness import Roostd  # noqa: E402


def get_latencies(seq, port, token, seconds, rate, samples):
    """GET /users/me `rate` times a second for `seconds` on one keep-alive connection,
    one request outstanding (bench/httpseq.c, so the client is not what is measured),
    every latency written to `samples`; started in the background: get_latencies_end()
    stops it early and reads it."""
    ids = Path(samples).with_suffix(".ids")
    ids.write_text("me\n")
    return B.httpseq_start(seq, port, "get", "/users", ids, rate, seconds, 1,
                           env={"HTTPSEQ_AUTHORIZATION": "Bearer " + token, "HTTPSEQ_SAMPLES": str(samples)})


def get_latencies_end(run, samples, stop=False):
    r = B.httpseq_finish(run, stop=stop)
    assert r["errors"] == 0 and r["sent"] > 0, r
    r["samples"] = [int(x) for x in Path(samples).read_text().split()]
    return r


def pooled(windows):
    """The percentiles of every GET of `windows` together (µs), and each window's p99."""
    lat = sorted(x for w in windows for x in w["samples"])
    n = len(lat)
    return {"sent": n, "p50_us": lat[n // 2], "p90_us": lat[int(n * 0.9)], "p99_us": lat[int(n * 0.99)], "max_us": lat[-1],
            "window_p99_us": [int(w["p99_us"]) for w in windows]}


class PythonStandin:
    """bench/push_standin.py on the production APNs port, in its own process (`--standin python`)."""

    clock = staticmethod(time.monotonic)  # its stats' times: CLOCK_MONOTONIC, the same in every process

    def __init__(self, provider, tmp):
        public = Path(tmp) / "apns-public.pem"
        public.write_bytes(provider.creds.apns_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
        self.stats_file = Path(tmp) / "standin-stats.json"
        self.proc = subprocess.Popen([sys.executable, str(HERE / "push_standin.py"), "--port", str(provider.ports["production"]),
                                      "--cert", str(provider.tmp / "first.pem"), "--key", str(provider.tmp / "first.key"),
                                      "--public-key", str(public), "--kid", KEY_ID, "--team", TEAM_ID, "--topic", TOPIC,
                                      "--stats", str(self.stats_file)])
        deadline = time.monotonic() + 20
        while not self.stats_file.exists():
            assert time.monotonic() < deadline and self.proc.poll() is None, "the stand-in did not start"
            time.sleep(0.1)

    def pids(self):
        return [self.proc.pid]

    def requests(self):
        return self.stats()["requests"]

    def stats(self):
        return json.loads(self.stats_file.read_text())

    def times(self, start, end):
        """When it answered the `start`-th request (0 the first) and the `end`-th (its stats know the first and last only)."""
        s = self.stats()
        assert start == 0 and end == s["requests"], "--standin python measures one round (--rounds 1)"
        return s["first"], s["last"]

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


class NginxStandinForBench(NginxStandin):
    """bench/push_nginx.py's stand-in (the default), its provider tokens verified with the key's public half."""

    clock = staticmethod(time.time)  # its log's times: $msec, seconds since the epoch

    def __init__(self, provider, tmp):
        super().__init__(tmp, provider.ports["production"], provider.tmp / "first.pem", provider.tmp / "first.key", TOPIC)
        self.checker = Checker(provider.creds.apns_key.public_key(), KEY_ID, TEAM_ID, TOPIC)

    def stats(self):
        return NginxStandin.stats(self, self.checker)

    def times(self, start, end):
        """When it answered the `start`-th request (0 the first) and the `end`-th."""
        rows = self.entries()
        return rows[start][0], rows[end - 1][0]


def cpu_ticks(pids):
    return sum(benchstats.proc_cpu_ticks(p) for p in pids)


def rate_phase(a, tmp):
    provider = Provider(Path(tmp))  # its PKI, credentials and ports; the lean stand-in serves production
    standin = (NginxStandinForBench if a.standin == "nginx" else PythonStandin)(provider, tmp)
    # One sender makes every push: a load generator is one caller (its push budget off, as run.sh's rate_limits).
    try:
        roost = Roostd(str(Path(tmp) / "data"), config(provider, extra="rate_limits:\n  push_recipients: {per_second: 0}\n", push_extra="  timeout: 30\n"),
                       env=env(provider)).start()
    except BaseException:
        standin.stop()  # nginx is its own process: a roostd that did not start must not leave it running
        raise
    try:
        _, alice_token = user(roost, "alice")
        recipients = []
        for r in range(a.recipients):
            uid, token = user(roost, f"user{r:03d}")
            recipients.append(uid)
            for i in range(20):  # a user keeps at most 20 devices
                register(roost, token, f"phone-{r:03d}-{i:02d}")
        seq = B.build_httpseq()
        # Rounds of pushes with idle GETs before, between and after them: the machine's drift
        # (this one's idle p99 moves between 0.3 and 1 ms within minutes) meets both sides alike,
        # and each side's p99 is of thousands of GETs pooled.
        per_round = a.messages // a.rounds
        total = 20 * per_round * a.rounds
        hz = os.sysconf("SC_CLK_TCK")
        idle_windows, busy_windows, spans, created_in = [], [], [], []
        cpu = [0, 0]
        threads = {}
        wall = 0.0
        samples = Path(tmp) / "gets.samples"

        def idle_window():
            idle_windows.append(get_latencies_end(get_latencies(seq, roost.port, alice_token, a.idle / (a.rounds + 1), a.get_rate, samples), samples))

        for k in range(a.rounds):
            idle_window()
            done_before, target = 20 * per_round * k, 20 * per_round * (k + 1)
            t0 = time.monotonic()
            cpu0 = (cpu_ticks(standin.pids()), benchstats.proc_cpu_ticks(roost.proc.pid))
            threads0 = benchstats.thread_cpu_ticks(roost.proc.pid)
            for start in range(per_round * k, per_round * (k + 1), 50):
                ops = [{"method": "POST", "path": "/messages", "body": {"recipientId": recipients[i % len(recipients)], "text": f"m{i}"}}
                       for i in range(start, min(start + 50, per_round * (k + 1)))]
                resp = roost.call("POST", "/_batch", {"operations": ops}, alice_token, timeout=60)
                assert resp.status == 200, resp.body
            created_in.append(time.monotonic() - t0)
            # The busy GETs run from when the round's messages are in to its last push, so that they meet the pushes alone.
            window = [standin.clock()]
            reader = get_latencies(seq, roost.port, alice_token, a.wait, a.get_rate, samples)
            deadline = time.monotonic() + a.wait
            while standin.requests() < target and time.monotonic() < deadline:
                time.sleep(0.02)
            busy_windows.append(get_latencies_end(reader, samples, stop=True))
            window.append(standin.clock())
            assert standin.requests() >= target, (standin.stats(), [l for l in roost.log_text().splitlines() if "GET /users/me" not in l][-30:])
            cpu[0] += cpu_ticks(standin.pids()) - cpu0[0]
            cpu[1] += benchstats.proc_cpu_ticks(roost.proc.pid) - cpu0[1]
            round_wall = time.monotonic() - t0
            wall += round_wall
            for name, cores in benchstats.thread_cpu_since(roost.proc.pid, threads0, round_wall).items():
                threads[name] = threads.get(name, 0) + cores * round_wall
            time.sleep(0.3)
            assert standin.requests() == target, ("pushes answered beyond the round's", standin.requests(), target)
            # The busy GETs ran while the round's pushes went out, from start to end (the last poll 20 ms after the last push, give or take a loaded machine).
            first, last = standin.times(done_before, target)
            assert first <= window[0] and window[1] <= last + 0.5, ("the GET window is not the pushes'", window, first, last)
            spans.append(last - first)
        idle_window()
        s = standin.stats()
        metrics = urllib.request.urlopen(roost.base + "/metrics").read().decode()
        # Each push answered once (none sent again) and counted delivered by roostd itself.
        assert s["requests"] == total and s["ok"] == total, s
        assert 'outcome="delivered"} %d' % total in metrics, [l for l in metrics.splitlines() if "push_deliveries" in l]
        idle, busy = pooled(idle_windows), pooled(busy_windows)
        assert busy["sent"] >= 200, ("too few GETs while the pushes went out", busy)
        span = sum(spans)
        return {"pushes": total, "rounds": a.rounds, "answered": s["requests"], "delivered": s["ok"], "refused": s["refused"],
                "reasons": s["reasons"], "connections": s["connections"], "provider_tokens": s["tokens"],
                "span_s": round(span, 3), "round_spans_s": [round(x, 3) for x in spans], "rate": round(total / span, 1) if span > 0 else 0,
                "sent_in_s": round(wall, 2), "created_in_s": round(sum(created_in), 2),
                # CPU of a core while the rounds ran: the stand-in near 1.0 would make it the limit
                "standin_cpu": round(cpu[0] / hz / wall, 2), "roostd_cpu": round(cpu[1] / hz / wall, 2),
                "roostd_threads": {k: round(v / wall, 2) for k, v in sorted(threads.items(), key=lambda kv: -kv[1]) if v / wall >= 0.01},
                "idle_p99_ms": round(idle["p99_us"] / 1000, 3), "busy_p99_ms": round(busy["p99_us"] / 1000, 3),
                "idle_gets": idle["sent"], "busy_gets": busy["sent"], "idle_get_us": idle, "busy_get_us": busy,
                "metrics": [line for line in metrics.splitlines() if line.startswith("roost_push_deliveries_total")]}
    finally:
        roost.stop(strict=False)
        standin.stop()


def sync_phase(a, tmp):
    """Silent-sync coalescing under a write load: one sync device, `sync_interval: 1`,
    creates in a push_sync collection at about `a.writes` a second for `a.sync_seconds`."""
    (Path(tmp) / "sync").mkdir()
    provider = Provider(Path(tmp) / "sync").start()
    extra = "collections:\n  tasks:\n    permission: shared\n    push_sync: true\n"
    roost = Roostd(str(Path(tmp) / "sync" / "data"), config(provider, extra=extra, push_extra="  sync_interval: 1\n"),
                   env=env(provider)).start()
    try:
        _, alice_token = user(roost, "alice")
        _, bob_token = user(roost, "bob")
        register(roost, bob_token, "sync-bob", sync=True)
        time.sleep(1.5)
        writes, t0 = 0, time.monotonic()
        while time.monotonic() - t0 < a.sync_seconds:
            ops = [{"method": "POST", "path": "/tasks", "body": {"n": writes + i}} for i in range(100)]
            assert roost.call("POST", "/_batch", {"operations": ops}, alice_token, timeout=60).status == 200
            writes += 100
            ahead = writes / a.writes - (time.monotonic() - t0)
            if ahead > 0:
                time.sleep(ahead)
        elapsed = time.monotonic() - t0
        time.sleep(2)
        with provider.lock:
            pushes = [r for r in provider.requests if r["token"] == "sync-bob" and r["status"] == 200]
        # one per started interval, plus the one the first write sends at once
        allowed = int(elapsed + 2) + 1
        return {"writes": writes, "seconds": round(elapsed, 2), "writes_per_s": round(writes / elapsed, 1),
                "pushes": len(pushes), "allowed": allowed, "refused": list(provider.errors)}
    finally:
        roost.stop(strict=False)
        provider.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roostd", default=os.environ.get("ROOSTD", str(ROOT / ".build/release/roostd")))
    ap.add_argument("--recipients", type=int, default=10, help="users with 20 iOS devices each")
    ap.add_argument("--messages", type=int, default=3000, help="messages, each pushed to its recipient's 20 devices")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of pushes, with idle GETs before, between and after them")
    ap.add_argument("--idle", type=float, default=12.0, help="seconds of idle GETs, over every idle window")
    ap.add_argument("--get-rate", type=float, default=500, help="GETs a second, one at a time on one connection")
    ap.add_argument("--writes", type=int, default=1000, help="writes/s in the sync phase")
    ap.add_argument("--sync-seconds", type=float, default=6.0)
    ap.add_argument("--wait", type=float, default=300, help="the longest wait for every push (s)")
    ap.add_argument("--standin", choices=("nginx", "python"), default="nginx",
                    help="the APNs stand-in of the rate phase: nginx (bench/push_nginx.py) or bench/push_standin.py")
    ap.add_argument("--no-record", dest="record", action="store_false")
    a = ap.parse_args()
    os.environ["ROOSTD"] = a.roostd
    load = benchstats.loadavg()
    with tempfile.TemporaryDirectory() as tmp:
        rate = rate_phase(a, tmp)
        print(json.dumps(rate), flush=True)
        sync = sync_phase(a, tmp)
    get_ratio = rate["busy_p99_ms"] / rate["idle_p99_ms"]
    text = "\n".join([
        "| measure | roostd | compared with | ratio | target |",
        "|---|---|---|---|---|",
        "| notifications/s to an APNs stand-in, one HTTP/2 connection | %.0f | %d pushes in %.2f s, %d connection(s) | | ≥ 5,000 |"
        % (rate["rate"], rate["answered"], rate["span_s"], rate["connections"]),
        "| GET p99 while pushes go out | %.2f ms | idle p99 %.2f ms | %.2f | ≤ 1.2 |" % (rate["busy_p99_ms"], rate["idle_p99_ms"], get_ratio),
        "| silent-sync pushes to one device, sync_interval 1 s, %.0f writes/s for %.1f s | %d | at most %d | %.2f | ≤ 1 |"
        % (sync["writes_per_s"], sync["seconds"], sync["pushes"], sync["allowed"], sync["pushes"] / sync["allowed"]),
        "",
        "Delivered 200: %d of %d, refused by the stand-in: %d %s; provider tokens: %d. CPU over the run (cores): "
        "the stand-in %.2f, roostd %.2f (with the GETs and the messages' writes)." % (
            rate["delivered"], rate["pushes"], rate["refused"], rate["reasons"][:3], rate["provider_tokens"],
            rate["standin_cpu"], rate["roostd_cpu"]),
    ]) + "\n"
    print(text)
    print(json.dumps({"rate": rate, "sync": sync}, indent=1))
    if a.record:
        figs = [benchstats.figure("push.rate", rate["rate"], "notifications/s", "≥ 5,000 over one HTTP/2 connection"),
                benchstats.figure("push.get_p99", rate["busy_p99_ms"], "ms", "≤ 1.2× idle p99", "GET p99 idle",
                                  rate["idle_p99_ms"], round(get_ratio, 2)),
                benchstats.figure("push.sync_coalescing", sync["pushes"], "pushes", "≤ one per sync_interval",
                                  "pushes allowed", sync["allowed"], round(sync["pushes"] / sync["allowed"], 2))]
        benchstats.record("push", {"rate": rate, "sync": sync}, [], text, figs, load)


if __name__ == "__main__":
    main()
