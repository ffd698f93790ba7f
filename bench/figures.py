"""The figures each benchmark script records (bench/results/NAME.jsonl, "figures"), built from
the metrics the script measured; bench/report.py's TARGETS table names them by id. One builder a
script, so a run and a re-reading of an old run's metrics give the same figures."""
import statistics

from benchstats import figure

MB = 1e6 / 2**20  # MiB in a MB: the issues state memory and speed targets in MB


def sync(m):
    """sync.py: `_deltaset` vs the faster full refetch of roostd (time, bytes); the empty delta vs GET by id."""
    methods = m["methods"]
    delta = next(v for k, v in methods.items() if k.startswith("roostd _deltaset"))
    full = min((v for k, v in methods.items() if k.startswith("roostd full")), key=lambda v: v["best_s"])
    return [
        figure("sync.delta_time", delta["best_s"], "s", "≥ 20× less time than a full refetch", "roostd full refetch",
               full["best_s"], round(full["best_s"] / max(delta["best_s"], 1e-3), 1)),
        figure("sync.delta_bytes", delta["body_bytes"], "bytes", "≥ 20× fewer bytes than a full refetch",
               "roostd full refetch", full["body_bytes"], round(full["body_bytes"] / delta["body_bytes"], 1)),
        figure("sync.empty_delta", m["empty_delta_rps"], "req/s", "no more cost than a GET by id (≥ 97%)",
               "GET by id", m["get_rps"], round(m["empty_delta_rps"] / m["get_rps"], 3)),
    ]


def create_ab(m, target, script="create.lua"):
    """create_ab.py: binary A (the first in `m`) against B. target "feed": the change feed's cost on creates
    (B without the feed); "glue": CPU per request of a change against the commit before it; else no figure."""
    (a_label, a), (b_label, b) = list(m.items())[:2]
    cost = round(100 * (1 - a["best_rps"] / b["best_rps"]), 1)
    cpu_key = "cpu_us_per_create" if "cpu_us_per_create" in a else "cpu_us_per_request"
    cpu = round(100 * (a[cpu_key] / b[cpu_key] - 1), 1)
    note = "%s vs %s; medians %.0f vs %.0f/s; CPU per request %+.1f%%" % (a_label, b_label, a["median_rps"], b["median_rps"], cpu)
    if target == "feed":
        return [figure("create_ab.feed_cost", cost, "% fewer creates/s (best rounds)", "≤ 10%", b_label,
                       b["best_rps"], round(a["best_rps"] / b["best_rps"], 3), note)]
    if target in ("script_hook", "script_fn"):
        goal = "≥ 85% of creates without scripts" if target == "script_hook" else "≥ 50% of GET by id"
        return [figure("scripts." + target[len("script_"):], a["best_rps"], "req/s (best round)", goal, b_label,
                       b["best_rps"], round(a["best_rps"] / b["best_rps"], 3), note)]
    if target == "glue":
        fid = {"create.lua": "glue.create_cpu", "list.lua": "glue.list_cpu"}.get(script, "glue.get_cpu")
        return [figure(fid, cpu, "% CPU per request (medians)", "at most +5%", b_label + ", CPU µs/request", b[cpu_key],
                       round(a[cpu_key] / b[cpu_key], 3), "%s; best rounds %.0f vs %.0f/s" % (note, a["best_rps"], b["best_rps"]))]
    return []


def https(m):
    """https.py: roostd's TLS keep-alive vs its plain HTTP and vs nginx terminating TLS (medians); handshakes/s."""
    a, b, c = m["a_roostd_tls"], m["b_roostd_plain"], m["c_nginx_tls"]
    out = [figure("https.tls_vs_plain", a["median_rps"], "req/s", "≥ 70% of plain HTTP", "roostd plain HTTP",
                  b["median_rps"], round(a["median_rps"] / b["median_rps"], 3)),
           figure("https.tls_vs_nginx", a["median_rps"], "req/s", "for reference", "nginx TLS → roostd",
                  c["median_rps"], round(a["median_rps"] / c["median_rps"], 3),
                  "server CPU %.0f vs %.0f µs/request" % (a["cpu_us_per_req"], c["cpu_us_per_req"]))]
    if "d_roostd_handshakes" in m:
        d, n = m["d_roostd_handshakes"]["median_rps"], m["d_nginx_handshakes"]["median_rps"]
        out.append(figure("https.handshakes", d, "handshakes/s", "for reference", "nginx", n, round(d / n, 3)))
    return out


