#!/usr/bin/env python3
"""Live updates benchmark (issue #16), roostd against PocketBase's realtime, same run.

1. Fan-out: SUBS subscribers to one collection (roostd: GET /items/_live; PocketBase:
   GET /api/realtime, then POST /api/realtime {clientId, subscriptions: ["items"]}), held by
   bench/sseclient.c (one epoll thread in C; its CPU is reported to show it is not the
   bottleneck). A writer POSTs RATE creates/s for SECONDS, each with its send time
   ("t": µs since the epoch); each subscriber's receipt is compared with it, so the latency
   is write-to-client (the POST's own time included: an upper bound of commit-to-client).
   Delivered events/s = events received / span from the first to the last receipt (after
   waiting for the deliveries to end: all in, none for 5 s, or --drain seconds). Rounds alternate roostd, PocketBase.
2. Idle streams (roostd): IDLE streams held open to /items/_live; roostd's RSS before and
   with them, and GET by id (wrk -t2 -c50, bench/lua/get.lua) without and with them, in
   interleaved rounds.

  bench/live.py [--roostd .build/release/roostd] [--subs 1000] [--rate 200] [--seconds 20]
                [--idle 10000] [--rounds 2] [--duration 10s] [--port 18480] [--skip-pb] [--skip-idle]

Both servers start fresh in bench/out/live/; roostd with run.sh's settings plus
`live_max_connections: 20000`, `live_max_per_address: 20000` and `max_connections_per_address: 0` (every stream comes from 127.0.0.1); the open-files limit is raised to the hard limit for the
servers and the client (10,000 streams need more than 10,000 descriptors on each side).
"""
import argparse
import os
import re
import sys
import time

sys.dont_write_bytecode = True  # no bench/__pycache__ churn from importing benchlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import figures  # noqa: E402
from live_clients import COLL, Client, build_client, lag_buckets, lag_quantile, pb_subscriber, writer  # noqa: E402
from sync import roost_seed  # noqa: E402


