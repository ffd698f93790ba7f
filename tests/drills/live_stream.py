"""The SSE client of the live drill (live.py) and tests/python/test_live.py:
`LiveStream`, its `Event`s, and the feed position inside an event id."""

import json
import socket
import threading
import time

from roost_harness import cursors


class Event:
    __slots__ = ("id", "kind", "data", "t")

    def __init__(self, id, kind, data, t):
        self.id, self.kind, self.data, self.t = id, kind, data, t

    @property
    def entity_id(self):
        return self.data.get("_id") if isinstance(self.data, dict) else None

    @property
    def collection(self):
        return self.data.get("collection") if isinstance(self.data, dict) else None

    @property
    def entity(self):
        return self.data.get("entity") if isinstance(self.data, dict) else None

    def __repr__(self):
        return f"<{self.kind} {self.collection}/{self.entity_id} @{cursor_seq(self.id)}>"


def cursor_seq(token):
    """The feed position inside an event id (sealed; the checks open it with the
    database's key, registered with `cursors.register`, only to verify
    ordering), or None."""
    return cursors.cursor_seq(token) if token else None


def cursor_epoch(token):
    return cursors.cursor_epoch(token)


class LiveStream:
    """One SSE request on a raw socket. The response head is read at once
    (`status`, `headers`, and `body`/`json` when it is not a stream); a 200
    stream is then read by a thread that de-chunks the body incrementally,
    splits lines and collects events (`events`, with arrival times),
    `comments` (heartbeats), `retry`.

    `end` says how the stream ended: "clean" (the last, empty chunk arrived),
    "eof" (closed without it), "reset" (connection reset), "closed" (we
    closed it), or None while it runs. `read=False` starts no reader thread
    (a slow client that never reads)."""

    def __init__(self, port, path, token=None, last_event_id=None, headers=None, read=True, rcvbuf=None,
                 timeout=10.0, on_event=None):
        self.path = path
        self.events = []
        self.comments = []
        self.retry = None
        self.end = None
        self.body = b""
        self.cond = threading.Condition()
        self.on_event = on_event
        self._closing = False
        self._thread = None
        self.opened = time.monotonic()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        hdrs = {"Host": f"127.0.0.1:{port}", "Accept": "text/event-stream"}
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        if last_event_id:
            hdrs["Last-Event-ID"] = last_event_id
        hdrs.update(headers or {})
        head = f"GET {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()) + "\r\n"
        self.sock.sendall(head.encode())
        self._buf = b""
        self._read_head()
        if self.status != 200:
            self._read_plain_body()
            self._finish("closed")
            return
        if read:
            self.sock.settimeout(None)
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    # -- the head, and non-stream bodies
    def _recv(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError
        return data

    def _read_head(self):
        while b"\r\n\r\n" not in self._buf:
            self._buf += self._recv()
        head, self._buf = self._buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            self.headers[k.strip().lower()] = v.strip()
        self.chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()

    def _read_plain_body(self):
        try:
            if self.chunked:
                out = bytearray()
                for piece in self._chunks():
                    out += piece
                self.body = bytes(out)
            else:
                n = int(self.headers.get("content-length", "0"))
                while len(self._buf) < n:
                    self._buf += self._recv()
                self.body = self._buf[:n]
        except (OSError, EOFError):
            pass

    def json(self):
        return json.loads(self.body) if self.body else None

    def _chunks(self):
        """Yields the de-chunked body's pieces as they arrive; returns at the last chunk."""
        while True:
            while b"\r\n" not in self._buf:
                self._buf += self._recv()
            size_line, self._buf = self._buf.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while b"\r\n" not in self._buf:  # trailers end with an empty line
                    self._buf += self._recv()
                return
            while len(self._buf) < size + 2:
                self._buf += self._recv()
            piece, self._buf = self._buf[:size], self._buf[size + 2:]
            yield piece

    # -- the stream
    def _run(self):
        text = b""
        fields = {}
        end = "eof"
        try:
            pieces = self._chunks() if self.chunked else self._raw_pieces()
            for piece in pieces:
                text += piece
                while b"\n" in text:
                    line, text = text.split(b"\n", 1)
                    line = line.rstrip(b"\r").decode()
                    fields = self._line(line, fields)
            else:
                end = "clean" if self.chunked else "eof"
        except EOFError:
            end = "eof"
        except ConnectionResetError:
            end = "reset"
        except OSError:
            end = "closed" if self._closing else "reset"
        self._finish("closed" if self._closing else end)

    def _raw_pieces(self):
        if self._buf:
            yield self._buf
            self._buf = b""
        while True:
            yield self._recv()

    def _line(self, line, fields):
        now = time.monotonic()
        if line == "":
            if "event" in fields or "data" in fields:
                data = fields.get("data")
                try:
                    data = json.loads(data) if data is not None else None
                except ValueError:
                    pass
                event = Event(fields.get("id"), fields.get("event", "message"), data, now)
                with self.cond:
                    if self._closing:
                        return {}
                    self.events.append(event)
                    self.cond.notify_all()
                if self.on_event:
                    self.on_event(event)
            return {}
        if line.startswith(":"):
            with self.cond:
                self.comments.append((line[1:].strip(), now))
                self.cond.notify_all()
            return fields
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "retry":
            with self.cond:
                self.retry = int(value)
                self.cond.notify_all()
        elif name == "data":
            fields["data"] = fields["data"] + "\n" + value if "data" in fields else value
        elif name in ("id", "event"):
            fields[name] = value
        return fields

    def _finish(self, end):
        with self.cond:
            if self.end is None:
                self.end = end
                self.ended_at = time.monotonic()
            self.cond.notify_all()
        try:
            self.sock.close()
        except OSError:
            pass

    # -- for the tests
    def wait(self, predicate, timeout=10.0):
        """Waits (bounded) until predicate(self) holds; returns whether it did."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(min(left, 0.2))
            return True

    def wait_ready(self, timeout=10.0):
        """The `retry:` preamble arrived: the hub admitted the stream."""
        return self.wait(lambda s: s.retry is not None or s.end is not None, timeout)

    def wait_events(self, n, timeout=10.0):
        return self.wait(lambda s: len(s.events) >= n or s.end is not None, timeout) and len(self.events) >= n

    def wait_end(self, timeout=10.0):
        return self.wait(lambda s: s.end is not None, timeout)

    def snapshot(self):
        with self.cond:
            return list(self.events)

    @property
    def last_id(self):
        with self.cond:
            ids = [e.id for e in self.events if e.id]
            return ids[-1] if ids else None

    def close(self):
        """Closes our side at once; events parsed before are kept, nothing after."""
        with self.cond:
            self._closing = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass
        if self._thread is not None:
            self._thread.join(5)
        with self.cond:
            if self.end is None:
                self.end = "closed"
                self.ended_at = time.monotonic()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