def live(m, rate):
    """live.py: delivered events/s vs PocketBase (only at a rate that saturates PocketBase, ≥ 100 writes/s:
    at a lower rate both deliver every event), end-to-end p99 (at < 100 writes/s: unsaturated), idle streams."""
    out = []
    r, p = m.get("roostd"), m.get("PocketBase")
    if r and p and rate >= 100:
        out.append(figure("live.fanout", r["delivered_per_s"], "events/s", "≥ 3× PocketBase", "PocketBase",
                          p["delivered_per_s"], round(r["delivered_per_s"] / max(1, p["delivered_per_s"]), 2),
                          "1,000 subscribers, %g writes/s" % rate))
    if r and rate < 100:
        out.append(figure("live.p99", r.get("best_p99_ms", r["p99_ms"]), "ms", "≤ 50 ms", "PocketBase",
                          p and p.get("best_p99_ms", p["p99_ms"]), None,
                          "end to end, POST included, best round; %g writes/s" % rate))
    idle = m.get("idle_rounds") or []
    if idle:
        settled = "rss_growth_settled_mib" in idle[0]
        key = "rss_growth_settled_mib" if settled else "rss_growth_mib"
        out.append(figure("live.idle_rss", max(x[key] for x in idle), "MiB", "≤ 40 MB more RSS",
                          note="10,000 idle streams, largest round of %d, %s after opening" % (
                              len(idle), "settled" if settled else "2 s")))
    if idle and "get_alone_rps" in idle[0]:
        w, wo = max(x["get_with_streams_rps"] for x in idle), max(x["get_alone_rps"] for x in idle)
        out.append(figure("live.get_with_streams", w, "req/s", "≥ 90% of without", "GET without the streams", wo,
                          round(w / wo, 3), "best with / best without"))
    return out


def backup(m):
    """backup.py: the idle backup's speed (verification included); creates during a backup vs without (medians)."""
    with_ = [r["rps"] for r in m["rounds"] if r["kind"] == "with"]
    without = [r["rps"] for r in m["rounds"] if r["kind"] == "without"]
    return [figure("backup.speed", m["idle_mib_s"], "MiB/s", "≥ 200 MB/s (190.7 MiB/s)",
                   note="%.0f MiB in %.2f s" % (m["backup_bytes"] / 2**20, m["idle_backup_s"])),
            figure("backup.creates_during", statistics.median(with_), "creates/s", "≥ 80% of without",
                   "without a backup", statistics.median(without), round(m["creates_ratio"], 3), "medians")]


def refs(cost_cpu, cost_rate, guarded_cpu, plain_cpu):
    """refs.py: a delete with a restrict check vs one without, the worse of CPU per delete and time per delete (medians)."""
    return [figure("refs.restrict_cost", round(max(cost_cpu, cost_rate), 1), "% more per delete", "≤ 20%",
                   "without a reference check, CPU µs/delete", plain_cpu, round(guarded_cpu / plain_cpu, 3),
                   "CPU %+.1f%%, time %+.1f%% (medians)" % (cost_cpu, cost_rate))]


def s3_files(m):
    """s3_files.py: uploads and GETs of originals with files_store: s3 (moto) against the local store, same run."""
    out = []
    for op, fid in (("upload", "s3.upload"), ("get", "s3.get")):
        s3, local = m["s3"][op + "_rps"], m["local"][op + "_rps"]
        out.append(figure(fid, round(s3, 1), "req/s", "for reference", "local file store", round(local, 1),
                          round(s3 / local, 3), "moto_server (one Python process) as the bucket; %s" % m["build"]))
    return out


def memory(idle_mib, peak_mib, libraries=None):
    """memory.py: idle RSS after start-up and the start-up peak (VmHWM)."""
    note = "%d shared libraries mapped" % libraries if libraries else None
    return [figure("memory.idle_rss", round(idle_mib, 1), "MiB", "≤ 48 MB", note=note),
            figure("memory.startup_peak", round(peak_mib, 1), "MiB", "≤ 64 MB")]


def engines(m):
    """engines.py: roostd on PostgreSQL against PocketBase (best rounds), per workload; SQLite and the
    database's CPU per request in the note."""
    out = []
    for w in ("get", "list", "create", "upload"):
        pg, lite, pb = m[w]["roostd on PostgreSQL"], m[w]["roostd on SQLite"], m[w]["PocketBase"]
        out.append(figure("engines." + w, pg["best_rps"], "req/s", "ahead of PocketBase", "PocketBase (logs off)",
                          pb["best_rps"], round(pg["best_rps"] / pb["best_rps"], 3),
                          "roostd on SQLite %.0f req/s; PostgreSQL's CPU %.0f µs/request" % (
                              lite["best_rps"], pg.get("db_cpu_us", 0))))
    return out
