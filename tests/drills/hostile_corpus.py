"""The hostile drill's corpus part: every corpus case sent, each answer checked
against the error contract (no 5xx, no crash)."""

import http.client
import json
import select
import socket
import time

from roost_harness import Response, one_request, png

from .hostile_corpus_cases import COLLECTION, WIRE_CASES, corpus_cases


def _raw_exchange(port, data, timeout=5.0):
    """Sends raw bytes; returns the status of the first answer, or None when the server closed without one."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(data)
        except OSError:
            pass
        buf = b""
        deadline = time.monotonic() + timeout
        while b"\r\n" not in buf and time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    line = buf.split(b"\r\n", 1)[0].split()
    if len(line) >= 2 and line[0].startswith(b"HTTP/") and line[1].isdigit():
        return int(line[1])
    return None


def _big_request(port, method, path, headers, body, timeout=30.0):
    """Sends the headers and as much of `body` as the server reads, then reads the
    answer: a server may answer 413 and close before the whole body is sent."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        s.sendall(head.encode())
        view, sent = memoryview(body), 0
        while sent < len(body):
            r, w, _ = select.select([s], [s], [], timeout)
            if r:
                break  # the server answered early
            if not w:
                break
            try:
                sent += s.send(view[sent:sent + 65536])
            except OSError:
                break
        resp = http.client.HTTPResponse(s)
        resp.begin()
        return Response(resp.status, resp.getheaders(), resp.read())
    finally:
        s.close()


def _contract(reply):
    """README: every response carries X-Request-Id; errors are JSON {error, description}."""
    problems = []
    if "x-request-id" not in reply.headers:
        problems.append("no X-Request-Id")
    if reply.status >= 400:
        try:
            body = json.loads(reply.raw)
            if not (isinstance(body, dict) and set(body) == {"error", "description"}):
                problems.append(f"error body {reply.raw[:80]!r}")
        except ValueError:
            problems.append(f"error body is not JSON ({reply.headers.get('content-type')}: {reply.raw[:60]!r})")
    return problems


def run_corpus(daemon, seed=1, log=print):
    cases = corpus_cases(seed)
    server_errors, unexpected, contract, leaks, no_answer = [], [], [], [], []
    # Something real to hit: a document and a file for the range cases.
    one_request(daemon.port, "POST", f"/{COLLECTION}", {"_id": "deep", "a": 1})
    up = one_request(daemon.port, "POST", "/files", png(32, 32, 3), {"Content-Type": "image/png"})
    fid = up.json()["_id"]
    for rng_header in ("bytes=-0", "bytes=0--1", "bytes=99999999999999999999999-", "bytes=1-0", "bytes=0-0,1-1",
                       "bytes=-99999999999999999999", "bytes=" + "0-" * 1000, "pages=1-2", "bytes=\x00"):
        for url in (f"/files/{fid}", f"/files/{fid}/thumbnail?size=16"):
            # A control character in any header value is refused before routing (issue 33).
            allowed = {400} if "\x00" in rng_header else {200, 206, 416}
            cases.append((f"range {rng_header[:30]} {url[-10:]}", "GET", url, {"Range": rng_header}, None, allowed))
    tried = 0
    for name, method, path, headers, body, allowed in cases:
        tried += 1
        try:
            if body is not None and len(body) > (8 << 20):
                reply = _big_request(daemon.port, method, path, headers, body)
            else:
                reply = one_request(daemon.port, method, path, body, headers, timeout=30)
        except (OSError, ValueError) as e:
            if not daemon.alive():
                break
            no_answer.append(f"{name}: {type(e).__name__}: {e}")
            continue
        if reply.status >= 500:
            server_errors.append(f"{name}: {method} {path[:80]} -> {reply.status} {reply.raw[:120]!r}")
        elif allowed is not None and reply.status not in allowed:
            unexpected.append(f"{name}: {reply.status} not in {sorted(allowed)}: {reply.raw[:120]!r}")
        elif allowed is None and not (400 <= reply.status < 500):
            unexpected.append(f"{name}: {method} {path[:80]} answered {reply.status}, expected a 4xx")
        for p in _contract(reply):
            contract.append(f"{name}: {reply.status} {p}")
        if name == "sqlite-master-is-just-a-name" and reply.raw.strip() != b"[]":
            leaks.append(f"{name}: /sqlite_master answered {reply.raw[:100]!r}")
        if b"root:x:" in reply.raw or b"SQLite format" in reply.raw:
            leaks.append(f"{name}: response leaks file contents")
        if name in ("image-svg-script", "image-html-script") and reply.status == 201:
            served = one_request(daemon.port, "GET", f"/files/{reply.json()['_id']}")
            h = served.headers
            if not (h.get("content-disposition", "").startswith("attachment") and "sandbox" in h.get("content-security-policy", "")
                    and h.get("x-content-type-options") == "nosniff"):
                leaks.append(f"{name}: active content served without attachment/CSP/nosniff: {h}")
        if name == "image-multipart-traversal-name" and reply.status == 201:
            if (daemon.data_dir.parent / "etc").exists() or not (daemon.data_dir / "files" / "objects").exists():
                leaks.append(f"{name}: the filename reached the file system")
        if tried % 10 == 0 and not daemon.alive():
            break
    for name, raw in WIRE_CASES:
        if not daemon.alive():
            break
        tried += 1
        try:
            status = _raw_exchange(daemon.port, raw)
        except OSError as e:
            status = None
            _ = e
        if status is not None and status >= 500 and status != 501:
            server_errors.append(f"wire {name}: {status}")
    crashed = not daemon.alive() or not daemon.healthy(timeout=5)
    line = (f"hostile corpus: {tried} requests ({len(cases)} HTTP + {len(WIRE_CASES)} raw), "
            f"{len(server_errors) + int(crashed)} failures ({len(server_errors)} 5xx, "
            f"{'a crash' if crashed else 'no crash'}), {len(leaks)} leaks, {len(unexpected)} unexpected 4xx/2xx, "
            f"{len(contract)} JSON-error/X-Request-Id contract violations, {len(no_answer)} closed without an answer; 0 lost")
    return {"line": line, "tried": tried, "server_errors": server_errors, "crashed": crashed, "leaks": leaks,
            "unexpected": unexpected, "contract": contract, "no_answer": no_answer}
