"""The hostile drill's slowloris part: many slow clients, and /healthz keeps
answering."""

import socket
import threading
import time

from roost_harness import one_request

from .common import percentile


# --------------------------------------------------------------------------- slowloris

def run_slowloris(daemon, connections=300, seconds=20.0, probe_interval=0.02, slow_threshold=1.0, log=print):
    """`connections` sockets each send a GET's headers one byte at a time (a
    round every 0.1 s) for `seconds`, while /healthz is probed on fresh
    connections. The slow clients come from 127.0.0.3 and the probes from
    127.0.0.1: the daemon's `max_connections_per_address` (256) refuses the
    attacker's connections past it and `header_timeout` (10 s) closes the
    slow ones, without touching other clients. Returns the p50/p99/max
    latency of the probes."""
    request = (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slowloris-drill\r\n"
               + b"".join(b"X-Slow-%d: %s\r\n" % (i, b"z" * 20) for i in range(200)))
    socks, opened_fail = [], 0
    for _ in range(connections):
        try:
            s = socket.create_connection(("127.0.0.1", daemon.port), timeout=2, source_address=("127.0.0.3", 0))
            s.setblocking(False)
            socks.append([s, 0])
        except OSError:
            opened_fail += 1
    latencies, probe_failures = [], []
    stop = threading.Event()

    def probe():
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                r = one_request(daemon.port, "GET", "/healthz", timeout=5)
                dt = time.monotonic() - t0
                if r.status != 200:
                    probe_failures.append(f"status {r.status}")
                latencies.append(dt)
                if dt > slow_threshold:
                    probe_failures.append(f"slow probe {dt:.2f} s")
            except OSError as e:
                probe_failures.append(f"{type(e).__name__}: {e}")
                latencies.append(time.monotonic() - t0)
            time.sleep(probe_interval)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    dropped = 0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and socks:
            for entry in list(socks):
                s, pos = entry
                try:
                    if pos < len(request):
                        s.send(request[pos:pos + 1])
                        entry[1] += 1
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    dropped += 1
                    socks.remove(entry)
                    s.close()
            time.sleep(0.1)
    finally:
        stop.set()
        prober.join(timeout=10)
        held = len(socks)
        for s, _ in socks:
            s.close()
    alive = daemon.alive() and daemon.healthy(timeout=5)
    p50, p99 = percentile(latencies, 50) * 1000, percentile(latencies, 99) * 1000
    mx = max(latencies) * 1000 if latencies else float("nan")
    failures = len(probe_failures) + (0 if alive else 1)
    line = (f"slowloris: {connections} slow connections for {seconds:.0f} s ({held} still held at the end, "
            f"{dropped} closed by the server, {opened_fail} refused), {len(latencies)} /healthz probes: "
            f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {mx:.1f} ms; {failures} failures, 0 lost")
    return {"line": line, "p50_ms": p50, "p99_ms": p99, "max_ms": mx, "probes": len(latencies),
            "failures": probe_failures + ([] if alive else ["daemon not healthy after the attack"]), "held": held,
            "dropped": dropped}
