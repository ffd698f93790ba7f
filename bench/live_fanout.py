#!/usr/bin/env python3
"""Live fan-out that does not slow the writes (issue #43 §2), roostd against PocketBase, same run.

Clients in C, so that they are not what is measured: bench/sseclient.c holds the streams (one
epoll thread), bench/httpseq.c sends the creates one after another (one keep-alive connection,
each the moment the last was answered) and the paced GETs.

1. Fan-out time: SUBS subscribers (roostd: GET /items/_live; PocketBase: its realtime
   subscription to items) and CREATES sequential creates; the time from the first create's send
   to the last event's receipt by the last subscriber (all SUBS × CREATES events must arrive).
   Target: roostd ≥ 3× faster than PocketBase.
2. Creates under fan-out: the same CREATES sequential creates without subscribers, then with
   the SUBS (the creates' own time, first send to last answer). Target: with ≥ 60% of the rate
   without (roostd).
3. GET beside a big fan-out (roostd): GET by id paced at GET_RATE/s on 4 other connections for
   SECONDS (p99 of each request's time), idle, then with BIG subscribers while bench/live_clients'
   writer POSTs WRITE_RATE creates/s. Target: p99 with ≤ 2× idle.

Rounds alternate the servers (and idle / loaded in part 3); each server's best round counts,
every round is shown. roostd's CPU per delivered event is shown to say where the time went
(docs/LIVE-FANOUT.md).

  bench/live_fanout.py [--roostd .build/release/roostd] [--subs 300] [--creates 200] [--rounds 3]
                       [--big 1000] [--write-rate 200] [--get-rate 500] [--seconds 10] [--port 18520]
                       [--skip-pb] [--skip-get] [--no-record]
"""
import argparse
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import benchstats  # noqa: E402
from live_clients import COLL, Client, build_client, pb_subscriber, writer  # noqa: E402
from sync import roost_seed  # noqa: E402


def creates(exe, port, path, n):
    r = B.httpseq(exe, port, "post", path, n)
    r["seconds"] = (r["end_ms"] - r["start_ms"]) / 1000
    r["rate"] = r["sent"] / max(1e-6, r["seconds"])
    return r


def fanout_round(label, exe, seq, pid, port, stream_path, write_path, a, pb_sub=None):
    """Creates without subscribers, then with a.subs: the creates' time, and the fan-out's
    (first create sent to the last event received)."""
    B.settle([pid])
    cpu0 = B.proc_cpu_ticks(pid)
    alone = creates(seq, port, write_path, a.creates)
    cpu_alone = (B.proc_cpu_ticks(pid) - cpu0) / os.sysconf("SC_CLK_TCK")
    client = Client(exe, port, stream_path, a.subs, pb=pb_sub)
    opened = int(client.ready[1])
    time.sleep(1)
    B.settle([pid])
    client.cmd("RESET")
    cpu0 = B.proc_cpu_ticks(pid)
    steal0 = B.machine_ticks()
    withs = creates(seq, port, write_path, a.creates)
    expected = int(withs["sent"]) * opened
    deadline = time.monotonic() + a.drain
    while time.monotonic() < deadline:
        if client.cmd("COUNT", "COUNT")["events"] >= expected:
            break
        time.sleep(0.05)
    r = client.cmd("REPORT", "REPORT")
    cpu_with = (B.proc_cpu_ticks(pid) - cpu0) / os.sysconf("SC_CLK_TCK")
    steal = B.steal_since(steal0)
    client.quit()
    complete = int(r["events"]) >= expected
    out = {"server": label, "subs": opened, "creates": int(withs["sent"]), "errors": int(withs["errors"] + alone["errors"]),
           "alone_s": alone["seconds"], "alone_rate": alone["rate"], "with_s": withs["seconds"], "with_rate": withs["rate"],
           "fanout_s": (r["last_ms"] - withs["start_ms"]) / 1000, "events": int(r["events"]), "expected": expected,
           "complete": complete, "event_p50_ms": r["lat_p50_us"] / 1000, "event_p99_ms": r["lat_p99_us"] / 1000,
           "cpu_alone_s": cpu_alone, "cpu_with_s": cpu_with, "steal": steal, "client_cpu_s": r["cpu_s"]}
    # the server's CPU for the fan-out beyond the creates themselves, per delivered event
    out["cpu_us_per_event"] = 1e6 * max(0.0, cpu_with - cpu_alone) / max(1, out["events"])
    B.log("%-10s %d subs: %d creates alone %.3f s (%.0f/s), with subs %.3f s (%.0f/s, %.0f%%); all %d of %d events in %.3f s%s; "
          "event p50 %.1f p99 %.1f ms; server CPU %.2f s (%.2f alone) = %.1f µs/event; steal %.0f%%"
          % (label, opened, out["creates"], out["alone_s"], out["alone_rate"], out["with_s"], out["with_rate"],
             100 * out["with_rate"] / out["alone_rate"], out["events"], expected, out["fanout_s"],
             "" if complete else " (INCOMPLETE)", out["event_p50_ms"], out["event_p99_ms"], cpu_with, cpu_alone,
             out["cpu_us_per_event"], steal))
    return out


