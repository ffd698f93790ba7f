"""An APNs stand-in for bench/push.py made of nginx (HTTP/2 over TLS, one
worker), so that the benchmark measures roostd and not the stand-in: the
Python stand-ins (bench/push_standin.py, tests/python/push_support.py) spend
about half a millisecond of CPU on each request and were the limit near
1,600 notifications/s.

What nginx checks on every request, answering as Apple would (a refused
request is logged with its status and counted as refused):
  - HTTP/2 only (ALPN h2; the log keeps the protocol), `POST /3/device/<hex>`
    (405 otherwise, 400 for a device token that is not hex);
  - `authorization: bearer <a three-part JWT>` (403);
  - `apns-topic` the app's (400), `apns-push-type` one of Apple's types,
    `apns-priority` 5 or 10, `apns-expiration` digits (400);
  - a payload of at most 4,096 bytes (413 PayloadTooLarge).
What nginx cannot check is checked from its access log after the run: every
distinct provider token once (ES256 signature with the key's public half,
`alg`, `kid`, `iss`, `iat` within the hour, as push_standin.Checker does),
and a connection's token changing at most once per 20 minutes. The JSON
payload itself is checked by the full stand-in in tests/python/test_push*.py.
"""
import os
import shutil
import subprocess
import time
from pathlib import Path

LOG_FORMAT = '$msec $status $server_protocol $connection $http_authorization'
PUSH_TYPES = "alert|background|voip|complication|fileprovider|mdm|location|liveactivity|pushtotalk"


def nginx_conf(tmp, port, cert, key, topic):
    tmp = Path(tmp)
    # As root, the worker runs as root too, so it may connect to the master's unix socket.
    user = "user root;" if os.geteuid() == 0 else ""
    return f"""
worker_processes 1;
{user}
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    log_format apns '{LOG_FORMAT}';
    access_log {tmp}/apns-access.log apns buffer=256k flush=200ms;
    client_body_temp_path {tmp}/nginx-body;
    client_max_body_size 4096;
    client_body_buffer_size 8k;
    keepalive_requests 100000000;
    keepalive_timeout 600s;
    http2_max_concurrent_streams 1000;
    map $http_apns_topic $bad_topic {{ "{topic}" 0; default 1; }}
    server {{
        listen 127.0.0.1:{port} ssl http2;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        ssl_protocols TLSv1.2 TLSv1.3;
        location ~ "^/3/device/[0-9a-fA-F]+$" {{
            if ($request_method != POST) {{ return 405; }}
            if ($http_authorization !~ "^bearer [A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$") {{ return 403; }}
            if ($bad_topic) {{ return 400; }}
            if ($http_apns_push_type !~ "^({PUSH_TYPES})$") {{ return 400; }}
            if ($http_apns_priority !~ "^(5|10)$") {{ return 400; }}
            if ($http_apns_expiration !~ "^[0-9]+$") {{ return 400; }}
            # Answered at once: roostd writes a request's HEADERS and DATA together,
            # so nginx has the whole body when it answers. (A server that answered
            # before the body came would reset the stream; roostd would count the
            # push failed and send it again, and bench/push.py fails on any push
            # not answered exactly once.) The earlier proxy hop to a second server,
            # there for libcurl's split writes, doubled the stand-in's CPU per push.
            return 200;
        }}
        location / {{ return 400; }}
    }}
}}
"""


class NginxStandin:
    """nginx serving the APNs stand-in on `port` until stop()."""

    def __init__(self, tmp, port, cert, key, topic, idle_priority=os.environ.get("PUSH_STANDIN_IDLE", "1") == "1"):
        if not shutil.which("nginx"):
            raise RuntimeError("nginx is not installed (make deps installs it)")
        self.dir = Path(tmp) / "nginx"
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "nginx-body").mkdir(exist_ok=True)
        os.chmod(self.dir, 0o777)
        self.log = self.dir / "apns-access.log"
        conf = self.dir / "nginx.conf"
        conf.write_text(nginx_conf(self.dir, port, cert, key, topic))
        # The stand-in is Apple's server on another machine: it takes only CPU
        # roostd and the GET client leave (SCHED_IDLE), like bench/accounts.py's SMTP sink.
        argv = (["chrt", "-i", "0"] if idle_priority else []) + ["nginx", "-c", str(conf), "-p", str(self.dir)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.port = port
        deadline = time.monotonic() + 10
        import socket
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("nginx did not start: %s" % self.proc.stderr.read().decode())
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nginx did not listen on %d" % port)

    def pids(self):
        """The master's and its worker's pids (for CPU accounting)."""
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True).stdout.split()
        return [self.proc.pid] + [int(p) for p in out]

    def entries(self):
        """The access log's lines so far: (msec, status, protocol, connection, authorization)."""
        if not self.log.exists():
            return []
        rows = []
        for line in self.log.read_text().splitlines():
            parts = line.split(" ", 4)
            if len(parts) == 5:
                rows.append((float(parts[0]), int(parts[1]), parts[2], parts[3], parts[4]))
        return rows

    def requests(self):
        """Requests logged so far, counted from where the last call stopped (cheap to poll)."""
        if not self.log.exists():
            return 0
        with open(self.log, "rb") as f:
            f.seek(getattr(self, "_counted_to", 0))
            chunk = f.read()
        complete = chunk.rfind(b"\n") + 1
        self._counted_to = getattr(self, "_counted_to", 0) + complete
        self._counted = getattr(self, "_counted", 0) + chunk.count(b"\n", 0, complete)
        return self._counted

    def stats(self, checker):
        """What push_standin.py's stats file says, from the log, with the provider tokens verified now."""
        rows = self.entries()
        refused, reasons, tokens, per_conn = 0, [], set(), {}
        for msec, status, protocol, conn, auth in rows:
            reason = None
            if protocol != "HTTP/2.0":
                reason = "not HTTP/2 (%s)" % protocol
            elif status != 200:
                reason = {403: "MissingProviderToken", 405: "MethodNotAllowed", 413: "PayloadTooLarge"}.get(status, "status %d" % status)
            else:
                token = auth[len("bearer "):]
                tokens.add(token)
                ok, iat = checker.provider_token(token)
                if not ok:
                    reason = "InvalidProviderToken"
                elif abs(msec - iat) > 3600:
                    reason = "ExpiredProviderToken"
                else:
                    since = per_conn.get(conn)
                    if since and since[1] != token and msec - since[0] < 1200:
                        reason = "TooManyProviderTokenUpdates"
                    elif not since or since[1] != token:
                        per_conn[conn] = (msec, token)
            if reason:
                refused += 1
                if len(reasons) < 20:
                    reasons.append(reason)
        return {"requests": len(rows), "ok": len(rows) - refused, "refused": refused, "reasons": reasons,
                "connections": len({r[3] for r in rows}), "tokens": len(tokens),
                "first": rows[0][0] if rows else None, "last": rows[-1][0] if rows else None}

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
