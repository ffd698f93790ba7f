#!/usr/bin/env python3
"""HTTPS in the daemon (issue #21), one run, on 127.0.0.1 only:

  (a) GET by id, keep-alive, over roostd's own TLS listener
  (b) the same over roostd's plain listener                  target: (a) >= 70% of (b)
  (c) the same through nginx terminating TLS in front of (b)'s listener
      (etc/nginx/roost.conf on loopback: upstream keep-alive, access log off)
  (d) new TLS handshakes per second, roostd's listener vs nginx's: wrk with
      `Connection: close` (each request a new connection and a full handshake:
      wrk never resumes a session), and `openssl s_time -new` (one client,
      sequential full handshakes, no HTTP request)

One roostd (release build) serves (a), (b) and nginx's upstream from the same
data; both servers use one P-256 certificate from a CA this script makes with
openssl. Rounds interleave the cases, each round starting at a different one;
the figure per case is the median of the rounds (best beside it). Server CPU
per request (roostd's, plus nginx's in (c)) is given too: it moves less with
the host's noise than the rate.

  bench/https.py [--roostd .build/release/roostd] [--rounds 3] [--duration 10s] [--conns 32]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no bench/__pycache__ churn from importing benchlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import figures  # noqa: E402

NGINX_EXAMPLE = os.path.join(B.ROOT, "etc", "nginx", "roost.conf")


def openssl(work, *args):
    subprocess.run(["openssl", *args], cwd=work, check=True, capture_output=True, timeout=60)


def make_pki(work):
    """A test CA and a P-256 server certificate for 127.0.0.1/localhost."""
    openssl(work, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "2", "-subj", "/CN=Roost Bench CA")
    openssl(work, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "server.key",
            "-out", "server.csr", "-subj", "/CN=localhost")
    with open(os.path.join(work, "ext.cnf"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    openssl(work, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf")
    return os.path.join(work, "server.pem"), os.path.join(work, "server.key")


def start_roostd(binary, work, plain, tls, cert, key):
    data = os.path.join(work, "roost-data")
    subprocess.run(["rm", "-rf", data], check=True)
    os.makedirs(data)
    cfg = os.path.join(work, "roost.yaml")
    with open(cfg, "w") as f:
        f.write("log_level: info\ntls:\n  certificate: %s\n  key: %s\ntrusted_proxies: [\"127.0.0.1\"]\n"
                "collections:\n  items:\n    permission: public\n    indexes: [category, n]\n" % (cert, key))
    p = B.spawn([binary, "serve", "--listen", "127.0.0.1:%d" % plain, "--listen", "https://127.0.0.1:%d" % tls,
                 "--data-dir", data, "--config", cfg], os.path.join(work, "roostd.log"))
    B.wait_http(plain, "/healthz", p, "roostd")
    return p


def start_nginx(work, upstream, port, http_port, cert, key):
    """etc/nginx/roost.conf with loopback ports and the bench certificate."""
    text = open(NGINX_EXAMPLE).read()
    for old, new in [("server 127.0.0.1:8080;", "server 127.0.0.1:%d;" % upstream),
                     ("listen 80;", "listen 127.0.0.1:%d;" % http_port),
                     ("listen [::]:80;", ""), ("listen 443 ssl http2;", "listen 127.0.0.1:%d ssl http2;" % port),
                     ("listen [::]:443 ssl http2;", ""), ("/etc/letsencrypt/live/example.org/fullchain.pem", cert),
                     ("/etc/letsencrypt/live/example.org/privkey.pem", key), ("server_name example.org;", "server_name localhost;")]:
        if old not in text:
            raise SystemExit("etc/nginx/roost.conf no longer has %r" % old)
        text = text.replace(old, new)
    with open(os.path.join(work, "site.conf"), "w") as f:
        f.write(text)
    temps = "".join("%s_temp_path %s/%s;\n" % (d, work, d) for d in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    for d in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        os.makedirs(os.path.join(work, d), exist_ok=True)
    with open(os.path.join(work, "nginx.conf"), "w") as f:
        f.write("daemon off;\nworker_processes auto;\npid %s/nginx.pid;\nerror_log %s/nginx-error.log;\n"
                "events { worker_connections 1024; }\nhttp {\naccess_log off;\n%sinclude %s/site.conf;\n}\n"
                % (work, work, temps, work))
    p = B.spawn(["nginx", "-p", work, "-c", os.path.join(work, "nginx.conf")], os.path.join(work, "nginx.log"))
    deadline = time.monotonic() + 15
    while B.port_free(port):
        if p.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("nginx did not start: " + open(os.path.join(work, "nginx-error.log")).read()[-500:])
        time.sleep(0.1)
    return p


def s_time(port, seconds):
    """openssl s_time -new: full handshakes per second of one sequential client."""
    out = subprocess.run(["openssl", "s_time", "-connect", "127.0.0.1:%d" % port, "-new", "-time", str(seconds)],
                         capture_output=True, text=True, timeout=seconds + 60).stdout
    m = re.search(r"(\d+) connections in (\d+) real seconds", out)
    if not m:
        raise SystemExit("openssl s_time failed: " + out[-500:])
    return int(m.group(1)) / max(1, int(m.group(2)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roostd", help="default: .build/release/roostd")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--conns", type=int, default=32)
    ap.add_argument("--handshake-conns", type=int, default=16)
    ap.add_argument("--seed", type=int, default=5000)
    ap.add_argument("--port", type=int, default=18480, help="plain; +1 roostd TLS, +2 nginx TLS, +3 nginx plain")
    ap.add_argument("--no-record", dest="record", action="store_false")
    a = ap.parse_args()
    binary = B.roostd_binary(a.roostd)
    plain, tls, ngx = a.port, a.port + 1, a.port + 2
    B.require_free(plain, tls, ngx, a.port + 3)
    work = B.workdir("https")
    B.raise_nofile()
    load_before = B.loadavg()
    cert, key = make_pki(work)
    roost = start_roostd(binary, work, plain, tls, cert, key)
    nginx = start_nginx(work, plain, ngx, a.port + 3, cert, key)
    ids = os.path.join(work, "ids.txt")
    seeded = B.seed_roost("http://127.0.0.1:%d" % plain, a.seed, ids)
    ver = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    nginx_ver = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip().split("/")[-1]
    B.log("roostd %s, nginx %s, %s" % (ver, nginx_ver, seeded))

    close = {"conns": a.handshake_conns, "headers": ["-H", "Connection: close"]}
    cases = {  # name: (url, processes whose CPU counts, wrk options)
        "a_roostd_tls": ("https://127.0.0.1:%d" % tls, [roost], {}),
        "b_roostd_plain": ("http://127.0.0.1:%d" % plain, [roost], {}),
        "c_nginx_tls": ("https://127.0.0.1:%d" % ngx, [roost, nginx], {}),
        "d_roostd_handshakes": ("https://127.0.0.1:%d" % tls, [roost], close),
        "d_nginx_handshakes": ("https://127.0.0.1:%d" % ngx, [roost, nginx], close),
    }
    pids = [roost.pid, nginx.pid]
    for name, (url, _, opt) in cases.items():  # warm-up: 2 s each, not recorded
        wrk(url, ids, "2s", 2, opt.get("conns", a.conns), opt.get("headers", []), None)
    res = {name: [] for name in cases}
    stime = {"roostd": [], "nginx": []}
    names = list(cases)
    for rnd in range(a.rounds):
        for name in names[rnd % len(names):] + names[:rnd % len(names)]:
            url, procs, opt = cases[name]
            B.settle(pids)
            cpu0 = sum(cpu_with_children(p.pid) for p in procs)
            before = B.machine_ticks()
            r = wrk(url, ids, a.duration, 2, opt.get("conns", a.conns), opt.get("headers", []),
                    os.path.join(work, "wrk-%s-r%d.txt" % (name, rnd + 1)))
            r["steal"] = B.steal_since(before)
            r["cpu_us"] = 1e6 * (sum(cpu_with_children(p.pid) for p in procs) - cpu0) / os.sysconf("SC_CLK_TCK") / max(1, r["requests"])
            if roost.poll() is not None or nginx.poll() is not None:
                raise SystemExit("a server exited")
            res[name].append(r)
            B.log("round %d %-20s %8.0f req/s  p50 %6.0f us  p99 %7.0f us  errors %d/%d  CPU %.0f us/req  load %s"
                  % (rnd + 1, name, r["rps"], r["p50_us"], r["p99_us"], r["status_errors"], r["socket_errors"],
                     r["cpu_us"], B.loadavg()))
        for server, port in (("roostd", tls), ("nginx", ngx)):
            B.settle(pids)
            stime[server].append(s_time(port, 5))
            B.log("round %d s_time -new %-6s %6.0f handshakes/s" % (rnd + 1, server, stime[server][-1]))
    load_after = B.loadavg()
    text, metrics, targets = report(a, res, stime, ver, nginx_ver, load_before, load_after)
    print(text)
    if a.record:
        B.record("https", metrics, targets, text, figures.https(metrics), load_before)


def cpu_with_children(pid):
    """User + system ticks of a process plus its live children's (nginx's workers)."""
    total = B.proc_cpu_ticks(pid)
    try:
        for child in open("/proc/%d/task/%d/children" % (pid, pid)).read().split():
            total += B.proc_cpu_ticks(int(child))
    except OSError:
        pass
    return total


def wrk(url, ids, duration, threads, conns, headers, raw):
    return B.wrk("get.lua", url, "roost", ids, duration=duration, threads=threads, conns=conns, raw=raw, args=headers)


def report(a, res, stime, ver, nginx_ver, load_before, load_after):
    med = {n: statistics.median(r["rps"] for r in rs) for n, rs in res.items()}
    best = {n: max(r["rps"] for r in rs) for n, rs in res.items()}
    cpu = {n: statistics.median(r["cpu_us"] for r in rs) for n, rs in res.items()}
    errors = {n: sum(r["status_errors"] + r["socket_errors"] for r in rs) for n, rs in res.items()}
    st = {s: statistics.median(v) for s, v in stime.items()}
    labels = {
        "a_roostd_tls": "(a) roostd TLS, keep-alive", "b_roostd_plain": "(b) roostd plain HTTP, keep-alive",
        "c_nginx_tls": "(c) nginx TLS → roostd plain, keep-alive",
        "d_roostd_handshakes": "(d) roostd TLS, `Connection: close`", "d_nginx_handshakes": "(d) nginx TLS → roostd, `Connection: close`"}
    ratio = 100 * med["a_roostd_tls"] / med["b_roostd_plain"]
    L = ["### HTTPS (#21): `bench/https.py`, %s" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "",
         "Release build (%s), nginx %s with etc/nginx/roost.conf (upstream keep-alive, `worker_processes auto`), one "
         "P-256 certificate for both, %d items seeded; all on 127.0.0.1. GET by id (bench/lua/get.lua), `wrk -t2 "
         "-c%d -d%s` keep-alive, `-c%d -H \"Connection: close\"` for handshakes (wrk resumes no session: every "
         "connection is a full handshake); `openssl s_time -new -time 5` is one sequential client. %d rounds, the "
         "cases interleaved, each round starting at another; **median** of the rounds (best beside it). Server CPU = "
         "roostd's (+ nginx's for nginx) user+system time / requests. Load average before %s, after %s (2 cores "
         "shared with other engineers' builds: the rates are noisy)."
         % (ver, nginx_ver, a.seed, a.conns, a.duration, a.handshake_conns, a.rounds, load_before, load_after), "",
         "| case | median req/s | best | rounds | p99 ms (median) | server CPU µs/req | errors |", "|---|---:|---:|---|---:|---:|---:|"]
    for n, rs in res.items():
        L.append("| %s | %.0f | %.0f | %s | %.1f | %.0f | %d |" % (
            labels[n], med[n], best[n], ", ".join("%.0f" % r["rps"] for r in rs),
            statistics.median(r["p99_us"] for r in rs) / 1000, cpu[n], errors[n]))
    L.append("| `openssl s_time -new`, roostd / nginx (handshakes/s) | %.0f / %.0f | | %s / %s | | | |" % (
        st["roostd"], st["nginx"], ", ".join("%.0f" % v for v in stime["roostd"]), ", ".join("%.0f" % v for v in stime["nginx"])))
    verdict = "met" if ratio >= 70 else "missed"
    L += ["", "(a) is **%.0f%%** of (b) (medians; best rounds %.0f%%): target ≥ 70%%, **%s**. roostd's own TLS is %.0f%% of "
          "nginx-in-front's rate (c), at %.0f vs %.0f µs of server CPU per request. New handshakes: roostd %.0f/s, nginx "
          "%.0f/s with wrk; %.0f vs %.0f/s with s_time." % (
              ratio, 100 * best["a_roostd_tls"] / best["b_roostd_plain"], verdict, 100 * med["a_roostd_tls"] / med["c_nginx_tls"],
              cpu["a_roostd_tls"], cpu["c_nginx_tls"], med["d_roostd_handshakes"], med["d_nginx_handshakes"], st["roostd"], st["nginx"])]
    metrics = {n: {"median_rps": round(med[n]), "best_rps": round(best[n]), "cpu_us_per_req": round(cpu[n], 1), "errors": errors[n],
                   "rounds": [round(r["rps"]) for r in res[n]], "p99_us": [round(r["p99_us"]) for r in res[n]]} for n in res}
    metrics["s_time_new"] = {s: [round(v) for v in vs] for s, vs in stime.items()}
    metrics.update({"roostd": ver, "nginx": nginx_ver, "conns": a.conns, "handshake_conns": a.handshake_conns, "duration": a.duration})
    targets = [{"target": "HTTPS keep-alive ≥ 70% of plain HTTP", "measured": "%.0f%% (medians)" % ratio, "verdict": verdict}]
    return "\n".join(L) + "\n", metrics, targets


if __name__ == "__main__":
    main()