def get_round(label, seq, ids_file, pid, port, a, client_exe=None):
    """Paced GETs on their own connections; with client_exe: while a.big streams follow items and
    the paced writer sends a.write_rate creates/s."""
    B.settle([pid])
    client, w = None, None
    if client_exe:
        client = Client(client_exe, port, "/%s/_live" % COLL, a.big)
        time.sleep(1)
        B.settle([pid])
        client.cmd("RESET")
    cpu0 = B.proc_cpu_ticks(pid)
    result = {}

    def gets():
        result["get"] = B.httpseq(seq, port, "get", "/" + COLL, ids_file, a.get_rate, a.seconds)

    def writes():
        result["writes"] = writer(port, "/" + COLL, a.write_rate, a.seconds + 0.5)

    B.run_threads([gets, writes] if client else [gets])
    cpu = (B.proc_cpu_ticks(pid) - cpu0) / os.sysconf("SC_CLK_TCK")
    g = result["get"]
    out = {"label": label, "p50_ms": g["p50_us"] / 1000, "p99_ms": g["p99_us"] / 1000, "max_ms": g["max_us"] / 1000,
           "gets": int(g["sent"]), "errors": int(g["errors"]), "server_cpu_s": cpu}
    if client:
        time.sleep(1)
        r = client.cmd("REPORT", "REPORT")
        client.quit()
        wr = result["writes"]
        out.update(streams=a.big, writes=wr["sent"], write_rate=wr["sent"] / wr["elapsed"], events=int(r["events"]),
                   expected=wr["sent"] * a.big, event_p99_ms=r["lat_p99_us"] / 1000)
    B.log("GET %-28s p50 %.2f p99 %.2f max %.1f ms (%d GETs, %d errors), server CPU %.1f s%s"
          % (label, out["p50_ms"], out["p99_ms"], out["max_ms"], out["gets"], out["errors"], cpu,
             "; %d writes (%.0f/s), %d of %d events, event p99 %.1f ms" % (out["writes"], out["write_rate"], out["events"],
                                                                        out["expected"], out["event_p99_ms"]) if client else ""))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roostd")
    ap.add_argument("--subs", type=int, default=300)
    ap.add_argument("--creates", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--big", type=int, default=1000, help="streams open in the GET measurement")
    ap.add_argument("--write-rate", type=float, default=200)
    ap.add_argument("--get-rate", type=float, default=500)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--drain", type=float, default=60, help="seconds to wait for every event")
    ap.add_argument("--port", type=int, default=18520)
    ap.add_argument("--skip-pb", action="store_true")
    ap.add_argument("--skip-get", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--no-record", dest="record", action="store_false",
                    help="do not append the run to bench/results/live_fanout.jsonl")
    a = ap.parse_args()
    B.raise_nofile()
    exe, seq = build_client(), B.build_httpseq()
    binary = B.roostd_binary(a.roostd)
    work = B.workdir("live_fanout", fresh=True)
    B.require_free(a.port, a.port + 10)
    load = B.loadavg()
    limit = max(20000, 2 * a.big)
    roost = B.start_roostd(binary, a.port, work, {COLL: ["category", "n"]},
                           extra_yaml="live_max_connections: %d\nlive_max_per_address: %d\nmax_connections_per_address: 0\n"
                           % (limit, limit))
    pb = None
    if not a.skip_pb:
        pb = B.PB(a.port + 10, work)
        pb.create_collection(COLL, [{"name": "n", "type": "number"}, {"name": "t", "type": "number"},
                                    {"name": "pad", "type": "text"}])
    fan = {"roostd": [], "PocketBase": []}
    for rnd in range(a.rounds):
        order = [("roostd", roost.pid, a.port, "/%s/_live" % COLL, "/" + COLL, None)]
        if pb:
            entry = ("PocketBase", pb.proc.pid, pb.port, "/api/realtime", "/api/collections/%s/records" % COLL,
                     pb_subscriber(pb.port))
            order = order + [entry] if rnd % 2 == 0 else [entry] + order
        for label, pid, port, stream, path, sub in order:
            fan[label].append(fanout_round(label, exe, seq, pid, port, stream, path, a, pb_sub=sub))
    if pb:
        B.stop(pb.proc)

    gets = {"idle": [], "fanout": []}
    if not a.skip_get:
        ids, _ = roost_seed(a.port, 10000)
        ids_file = os.path.join(work, "roost-ids.txt")
        with open(ids_file, "w") as f:
            f.write("\n".join(ids) + "\n")
        for rnd in range(a.rounds):
            for side in (("idle", "fanout") if rnd % 2 == 0 else ("fanout", "idle")):
                label = "idle" if side == "idle" else "%d streams, %g writes/s" % (a.big, a.write_rate)
                gets[side].append(get_round(label, seq, ids_file, roost.pid, a.port, a, exe if side == "fanout" else None))

    # ---------------------------------------------------------------- report
    L = ["### Live fan-out beside the writes (#43): `bench/live_fanout.py`, %s" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
         "", "`%s`; load average before: %s. Clients: bench/sseclient.c (streams), bench/httpseq.c (creates one after "
         "another, paced GETs)." % (os.path.relpath(binary, B.ROOT), load), "",
         "%d subscribers, %d creates sent one after another; fan-out time = first create sent to the last event received "
         "(every event must arrive); %d rounds, servers alternating, every round shown:" % (a.subs, a.creates, a.rounds), "",
         "| server, round | creates alone s (/s) | with %d subs s (/s) | with / alone | fan-out s | events / expected | event p50 / p99 ms | server CPU s (alone) | CPU µs / event | steal |" % a.subs,
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, rs in fan.items():
        for i, r in enumerate(rs, 1):
            L.append("| %s, %d | %.3f (%.0f) | %.3f (%.0f) | %.0f%% | %.3f | %d / %d | %.1f / %.1f | %.2f (%.2f) | %.1f | %.0f%% |"
                     % (label, i, r["alone_s"], r["alone_rate"], r["with_s"], r["with_rate"], 100 * r["with_rate"] / r["alone_rate"],
                        r["fanout_s"], r["events"], r["expected"], r["event_p50_ms"], r["event_p99_ms"], r["cpu_with_s"],
                        r["cpu_alone_s"], r["cpu_us_per_event"], r["steal"]))
    verdicts, figs, metrics = [], [], {"subs": a.subs, "creates": a.creates, "fanout": fan, "gets": gets}
    best = {k: min((r for r in rs if r["complete"]), key=lambda r: r["fanout_s"], default=None) for k, rs in fan.items()}
    ro, pbb = best["roostd"], best["PocketBase"]
    if ro and pbb:
        x = pbb["fanout_s"] / ro["fanout_s"]
        verdicts.append("%d subscribers × %d sequential creates ≥ 3× faster than PocketBase: **%s** (%.3f s vs %.3f s, %.2f×)"
                        % (a.subs, a.creates, "met" if x >= 3 else "missed", ro["fanout_s"], pbb["fanout_s"], x))
        figs.append(benchstats.figure("live_fanout.vs_pocketbase", round(ro["fanout_s"], 3), "s", "≥ 3× faster than PocketBase",
                                      "PocketBase s", round(pbb["fanout_s"], 3), round(x, 2),
                                      "%d subscribers × %d sequential creates, first send to last receipt, best round" % (a.subs, a.creates)))
    elif ro:
        verdicts.append("%d subscribers × %d sequential creates: %.3f s (PocketBase not run)" % (a.subs, a.creates, ro["fanout_s"]))
    if fan["roostd"]:
        w = max(r["with_rate"] for r in fan["roostd"])
        wo = max(r["alone_rate"] for r in fan["roostd"])
        x = w / wo
        verdicts.append("sequential creates with %d subscribers ≥ 60%% of the rate without: **%s** (%.0f/s vs %.0f/s, %.0f%%)"
                        % (a.subs, "met" if x >= 0.6 else "missed", w, wo, 100 * x))
        figs.append(benchstats.figure("live_fanout.creates_with_subs", round(w), "creates/s", "≥ 60% of without",
                                      "creates/s without subscribers", round(wo), round(x, 3),
                                      "%d sequential creates, %d subscribers, best round each" % (a.creates, a.subs)))
    if gets["idle"] and gets["fanout"]:
        L += ["", "GET by id at %g/s on 4 other connections for %g s (p99 of each request), idle and with %d streams and %g "
              "creates/s (bench/live_clients' paced writer), alternating:" % (a.get_rate, a.seconds, a.big, a.write_rate), "",
              "| load | GET p50 ms | p99 ms | max ms | GETs (errors) | server CPU s | writes/s | events / expected | event p99 ms |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for side in ("idle", "fanout"):
            for r in gets[side]:
                L.append("| %s | %.2f | %.2f | %.1f | %d (%d) | %.1f | %s | %s | %s |"
                         % (r["label"], r["p50_ms"], r["p99_ms"], r["max_ms"], r["gets"], r["errors"], r["server_cpu_s"],
                            "%.0f" % r["write_rate"] if "writes" in r else "", "%d / %d" % (r["events"], r["expected"])
                            if "events" in r else "", "%.1f" % r["event_p99_ms"] if "events" in r else ""))
        idle = min(r["p99_ms"] for r in gets["idle"])
        loaded = min(r["p99_ms"] for r in gets["fanout"])
        x = loaded / idle
        verdicts.append("GET p99 with %d streams at %g writes/s ≤ 2× idle: **%s** (%.2f ms vs %.2f ms, %.2f×)"
                        % (a.big, a.write_rate, "met" if x <= 2 else "missed", loaded, idle, x))
        figs.append(benchstats.figure("live_fanout.get_p99", round(loaded, 3), "ms", "≤ 2× idle", "GET p99 idle", round(idle, 3),
                                      round(x, 2), "paced %g GET/s; %d streams, %g writes/s; best round each" % (a.get_rate, a.big, a.write_rate)))
    L += ["", "Targets: " + "; ".join(verdicts) + "."]
    text = "\n".join(L) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    if a.record:
        benchstats.record("live_fanout", metrics, [], text, figs, load)


if __name__ == "__main__":
    main()