def fanout_round(label, exe, server_pid, port, stream_path, write_path, a, pb_sub=None):
    B.settle([server_pid])
    t_conn = time.monotonic()
    client = Client(exe, port, stream_path, a.subs, pb=pb_sub)
    connect_s = time.monotonic() - t_conn
    if int(client.ready[1]) < a.subs:
        B.log("  warning: only %s of %d streams opened (%s)" % (client.ready[1], a.subs, " ".join(client.ready)))
    time.sleep(1)
    client.cmd("RESET")
    c0 = client.cmd("COUNT", "COUNT")
    cpu0 = B.proc_cpu_ticks(server_pid)
    steal0 = B.machine_ticks()
    lag0 = lag_buckets(port) if label == "roostd" else None
    w = writer(port, write_path, a.rate, a.seconds)
    # wait for the deliveries to end: all expected events in, or none for 5 s, or --drain seconds
    expected = w["sent"] * int(client.ready[1])
    last, still, t_end = -1, 0, time.monotonic() + a.drain
    while time.monotonic() < t_end:
        time.sleep(0.5)
        c = client.cmd("COUNT", "COUNT")
        if c["events"] >= expected:
            break
        if c["events"] == last:
            still += 1
            if still >= 10:
                break
        else:
            still = 0
        last = c["events"]
    steal = B.steal_since(steal0)
    hz = os.sysconf("SC_CLK_TCK")
    server_cpu = (B.proc_cpu_ticks(server_pid) - cpu0) / hz
    r = client.cmd("REPORT", "REPORT")
    client.quit()
    # roostd's own commit-to-send lag (roost_live_lag_seconds, one sample per change per round):
    # the fan-out's share of the latency, without the POST and the client's scheduling.
    lag = None
    if lag0 is not None:
        lag1 = lag_buckets(port)
        lag = {le: lag1[le] - lag0.get(le, 0) for le in lag1}
    span = max(1e-3, (r["last_ms"] - r["first_ms"]) / 1000)
    out = {
        "server": label, "subs": int(client.ready[1]), "sent": w["sent"], "write_errors": w["errors"],
        "write_rate": w["sent"] / w["elapsed"], "post_p50_ms": w["lat"][len(w["lat"]) // 2] if w["lat"] else 0,
        "expected": w["sent"] * int(client.ready[1]), "events": int(r["events"]), "span_s": span,
        "delivered_per_s": r["events"] / span, "p50_ms": r["lat_p50_us"] / 1000, "p90_ms": r["lat_p90_us"] / 1000,
        "p99_ms": r["lat_p99_us"] / 1000, "max_ms": r["lat_max_us"] / 1000, "per_conn_min": int(r["per_conn_min"]),
        "per_conn_max": int(r["per_conn_max"]), "closed": int(r["closed"]), "server_cpu_s": server_cpu,
        "client_cpu_pct": 100 * (r["cpu_s"] - c0["cpu_s"]) / (span + 1e-9), "steal": steal, "connect_s": connect_s,
        "ids": w["ids"], "first_error": w["first_error"], "server_lag_buckets": lag,
        "server_lag_p50_le_ms": lag_quantile(lag, 0.5), "server_lag_p99_le_ms": lag_quantile(lag, 0.99),
    }
    B.log("%-10s %d subs (opened in %.1f s), %d writes (%.0f/s, POST p50 %.1f ms, %d errors%s): %d of %d events in %.1f s = %.0f/s, "
          "latency p50 %.1f p90 %.1f p99 %.1f max %.1f ms, per stream %d..%d, %d streams closed, server CPU %.1f s, client CPU %.0f%%, steal %.0f%%"
          % (label, out["subs"], connect_s, out["sent"], out["write_rate"], out["post_p50_ms"], out["write_errors"],
             (" " + out["first_error"]) if out["first_error"] else "", out["events"], out["expected"], span,
             out["delivered_per_s"], out["p50_ms"], out["p90_ms"], out["p99_ms"], out["max_ms"], out["per_conn_min"],
             out["per_conn_max"], out["closed"], server_cpu, out["client_cpu_pct"], steal))
    return out


def get_round(pid, url, ids_file, duration, raw):
    """GET by id (wrk, bench/lua/get.lua) with its steal and roostd's CPU µs per request."""
    before, cpu0 = B.machine_ticks(), B.proc_cpu_ticks(pid)
    g = B.wrk("get.lua", url, "roost", ids_file, duration=duration, raw=raw)
    g["steal"] = B.steal_since(before)
    g["cpu_us"] = 1e6 * (B.proc_cpu_ticks(pid) - cpu0) / os.sysconf("SC_CLK_TCK") / max(1, g["requests"])
    return g


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roostd")
    ap.add_argument("--subs", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=200)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--idle", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--port", type=int, default=18480)
    ap.add_argument("--drain", type=float, default=60, help="seconds to wait for deliveries after the writes")
    ap.add_argument("--skip-pb", action="store_true")
    ap.add_argument("--skip-idle", action="store_true")
    ap.add_argument("--skip-fanout", action="store_true")
    ap.add_argument("--rss-settle", type=float, default=12, help="seconds before the second RSS reading with the streams open")
    ap.add_argument("--old-config", action="store_true", help="omit live_max_per_address (binaries older than it)")
    ap.add_argument("--out")
    ap.add_argument("--no-record", dest="record", action="store_false",
                    help="do not append the run to bench/results/live.jsonl")
    a = ap.parse_args()
    nofile = B.raise_nofile()
    if not a.skip_idle and nofile < a.idle + 100:
        raise SystemExit("the open-files limit is %d; %d idle streams need more (ulimit -Hn)" % (nofile, a.idle))
    exe = build_client()
    binary = B.roostd_binary(a.roostd)
    work = B.workdir("live")
    B.require_free(a.port, a.port + 10)
    load_before = B.loadavg()
    roost = B.start_roostd(binary, a.port, work, {COLL: ["category", "n"]},
                           extra_yaml="live_max_connections: %d\n" % max(20000, a.idle + 1000)
                           # every stream comes from 127.0.0.1 (--old-config: a binary from before these settings)
                           + ("" if a.old_config else "live_max_per_address: %d\nmax_connections_per_address: 0\n"
                              % max(20000, a.idle + 1000)))
    pb = None
    if not a.skip_pb and not a.skip_fanout:
        pb = B.PB(a.port + 10, work)
        pb.create_collection(COLL, [{"name": "n", "type": "number"}, {"name": "t", "type": "number"},
                                    {"name": "pad", "type": "text"}])
    fan = {"roostd": [], "PocketBase": []}
    ids_file = os.path.join(work, "roost-ids.txt")
    ids, _ = roost_seed(a.port, 10000)
    with open(ids_file, "w") as f:
        f.write("\n".join(ids) + "\n")
    if not a.skip_fanout:
        for rnd in range(1, a.rounds + 1):
            fan["roostd"].append(fanout_round("roostd", exe, roost.pid, a.port, "/%s/_live" % COLL, "/" + COLL, a))
            if pb:
                fan["PocketBase"].append(fanout_round("PocketBase", exe, pb.proc.pid, pb.port, "/api/realtime",
                                                      "/api/collections/%s/records" % COLL, a,
                                                      pb_sub=pb_subscriber(pb.port)))
    if pb:
        B.stop(pb.proc)  # idle from here on; its memory is not roostd's concern

    idle_rows = []
    if not a.skip_idle:
        url = "http://127.0.0.1:%d" % a.port
        for rnd in range(1, a.rounds + 1):
            B.settle([roost.pid])
            g0 = get_round(roost.pid, url, ids_file, a.duration, os.path.join(work, "wrk-get-alone-r%d.txt" % rnd))
            B.settle([roost.pid])
            rss0 = B.rss_mib(roost.pid)
            t = time.monotonic()
            client = Client(exe, a.port, "/%s/_live" % COLL, a.idle)
            opened = int(client.ready[1])
            open_s = time.monotonic() - t
            B.settle([roost.pid])
            time.sleep(2)
            rss1 = B.rss_mib(roost.pid)
            # Again once jemalloc has purged what opening them left behind (its dirty pages decay over 10 s).
            time.sleep(a.rss_settle)
            rss1s = B.rss_mib(roost.pid)
            g1 = get_round(roost.pid, url, ids_file, a.duration, os.path.join(work, "wrk-get-streams-r%d.txt" % rnd))
            rss2 = B.rss_mib(roost.pid)
            c = client.cmd("COUNT", "COUNT")
            client.quit()
            row = {"opened": opened, "open_s": open_s, "rss0": rss0, "rss1": rss1, "rss1s": rss1s, "rss2": rss2, "get0": g0, "get1": g1,
                   "still_open": int(c["open"])}
            idle_rows.append(row)
            B.log("idle round %d: GET alone %.0f/s (%.1f us CPU each, steal %.0f%%); %d streams opened in %.1f s; RSS %.1f -> %.1f MiB "
                  "(+%.1f; %.1f after the GET run); GET with streams %.0f/s (%.0f%%, %.1f us CPU each, steal %.0f%%); %d still open"
                  % (rnd, g0["rps"], g0["cpu_us"], g0["steal"], opened, open_s, rss0, rss1, rss1 - rss0, rss2, g1["rps"],
                     100 * g1["rps"] / g0["rps"], g1["cpu_us"], g1["steal"], row["still_open"]))
            time.sleep(2)

    # ---------------------------------------------------------------- report
    L = ["### Live updates (#16): `bench/live.py`, %s" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), ""]
    L.append("Load average before: %s. Client: bench/sseclient.c (one epoll thread)." % load_before)
    res = {}
    if not a.skip_fanout:
        L += ["", "%d subscribers to one collection, %g creates/s for %g s (8 writer connections), %d rounds alternating "
              "roostd, PocketBase; latency is writer's send time to the client's receipt (the POST included); "
              "every round shown." % (a.subs, a.rate, a.seconds, a.rounds), "",
              "| server | delivered events/s | events / expected | p50 ms | p90 ms | p99 ms | max ms | POST p50 ms | writes/s | streams dropped | server CPU s | client CPU | steal | roostd commit→send p50 / p99 ≤ ms |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for label, rs in fan.items():
            if not rs:
                continue
            res[label] = max(rs, key=lambda r: r["delivered_per_s"])
            res[label + " p99"] = min(r["p99_ms"] for r in rs)
            for i, b in enumerate(rs, 1):
                L.append("| %s, round %d | %.0f | %d / %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f | %d | %.1f | %.0f%% | %.0f%% | %s |"
                         % (label, i, b["delivered_per_s"], b["events"],
                            b["expected"], b["p50_ms"], b["p90_ms"], b["p99_ms"], b["max_ms"], b["post_p50_ms"],
                            b["write_rate"], b["closed"], b["server_cpu_s"], b["client_cpu_pct"], b["steal"],
                            "%g / %g" % (b["server_lag_p50_le_ms"], b["server_lag_p99_le_ms"])
                            if b.get("server_lag_p50_le_ms") is not None else "–"))
    if idle_rows:
        L += ["", "%d idle streams to roostd's /items/_live; RSS (VmRSS) right before opening them and with them open "
              "(after settling); GET by id `wrk -t2 -c50 -d%s` without, then with them, per round:" % (a.idle, a.duration), "",
              "| round | streams open | opened in s | RSS before MiB | with streams MiB | growth MiB | growth after %g s more MiB | GET alone req/s | GET with streams req/s | ratio | roostd CPU µs/GET (alone / with) | steal (alone / with) |" % a.rss_settle,
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
        for i, r in enumerate(idle_rows, 1):
            L.append("| %d | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f | %.0f%% | %.1f / %.1f | %.0f%% / %.0f%% |"
                     % (i, r["opened"], r["open_s"], r["rss0"], r["rss1"], r["rss1"] - r["rss0"], r["rss1s"] - r["rss0"], r["get0"]["rps"],
                        r["get1"]["rps"], 100 * r["get1"]["rps"] / r["get0"]["rps"], r["get0"]["cpu_us"], r["get1"]["cpu_us"],
                        r["get0"]["steal"], r["get1"]["steal"]))
    L.append("")
    verdicts = []
    if "roostd" in res and "PocketBase" in res:
        x = res["roostd"]["delivered_per_s"] / max(1, res["PocketBase"]["delivered_per_s"])
        verdicts.append("≥ 3× PocketBase's delivered events/s: **%s** (%.1f×)" % ("met" if x >= 3 else "missed", x))
    if "roostd" in res:
        verdicts.append("p99 ≤ 50 ms: **%s** (%.1f ms, best round)" % ("met" if res["roostd p99"] <= 50 else "missed",
                                                                        res["roostd p99"]))
    if idle_rows:
        growth = max(r["rss1s"] - r["rss0"] for r in idle_rows)
        ratio = max(r["get1"]["rps"] for r in idle_rows) / max(r["get0"]["rps"] for r in idle_rows)
        verdicts.append("≤ 40 MB RSS for %d idle streams: **%s** (+%.1f MiB, largest round, %g s after opening; +%.1f MiB at 2 s)"
                        % (a.idle, "met" if growth * 1.048576 <= 40 else "missed", growth, a.rss_settle + 2,
                           max(r["rss1"] - r["rss0"] for r in idle_rows)))
        verdicts.append("GET with them ≥ 90%% of without: **%s** (%.0f%%, best with / best without)"
                        % ("met" if ratio >= 0.9 else "missed", 100 * ratio))
    L.append("Targets: " + "; ".join(verdicts) + ".")
    text = "\n".join(L) + "\n"
    targets, metrics = [], None
    if a.record:
        for v in verdicts:  # "<target>: **met|missed** (<measured>)"
            m = re.match(r"(.*): \*\*(met|missed)\*\* \((.*)\)$", v)
            targets.append({"target": m.group(1), "measured": m.group(3), "verdict": m.group(2)})
        metrics = {label: {"delivered_per_s": round(r["delivered_per_s"]), "p99_ms": round(r["p99_ms"], 1),
                           "best_p99_ms": round(res[label + " p99"], 1)}
                   for label, r in res.items() if not label.endswith(" p99")}
        metrics["idle_rounds"] = [{"rss_growth_mib": round(r["rss1"] - r["rss0"], 1),
                                   "rss_growth_settled_mib": round(r["rss1s"] - r["rss0"], 1),
                                   "get_alone_rps": round(r["get0"]["rps"]),
                                   "get_with_streams_rps": round(r["get1"]["rps"])} for r in idle_rows]
        metrics["rate"] = a.rate
    B.publish("live", text, a.out, a.record, metrics, targets, figures.live(metrics, a.rate) if metrics else (), load_before)


if __name__ == "__main__":
    main()
