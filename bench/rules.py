#!/usr/bin/env python3
"""Access rules benchmark (issue #35): a list under a two-clause read rule vs the same list
under the `shared` level, same run, same data.

One roostd, two collections seeded alike (N documents: 100 categories, 90% published, an owner
among 20 users, `category` indexed):
  shared   permission: shared (every signed-in user reads every row: no visibility SQL)
  ruled    permission: shared + rules.read {"$or": [{"published": true}, {"owner": "@caller.id"}]}
Rounds alternate shared/ruled (ABBA); each runs wrk (-t2 -c32) with a signed-in user's token on
two shapes: `plain` (?limit=50) and `category` (an equality filter on the indexed field, 50 a
page, with the total). Per round: requests/s and the server's CPU µs per request. Target: the
plain ruled list ≥ 80% of the shared list (median rates); `category` is for reference (the
caller's filter may look only at rows the rule admits, so every visible row is judged).

  bench/rules.py [--roostd .build/release/roostd] [--n 10000] [--rounds 4] [--duration 8s] [--port 18295]
"""
import argparse
import json
import os
import random
import statistics
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import benchstats  # noqa: E402

RULE = '{"$or": [{"published": true}, {"owner": "@caller.id"}]}'
CONFIG = """log_level: warning
admin_token: %s
%s
collections:
  shared:
    permission: shared
    indexes: [category, published, owner]
  ruled:
    permission: shared
    indexes: [category, published, owner]
    rules:
      read: '%s'
""" % ("r" * 40, B.NO_RATE_LIMITS, RULE)
SHAPES = ("plain", "category")


def signup(port, name):
    c = B.conn(port)
    c.request("POST", "/users", json.dumps({"username": name, "password": "correct horse battery"}), {"Content-Type": "application/json"})
    r = c.getresponse()
    body = json.loads(r.read())
    c.close()
    assert r.status == 201, body
    return body["user"]["_id"], body["token"]


def seed(port, collection, bodies):
    c = B.conn(port)
    headers = {"Content-Type": "application/json", "Authorization": "Bearer " + "r" * 40}
    for start in range(0, len(bodies), 100):
        ops = [{"method": "POST", "path": "/" + collection, "body": b} for b in bodies[start:start + 100]]
        c.request("POST", "/_batch", json.dumps({"operations": ops}), headers)
        r = c.getresponse()
        body = r.read()
        assert r.status == 200, body[:300]
    c.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roostd")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--duration", default="8s")
    ap.add_argument("--port", type=int, default=18295)
    ap.add_argument("--no-record", dest="record", action="store_false")
    a = ap.parse_args()
    binary = B.roostd_binary(a.roostd)
    work = B.workdir("rules", fresh=True)
    with open(os.path.join(work, "roost.yaml"), "w") as f:
        f.write(CONFIG)
    proc = B.spawn([binary, "serve", "--listen", "127.0.0.1:%d" % a.port, "--data-dir", os.path.join(work, "data"),
                    "--config", os.path.join(work, "roost.yaml")], os.path.join(work, "roostd.log"))
    B.wait_http(a.port, "/healthz", proc, "roostd")
    users = [signup(a.port, "user%02d" % i) for i in range(20)]
    rng = random.Random(35)
    bodies = [{"category": "c%d" % rng.randrange(100), "published": rng.random() < 0.9, "owner": rng.choice(users)[0],
               "n": i, "title": "post %d" % i} for i in range(a.n)]
    B.log("seeding %d documents in each of shared, ruled" % a.n)
    for collection in ("shared", "ruled"):
        seed(a.port, collection, bodies)
    token = users[0][1]
    load = B.loadavg()
    results = {(side, shape): [] for side in ("shared", "ruled") for shape in SHAPES}
    url = "http://127.0.0.1:%d" % a.port
    # Shape by shape: a slow `category` read puts its client on the slow lane for a while
    # (read_slice_ms), which must not fall on the next shape's rounds.
    for shape in SHAPES:
        for r in range(a.rounds):
            for side in (("shared", "ruled") if r % 2 == 0 else ("ruled", "shared")):
                B.settle([proc.pid])
                cpu0 = B.proc_cpu_ticks(proc.pid)
                res = B.wrk("rules_list.lua", url, "roost", "/dev/null", duration=a.duration, conns=32, collection=side,
                            env={"BENCH_SHAPE": shape}, args=("-H", "Authorization: Bearer " + token))
                cpu = (B.proc_cpu_ticks(proc.pid) - cpu0) / os.sysconf("SC_CLK_TCK")
                row = {"rps": res["rps"], "cpu_us": cpu * 1e6 / max(res["requests"], 1), "errors": res["status_errors"]}
                results[(side, shape)].append(row)
                B.log("round %d %-8s %-6s %8.0f req/s %6.1f µs CPU/req  errors %d" % (r, shape, side, row["rps"], row["cpu_us"], row["errors"]))
    B.stop(proc)
    lines = ["### A list under a two-clause read rule vs the `shared` level (#35): `bench/rules.py`, %s" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
             "",
             "`%s`, %d rounds ABBA of wrk -t2 -c32 for %s a side, one signed-in user's token; %d documents a collection "
             "(90%% published, 100 categories; `category`, `published` and `owner` indexed in both: the rule's fields are tested through their index); rule `%s`. Load average before: %s." % (
                 os.path.relpath(binary, B.ROOT), a.rounds, a.duration, a.n, RULE, load),
             "",
             "| shape | shared req/s (median) | ruled req/s (median) | ratio | shared CPU µs/req | ruled CPU µs/req |",
             "|---|---:|---:|---:|---:|---:|"]
    figs, metrics = [], {}
    for shape in SHAPES:
        s = statistics.median(x["rps"] for x in results[("shared", shape)])
        t = statistics.median(x["rps"] for x in results[("ruled", shape)])
        sc = statistics.median(x["cpu_us"] for x in results[("shared", shape)])
        tc = statistics.median(x["cpu_us"] for x in results[("ruled", shape)])
        ratio = t / s
        metrics[shape] = {"shared_rps": s, "ruled_rps": t, "shared_cpu_us": sc, "ruled_cpu_us": tc}
        lines.append("| %s | %.0f | %.0f | %.2f | %.1f | %.1f |" % (shape, s, t, ratio, sc, tc))
        target = "≥ 80% of the shared list" if shape == "plain" else "for reference (no-oracle guarantee: every visible row is judged)"
        figs.append(benchstats.figure("rules.list_%s" % shape, round(t, 1), "req/s", target, "the same list under shared",
                                      round(s, 1), round(ratio, 3), "CPU µs/req %.1f vs %.1f (medians)" % (tc, sc)))
    text = "\n".join(lines) + "\n"
    print(text)
    if a.record:
        benchstats.record("rules", metrics, [], text, figs, load)


if __name__ == "__main__":
    main()
