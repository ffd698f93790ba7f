#!/usr/bin/env python3
"""Live fan-out with a per-subscriber read rule vs without (issue #35), same run, same daemon.

One roostd, two public collections: `items` (no rules) and `ruled` with
  rules.read {"$or": [{"n": {"$gte": 0}}, {"owner": "@caller.id"}]}
which every written entity passes (n ≥ 0), so both deliver the same events and the difference
is the rule: each subscriber's scope resolves it once when its stream opens and evaluates it in
memory on every change (`RuleFilter`), where `items` asks nothing per subscriber. SUBS streams
(bench/sseclient.c) follow one collection while a writer POSTs RATE creates/s for SECONDS
(bench/live.py's fan-out round); rounds alternate items/ruled (ABBA). Per round: delivered
events/s and roostd's CPU µs per delivered event. Target: with the rule ≥ 80% of without
(median delivered events/s, and CPU per event at most 1/0.8 of it).

  bench/rules_live.py [--roostd .build/release/roostd] [--subs 1000] [--rate 200] [--seconds 10] [--rounds 4]
"""
import argparse
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import benchstats  # noqa: E402
from live import fanout_round  # noqa: E402
from live_clients import build_client  # noqa: E402

RULE = '{"$or": [{"n": {"$gte": 0}}, {"owner": "@caller.id"}]}'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roostd")
    ap.add_argument("--subs", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=200)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--drain", type=float, default=60)
    ap.add_argument("--port", type=int, default=18485)
    ap.add_argument("--no-record", dest="record", action="store_false")
    a = ap.parse_args()
    B.raise_nofile()
    exe = build_client()
    binary = B.roostd_binary(a.roostd)
    work = B.workdir("rules_live", fresh=True)
    cfg = os.path.join(work, "roost.yaml")
    limit = max(20000, a.subs * 2)
    with open(cfg, "w") as f:
        f.write("log_level: warning\n%s\nlive_max_connections: %d\nlive_max_per_address: %d\nmax_connections_per_address: 0\n"
                "collections:\n  items:\n    permission: public\n  ruled:\n    permission: public\n    rules:\n      read: '%s'\n"
                % (B.NO_RATE_LIMITS, limit, limit, RULE))
    proc = B.spawn([binary, "serve", "--listen", "127.0.0.1:%d" % a.port, "--data-dir", os.path.join(work, "data"),
                    "--config", cfg], os.path.join(work, "roostd.log"))
    B.wait_http(a.port, "/healthz", proc, "roostd")
    load = B.loadavg()
    rows = {"items": [], "ruled": []}
    for r in range(a.rounds):
        for side in (("items", "ruled") if r % 2 == 0 else ("ruled", "items")):
            out = fanout_round("roostd", exe, proc.pid, a.port, "/%s/_live" % side, "/" + side, a)
            out["cpu_us_per_event"] = out["server_cpu_s"] * 1e6 / max(1, out["events"])
            rows[side].append(out)
            B.log("round %d %-5s %8.0f events/s, %d/%d, %.2f µs CPU/event" % (r, side, out["delivered_per_s"], out["events"],
                                                                          out["expected"], out["cpu_us_per_event"]))
    B.stop(proc)
    med = {s: (statistics.median(x["delivered_per_s"] for x in rows[s]), statistics.median(x["cpu_us_per_event"] for x in rows[s]),
               sum(x["events"] for x in rows[s]), sum(x["expected"] for x in rows[s])) for s in rows}
    rate_ratio = med["ruled"][0] / med["items"][0]
    cpu_ratio = med["items"][1] / med["ruled"][1]
    ratio = min(rate_ratio, cpu_ratio)
    lines = ["### Live fan-out with a per-subscriber read rule vs without (#35): `bench/rules_live.py`, %s" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
             "",
             "`%s`, %d subscribers, %g creates/s for %g s, %d rounds ABBA; rule `%s` (every entity passes it). Load average before: %s." % (
                 os.path.relpath(binary, B.ROOT), a.subs, a.rate, a.seconds, a.rounds, RULE, load),
             "",
             "| collection | delivered events/s (median) | events / expected (all rounds) | roostd CPU µs/event (median) |",
             "|---|---:|---:|---:|",
             "| items (no rule) | %.0f | %d / %d | %.2f |" % tuple(med["items"][i] for i in (0, 2, 3, 1)),
             "| ruled | %.0f | %d / %d | %.2f |" % tuple(med["ruled"][i] for i in (0, 2, 3, 1)),
             "",
             "With the rule: %.0f%% of the delivered rate, %.0f%% of the CPU efficiency. Target ≥ 80%%: **%s**." % (
                 100 * rate_ratio, 100 * cpu_ratio, "met" if ratio >= 0.8 else "missed")]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.record:
        fig = benchstats.figure("rules.live_fanout", round(med["ruled"][0]), "events/s", "≥ 80% of fan-out without rules",
                                "fan-out without rules", round(med["items"][0]), round(ratio, 3),
                                "rate %.2f×, CPU per event %.2f× (the lower counts)" % (rate_ratio, cpu_ratio))
        keys = ("delivered_per_s", "cpu_us_per_event", "events", "expected")
        benchstats.record("rules_live", {s: dict(zip(keys, med[s])) for s in med}, [], text, [fig], load)


if __name__ == "__main__":
    main()
