"""Shared pieces of the reliability drills: a roostd process on a loopback
port and a data directory that outlives it, a small HTTP client, generated
PNGs, the machine description and the RELIABILITY.md summary lines.

Everything here talks to 127.0.0.1 only, and every process a drill starts
is stopped by the drill itself (see `Roostd.close`)."""

import datetime
import http.client
import json
import os
import pathlib
import platform
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.parse
import zlib

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
RELIABILITY = REPO / "RELIABILITY.md"
ADMIN_TOKEN = "drill-admin-token-0123456789abcdef0123456789"


def binary():
    return pathlib.Path(os.environ.get("ROOSTD", str(REPO / ".build" / "debug" / "roostd")))


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def png(width, height, seed):
    """An RGB PNG with a seed-dependent pattern, so sizes and hashes differ."""
    rows = []
    for y in range(height):
        row = bytes(((x * 3 + y * seed + c * 85) & 0xFF) for x in range(width) for c in range(3))
        rows.append(b"\x00" + row)
    return png_from_chunks(width, height, zlib.compress(b"".join(rows), 1))


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_from_chunks(width, height, idat, color_type=2, bit_depth=8):
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", idat)
            + png_chunk(b"IEND", b""))


class Reply:
    __slots__ = ("status", "headers", "body")

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = {k.lower(): v for k, v in headers}
        self.body = body

    def json(self):
        return json.loads(self.body) if self.body else None

    def __repr__(self):
        return f"<{self.status} {self.body[:200]!r}>"


class Client:
    """A keep-alive HTTP/1.1 client for one thread. Any network error
    propagates (the crash drill treats it as 'no answer')."""

    def __init__(self, port, timeout=10.0, token=None):
        self.port = port
        self.timeout = timeout
        self.token = token
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        hdrs = dict(headers or {})
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        if self.token:
            hdrs.setdefault("Authorization", f"Bearer {self.token}")
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        try:
            self.conn.request(method, path, body=body, headers=hdrs)
            resp = self.conn.getresponse()
            reply = Reply(resp.status, resp.getheaders(), resp.read())
        except Exception:
            self.close()
            raise
        if reply.headers.get("connection", "").lower() == "close":
            self.close()
        return reply

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def list_all(port, collection, token=None, page_size=1000):
    """Every document of `collection` the caller may read, paged by _id: a list."""
    client = Client(port, timeout=30, token=token)
    out, skip = [], 0
    try:
        while True:
            q = urllib.parse.urlencode({"limit": page_size, "skip": skip, "sort": json.dumps({"_id": 1})})
            reply = client.request("GET", f"/{collection}?{q}")
            if reply.status != 200:
                raise RuntimeError(f"listing {collection} answered {reply.status}: {reply.body[:200]!r}")
            page = reply.json()
            out.extend(page)
            if len(page) < page_size:
                return out
            skip += page_size
    finally:
        client.close()


def one_request(port, method, path, body=None, headers=None, timeout=10.0):
    c = Client(port, timeout)
    try:
        return c.request(method, path, body, headers)
    finally:
        c.close()


class Roostd:
    """One roostd at a time on a data directory that survives restarts."""

    def __init__(self, workdir, config, env=None):
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.data_dir = self.workdir / "data"
        self.config_path = self.workdir / "roost.yaml"
        self.config_path.write_text(config)
        self.log_path = self.workdir / "roostd.log"
        self.env = env
        self.proc = None
        self.port = None
        self.starts = 0

    def start(self, timeout=30):
        if not binary().exists():
            raise RuntimeError(f"roostd binary not found at {binary()}; run `swift build` or set ROOSTD")
        self.port = free_port()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("NOTIFY_SOCKET", "WATCHDOG_", "LISTEN_", "JOURNAL_STREAM", "ROOST_"))}
        env.update(self.env or {})
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                [str(binary()), "serve", "--listen", f"127.0.0.1:{self.port}", "--data-dir", str(self.data_dir),
                 "--config", str(self.config_path)],
                stdout=log, stderr=subprocess.STDOUT, env=env)
        finally:
            log.close()
        self.starts += 1
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"roostd exited with {self.proc.returncode} at start:\n{self.log_tail()}")
            if self.healthy(timeout=1):
                return self
            time.sleep(0.05)
        self.kill9()
        raise RuntimeError(f"roostd did not answer /healthz within {timeout} s:\n{self.log_tail()}")

    def healthy(self, timeout=2.0):
        try:
            return one_request(self.port, "GET", "/healthz", timeout=timeout).status == 200
        except OSError:
            return False

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()

    def stop(self, timeout=25):
        """SIGTERM and wait; returns the exit code (SIGKILL after `timeout`)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return "killed after SIGTERM timeout"
        return self.proc.returncode

    def close(self):
        if self.alive():
            self.kill9()

    def log_tail(self, lines=40):
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def log_contains(self, needle):
        try:
            return needle in self.log_path.read_text(errors="replace")
        except OSError:
            return False


def machine():
    """One line: cores, memory, CPU model, kernel."""
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {mem}, {model or platform.machine()}, Linux {platform.release()}"


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def append_summary(line):
    """Appends one drill summary line, with date and machine, to RELIABILITY.md."""
    entry = f"- {now_utc()} · {machine()} · `{line}`\n"
    text = RELIABILITY.read_text() if RELIABILITY.exists() else "# Reliability\n\n## Results\n\n"
    if not text.endswith("\n"):
        text += "\n"
    RELIABILITY.write_text(text + entry)


def percentile(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    k = min(len(s) - 1, max(0, int(round(p / 100 * (len(s) - 1)))))
    return s[k]


def print_report(result):
    """Prints a drill's failures and lost writes (first 20 each) to stderr and
    its summary line to stdout; returns the process exit status."""
    for f in result["failures"][:20]:
        print("FAILURE:", f, file=sys.stderr)
    for f in result["lost"][:20]:
        print("LOST:", f, file=sys.stderr)
    print(result["line"])
    return 1 if result["failures"] or result["lost"] else 0
