#!/usr/bin/env python3
"""Creates with the change feed vs before it (issue #15's "the feed costs creates <= 10%"):
a same-run A/B of two roostd binaries, each on its own port and fresh data directory with
run.sh's config (items public, indexes category and n), both running throughout; wrk POSTs
(bench/lua/create.lua, -t2 -c50) alternate between them, in ABBA order across rounds so
neither always runs first. Each binary's figure is its best round; server CPU per create
(the process's user+system time over the run / creates) is given too, since it moves less
with the host's noise than the rate.

  bench/create_ab.py --a NEW_ROOSTD --b OLD_ROOSTD [--rounds 6] [--duration 10s] [--seed 20000] [--port 18380]
                      [--script get.lua]   (another bench/lua workload on the same seeded items, e.g. GET by id)
                      [--b-script get.lua] (B's own workload, when it differs from A's)
                      [--a-yaml 'scripts_dir: DIR'] [--b-yaml ...] (configuration lines for one side only)
                      [--target feed|glue|script_hook|script_fn] (what the run measures, recorded as its figure)

The scripts' targets (#37) run one binary twice: script_hook = creates with a trivial before
hook (--a-yaml "scripts_dir: bench/roost-scripts/hook") vs none, >= 85%; script_fn = a /fn/
function answering a small JSON (--script fn.lua, both with scripts_dir bench/roost-scripts/fn)
vs GET by id (--b-script get.lua), >= 50%.

A is the binary under test (the feed), B the baseline (e.g. a release build of 7403328, the
commit before the feed): git worktree add --detach /tmp/roost-old 7403328 && (cd /tmp/roost-old
&& swift build -c release). Each collection first gets --seed entities (bench/seed.py, 8 threads)
so the creates do not run into an empty table.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no bench/__pycache__ churn from importing benchlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import figures  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="roostd under test")
    ap.add_argument("--b", required=True, help="baseline roostd")
    ap.add_argument("--a-label", default="A")
    ap.add_argument("--b-label", default="B")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--seed", type=int, default=20000)
    ap.add_argument("--port", type=int, default=18380)
    ap.add_argument("--script", default="create.lua", help="bench/lua workload (create.lua: the creates this script is named for)")
    ap.add_argument("--b-script", help="B's workload, when it differs from --script")
    ap.add_argument("--a-yaml", default="", help="configuration lines for A only (e.g. scripts_dir: DIR)")
    ap.add_argument("--b-yaml", default="", help="configuration lines for B only")
    ap.add_argument("--notes", help="a note on the run for its record (build type, the machine's load)")
    ap.add_argument("--out")
    ap.add_argument("--indexes", default="category,n", help="items' indexes, e.g. category,n,location:geo")
    ap.add_argument("--target", choices=("feed", "glue", "script_hook", "script_fn", "none"), default="none",
                    help="the target the run measures, recorded as a figure: feed = the change feed's cost on creates "
                         "(B: without the feed); glue = CPU per request within noise of the commit before (#24)")
    ap.add_argument("--no-record", dest="record", action="store_false",
                    help="do not append the run to bench/results/create_ab.jsonl")
    a = ap.parse_args()
    work = os.path.join(B.OUT, "create_ab")
    servers = {}
    load_before = B.loadavg()
    yaml = {a.a_label: a.a_yaml, a.b_label: a.b_yaml}
    script = {a.a_label: a.script, a.b_label: a.b_script or a.script}
    for k, (label, binary, port) in enumerate(((a.a_label, a.a, a.port), (a.b_label, a.b, a.port + 1))):
        B.require_free(port)
        d = os.path.join(work, "ab%d" % k)
        os.makedirs(d, exist_ok=True)
        indexes = [('"%s"' % i if ":" in i else i) for i in a.indexes.split(",")]
        extra = "".join(line.strip() + "\n" for line in yaml[label].split(";") if line.strip())
        p = B.start_roostd(B.roostd_binary(binary), port, d, {"items": indexes}, extra)
        ver = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
        servers[label] = (p, port, d, ver)
        if a.seed:
            seeded = B.seed_roost("http://127.0.0.1:%d" % port, a.seed, os.path.join(d, "ids.txt"), what="seeding " + label)
            B.log("%s (%s): %s" % (label, ver, seeded))
        else:
            open(os.path.join(d, "ids.txt"), "w").write("x\n")
    pids = [s[0].pid for s in servers.values()]
    hz = os.sysconf("SC_CLK_TCK")
    res = {label: [] for label in servers}
    order = [a.a_label, a.b_label]
    for rnd in range(1, a.rounds + 1):
        for label in (order if rnd % 2 else order[::-1]):
            p, port, d, _ = servers[label]
            B.settle(pids)
            subprocess.run(["sync"], timeout=300)
            cpu0 = B.proc_cpu_ticks(p.pid)
            before = B.machine_ticks()
            r = B.wrk(script[label], "http://127.0.0.1:%d" % port, "roost", os.path.join(d, "ids.txt"),
                      duration=a.duration, raw=os.path.join(work, "wrk-%s-r%d.txt" % (label, rnd)))
            r["steal"] = B.steal_since(before)
            r["cpu_us"] = 1e6 * (B.proc_cpu_ticks(p.pid) - cpu0) / hz / max(1, r["requests"])
            if p.poll() is not None:
                raise SystemExit("%s exited" % label)
            res[label].append(r)
            B.log(script[label] + " round %d %-10s %7.0f req/s  p50 %6.0f us  p99 %7.0f us  non-2xx %d  CPU %.0f us/request  steal %.0f%%"
                  % (rnd, label, r["rps"], r["p50_us"], r["p99_us"], r["status_errors"], r["cpu_us"], r["steal"]))

    title = {"script_hook": "Creates with a trivial Lua before hook vs none (#37)",
             "script_fn": "A Lua /fn/ function vs GET by id (#37)"}.get(a.target, "Creates with the change feed vs before it (#15)")
    workloads = ", ".join("%s: bench/lua/%s%s" % (label, script[label], " with `%s`" % yaml[label] if yaml[label] else "")
                          for label in (a.a_label, a.b_label))
    L = ["### %s: `bench/create_ab.py`, %s" % (title, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())), "",
         "`wrk -t2 -c50 -d%s` (%s) on each binary's `items` (indexes category and n, "
         "%d entities seeded first), %d rounds alternating ABBA, both servers up throughout; best round shown, "
         "median beside it. Load average before: %s." % (a.duration, workloads, a.seed, a.rounds, load_before), "",
         "| binary | best creates/s | median | rounds | p50 µs (best) | p99 µs (best) | server CPU µs/create (median) | steal (best round) |",
         "|---|---:|---:|---|---:|---:|---:|---:|"]
    summary = {}
    for label, rs in res.items():
        b = max(rs, key=lambda r: r["rps"])
        med = statistics.median(r["rps"] for r in rs)
        cpu = statistics.median(r["cpu_us"] for r in rs)
        summary[label] = (b["rps"], med, cpu)
        L.append("| %s (%s) | %.0f | %.0f | %s | %.0f | %.0f | %.0f | %.0f%% |"
                 % (label, servers[label][3], b["rps"], med, ", ".join("%.0f" % r["rps"] for r in rs),
                    b["p50_us"], b["p99_us"], cpu, b["steal"]))
    A, Bb = summary[a.a_label], summary[a.b_label]
    cost_best = 100 * (1 - A[0] / Bb[0])
    cost_med = 100 * (1 - A[1] / Bb[1])
    cpu_more = 100 * (A[2] / Bb[2] - 1)
    change = "%s vs %s: %+.1f%% requests/s (best rounds; medians %+.1f%%), CPU per request %+.1f%%." % (
        a.a_label, a.b_label, -cost_best, -cost_med, cpu_more)
    ratio_best, ratio_med = A[0] / Bb[0], A[1] / Bb[1]
    verdict = {"feed": "met" if cost_best <= 10 else "missed",
               "glue": "met" if cpu_more <= 5 else "missed",
               "script_hook": "met" if ratio_best >= 0.85 else "missed",
               "script_fn": "met" if ratio_best >= 0.50 else "missed"}.get(a.target, "not judged")
    if a.target != "none":
        goal = {"feed": "the feed costs ≤ 10%", "glue": "CPU per request at most +5% (less is better)",
                "script_hook": "A ≥ 85% of B", "script_fn": "A ≥ 50% of B"}[a.target]
        change += " A/B = %.2f (best rounds), %.2f (medians). Target (%s): **%s**." % (ratio_best, ratio_med, goal, verdict)
    L += ["", change]
    metrics = {label: {"version": servers[label][3], "best_rps": round(s[0]), "median_rps": round(s[1]),
                       "cpu_us_per_create": round(s[2], 1), "rounds": [round(r["rps"]) for r in res[label]]}
               for label, s in summary.items()}
    B.publish("create_ab", "\n".join(L) + "\n", a.out, a.record, metrics,
        [{"target": a.target, "measured": "%+.1f%% requests/s (best), %+.1f%% CPU per request"
          % (-cost_best, cpu_more), "verdict": verdict}],
        figures.create_ab(metrics, a.target, a.script), load_before, a.notes)
    return verdict


if __name__ == "__main__":
    main()
