#!/usr/bin/env python3
"""Accounts (issue #38), two measurements, same run:

1. `signin`: ID-token sign-ins (`POST /auth/idtoken`, RS256 tokens from a local OIDC issuer, each
   used once, for 64 linked accounts) vs password log-ins (`POST /login`, Argon2id at the default
   `password_cost`), ABBA rounds of wrk -t2 -c32. Target: ID-token ≥ 5× the log-in rate (no
   Argon2 on that path).
2. `mail`: 1,000 verification mails requested at once (`POST /auth/verify-email/request` for
   1,000 unverified accounts, 8 client threads, each request from its own X-Forwarded-For
   address) while one keep-alive client GETs a document without pause: GET latency in the
   seconds before vs during the burst, and every mail delivered to a local SMTP sink (aiosmtpd)
   through the outbox. Targets: GET p99 during ≤ 1.5× before (and ≤ 50 ms); 1,000 of 1,000 delivered.

  bench/accounts.py [--roostd .build/release/roostd] [--rounds 2] [--duration 8s] [--tokens 120000]
                    [--mails 1000] [--port 18297]
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# bench/ (benchlib) and tests/python (the SMTP and OIDC stand-ins) on the path.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE] + [HERE, os.path.join(HERE, "..", "tests", "python")]
sys.dont_write_bytecode = True

import argparse  # noqa: E402
import http.client  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import statistics  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import benchlib as B  # noqa: E402
import benchstats  # noqa: E402
from mail_support import MailBox  # noqa: E402  (aiosmtpd, as the tests use)
from oidc_support import Issuer  # noqa: E402  (PyJWT-signed tokens, as the tests use)

TOKEN = "a" * 40
PASSWORD = "bench-password-123"
NONCE = "bench-nonce"
SUBJECTS = 64
HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer " + TOKEN}


def call(port, method, path, body=None, headers=None):
    c = B.conn(port)
    c.request(method, path, json.dumps(body) if body is not None else None, headers or {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, (json.loads(data) if data else None)


def start(binary, work, port, config):
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "roost.yaml"), "w") as f:
        f.write(config)
    proc = B.spawn([binary, "serve", "--listen", "127.0.0.1:%d" % port, "--data-dir", os.path.join(work, "data"),
                    "--config", os.path.join(work, "roost.yaml")], os.path.join(work, "roostd.log"))
    B.wait_http(port, "/healthz", proc, "roostd")
    return proc


# ---------------------------------------------------------------- 1. sign-in rates
def signin(a, binary, work):
    issuer = Issuer()
    config = ("log_level: warning\nadmin_token: %s\n%s\n" % (TOKEN, B.NO_RATE_LIMITS)
              + "oidc_providers:\n  acme: {issuer: '%s', jwks_url: '%s/jwks', client_ids: [com.example.bench]}\n" % (issuer.url, issuer.url))
    proc = start(binary, os.path.join(work, "signin"), a.port, config)
    url = "http://127.0.0.1:%d" % a.port
    try:
        for k in range(8):
            status, body = call(a.port, "POST", "/users", {"username": "bench%d" % k, "password": PASSWORD})
            assert status == 201, body
        # The accounts the tokens sign in to, linked by a first sign-in each.
        for s in range(SUBJECTS):
            status, body = call(a.port, "POST", "/auth/idtoken", {"provider": "acme", "nonce": NONCE,
                                                                   "id_token": issuer.token(sub="bench-%d" % s, aud="com.example.bench", nonce=NONCE)})
            assert status == 201, body
        B.log("minting %d ID tokens" % a.tokens)
        per_round = a.tokens // a.rounds
        files = []
        for r in range(a.rounds):
            files.append(os.path.join(work, "idtokens-%d.txt" % r))
            with open(files[-1], "w") as f:
                for i in range(per_round):
                    f.write(issuer.token(sub="bench-%d" % (i % SUBJECTS), aud="com.example.bench", nonce=NONCE, exp_in=3600) + "\n")
        rates = {"idtoken": [], "login": []}
        for r in range(a.rounds):
            for side in (("idtoken", "login") if r % 2 == 0 else ("login", "idtoken")):
                B.settle([proc.pid])
                if side == "login":
                    res = B.wrk("login.lua", url, "roost", "/dev/null", duration=a.duration, conns=32, env={"BENCH_USERS": "8"})
                else:
                    # Each round its own tokens (a used one is refused: 401), a slice per wrk thread.
                    res = B.wrk("idtoken.lua", url, "roost", files[r], duration=a.duration, conns=32,
                                env={"BENCH_THREADS": "2", "BENCH_NONCE": NONCE})
                    if res["status_errors"] > 0:
                        B.log("round %d: %d refused sign-ins: the tokens ran out, raise --tokens" % (r, res["status_errors"]))
                ok = res.get("ok", res["rps"] * res["duration_us"] / 1e6)
                rate = ok / (res["duration_us"] / 1e6)
                rates[side].append(rate)
                B.log("round %d %-7s %8.0f sign-ins/s (p99 %.1f ms, %d status errors)" % (r, side, rate, res["p99_us"] / 1000, res["status_errors"]))
        return statistics.median(rates["idtoken"]), statistics.median(rates["login"]), rates
    finally:
        B.stop(proc)
        issuer.stop()


# ---------------------------------------------------------------- 2. a burst of verification mails
class Getter:
    """One keep-alive client GETting a document without pause, in a process of its own (the SMTP
    sink's thread in this process would otherwise hold the GIL between a GET and its timing);
    each completion's time (CLOCK_MONOTONIC, shared by processes) and latency."""

    def __init__(self, port, path, token):
        self.port, self.path, self.token = port, path, token
        self.done = []
        self.stop = multiprocessing.Event()
        self._ours, self._theirs = multiprocessing.Pipe()
        self._process = multiprocessing.Process(target=self._run, daemon=True)

    def _run(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Authorization": "Bearer " + self.token}
        done = []
        while not self.stop.is_set():
            t0 = time.monotonic()
            c.request("GET", self.path, headers=headers)
            r = c.getresponse()
            r.read()
            t1 = time.monotonic()
            assert r.status == 200, r.status
            done.append((t1, t1 - t0))
        self._theirs.send(done)

    def start(self):
        self._process.start()

    def finish(self):
        self.stop.set()
        self.done = self._ours.recv()
        self._process.join()

    def window(self, t0, t1):
        lat = sorted(l for t, l in self.done if t0 <= t < t1)
        if not lat:
            return {"n": 0, "p50_ms": 0, "p99_ms": 0, "max_ms": 0}
        return {"n": len(lat), "p50_ms": lat[len(lat) // 2] * 1000, "p99_ms": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000,
                "max_ms": lat[-1] * 1000}


class NicedSink:
    """The SMTP sink (aiosmtpd, as the tests use) in a process of its own under SCHED_IDLE: it stands
    for a mail server elsewhere, so its parsing should not take the cores from roostd first.
    `count()` is how many recipients it has received; `clear()` starts counting again."""

    def __init__(self):
        self._ours, theirs = multiprocessing.Pipe()
        self._process = multiprocessing.Process(target=NicedSink._serve, args=(theirs,), daemon=True)
        self._process.start()
        self.port = self._ours.recv()

    @staticmethod
    def _serve(pipe):
        # SCHED_IDLE: the sink runs only on a core nothing else wants. nice 19 was not enough: the
        # Python SMTP server (parsing every mail) still took time slices from roostd and the GET
        # client, which a mail server on another machine would not.
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        box = MailBox().start()
        pipe.send(box.port)
        while True:
            command = pipe.recv()
            if command == "stop":
                box.stop()
                pipe.send(True)
                return
            if command == "clear":
                box.mails.clear()
            pipe.send(sorted({r for m in box.mails for r in m.rcpt}) if command == "recipients" else len(box.mails))

    def count(self):
        self._ours.send("count")
        return self._ours.recv()

    def clear(self):
        self._ours.send("clear")
        self._ours.recv()

    def recipients(self):
        self._ours.send("recipients")
        return set(self._ours.recv())

    def stop(self):
        self._ours.send("stop")
        self._ours.recv()
        self._process.join()


def mail_burst(a, binary, work):
    box = NicedSink()
    config = ("log_level: warning\nadmin_token: %s\n%s\npassword_cost: interactive\n" % (TOKEN, B.NO_RATE_LIMITS)
              + "trusted_proxies: [127.0.0.1]\nsignup_requires: either\n"
              + "smtp_url: smtp://127.0.0.1:%d\nsmtp_tls: off\nsmtp_from: bench@example.org\n" % box.port)
    port = a.port + 1
    proc = start(binary, os.path.join(work, "mail"), port, config)
    try:
        B.log("signing up %d accounts by email" % a.mails)
        addresses = ["bench%d@example.org" % i for i in range(a.mails)]

        def sign_up(chunk):
            c = B.conn(port)
            for i, address in chunk:
                c.request("POST", "/users", json.dumps({"email": address, "password": PASSWORD}),
                          {"Content-Type": "application/json", "X-Forwarded-For": "10.1.%d.%d" % (i // 250, i % 250 + 1)})
                r = c.getresponse()
                body = r.read()
                assert r.status == 201, body[:300]
            c.close()
        indexed = list(enumerate(addresses))
        B.run_threads([lambda k=k: sign_up(indexed[k::4]) for k in range(4)])
        deadline = time.monotonic() + 300
        while box.count() < a.mails:  # the sign-ups' own mails, before measuring
            assert time.monotonic() < deadline, "sign-up mails not delivered: %d" % box.count()
            time.sleep(0.2)
        box.clear()
        status, doc = call(port, "POST", "/things", {"n": 1}, HEADERS)
        assert status == 201, doc
        getter = Getter(port, "/things/" + doc["_id"], TOKEN)
        getter.start()
        time.sleep(1)
        before0 = time.monotonic()
        time.sleep(a.quiet)
        before1 = time.monotonic()

        def request(chunk):
            c = B.conn(port)
            for i, address in chunk:
                c.request("POST", "/auth/verify-email/request", json.dumps({"email": address}),
                          {"Content-Type": "application/json", "X-Forwarded-For": "10.2.%d.%d" % (i // 250, i % 250 + 1)})
                r = c.getresponse()
                body = r.read()
                assert r.status == 202, body[:300]
            c.close()
        burst0 = time.monotonic()
        B.run_threads([lambda k=k: request(indexed[k::8]) for k in range(8)])
        answered = time.monotonic()
        deadline = answered + 300
        while box.count() < a.mails and time.monotonic() < deadline:
            time.sleep(0.05)
        delivered_at = time.monotonic()
        getter.finish()
        received = box.recipients()
        return {"before": getter.window(before0, before1), "during": getter.window(answered, delivered_at),
                "requests": getter.window(burst0, answered),
                "requests_s": answered - burst0, "delivery_s": delivered_at - burst0,
                "delivered": len(received & set(addresses)), "mails": a.mails}
    finally:
        B.stop(proc)
        box.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roostd")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--duration", default="8s")
    ap.add_argument("--tokens", type=int, default=120000)
    ap.add_argument("--mails", type=int, default=1000)
    ap.add_argument("--quiet", type=float, default=5.0, help="seconds of GETs measured before the burst")
    ap.add_argument("--port", type=int, default=18297)
    ap.add_argument("--no-record", dest="record", action="store_false")
    a = ap.parse_args()
    binary = B.roostd_binary(a.roostd)
    B.require_free(a.port, a.port + 1)
    work = B.workdir("accounts", fresh=True)
    load = B.loadavg()
    idtoken, login, rates = signin(a, binary, work)
    mail = mail_burst(a, binary, work)
    ratio = idtoken / login if login else 0
    before, during = mail["before"], mail["during"]
    p99_ratio = during["p99_ms"] / before["p99_ms"] if before["p99_ms"] else 0
    text = "\n".join([
        "### Accounts (#38): `bench/accounts.py`, %s" % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "",
        "`%s`; load average before: %s." % (os.path.relpath(binary, B.ROOT), load),
        "",
        "| measurement | value | compared with | ratio | target |",
        "|---|---:|---:|---:|---|",
        "| ID-token sign-ins/s (RS256, wrk -c32, %d rounds ABBA, medians) | %.0f | %.0f password log-ins/s | %.1f | ≥ 5 |" % (a.rounds, idtoken, login, ratio),
        "| GET p99 while the outbox sends the %d mails | %.1f ms | %.1f ms before | %.2f | ≤ 1.5× and ≤ 50 ms |" % (mail["mails"], during["p99_ms"], before["p99_ms"], p99_ratio),
        "| GET p50 while it sends / before | %.1f ms | %.1f ms | | |" % (during["p50_ms"], before["p50_ms"]),
        "| GET p99 / p50 while the %d requests arrive (for reference) | %.1f ms / %.1f ms | | | |" % (mail["mails"], mail["requests"]["p99_ms"], mail["requests"]["p50_ms"]),
        "| mails delivered to the SMTP sink | %d | %d requested | | all |" % (mail["delivered"], mail["mails"]),
        "",
        "The %d requests were answered in %.1f s and every mail delivered %.1f s after the first; the longest GET while the outbox sent took %.1f ms (%.1f ms before)."
        % (mail["mails"], mail["requests_s"], mail["delivery_s"], during["max_ms"], before["max_ms"]),
        "The target is judged while the outbox sends (the mail itself must not slow a request); while the 1,000 requests arrive,",
        "their own writes, the 8 client threads and the SMTP sink share the two cores with the GETs, shown for reference.",
    ]) + "\n"
    print(text)
    if a.record:
        figs = [benchstats.figure("accounts.idtoken_vs_login", round(idtoken, 1), "sign-ins/s", "≥ 5× password log-ins",
                                  "password log-ins/s", round(login, 1), round(ratio, 2)),
                benchstats.figure("accounts.get_p99_during_mail", round(during["p99_ms"], 2), "ms", "≤ 1.5× before, while the outbox sends",
                                  "GET p99 before", round(before["p99_ms"], 2), round(p99_ratio, 2)),
                benchstats.figure("accounts.mails_delivered", mail["delivered"], "mails", "all %d" % mail["mails"])]
        benchstats.record("accounts", {"signin": {"idtoken": idtoken, "login": login, "rounds": rates}, "mail": mail}, [], text, figs, load)


if __name__ == "__main__":
    main()
