"""The load of the live drill (live.py): the daemon's configuration, the
users' writer threads and their ledger, and the subscribers that drop and
resume their streams at random."""

import threading
import time
import urllib.parse

from roost_harness import Client

from .common import ADMIN_TOKEN
from .live_paths import events_path
from .live_stream import LiveStream


NOTES = "livenotes"
CONFIG = f"""\
# The load comes from one machine, one caller: rate limits off (test_rate_limits.py tests them).
rate_limits: off
password_cost: owasp
hash_concurrency: 2
admin_token: {ADMIN_TOKEN}
live_heartbeat: 1
collections:
  {NOTES}: {{permission: private}}
"""
FOLLOWED = (NOTES, "messages", "threads")



class Subscriber:
    """A user's (or the admin's) stream that drops and resumes at random."""

    def __init__(self, name, user, token, topics, rng):
        self.name, self.user, self.token, self.topics, self.rng = name, user, token, topics, rng
        self.events = []          # every event of every session, concatenated
        self.sessions = 0
        self.resets = 0
        self.stream = None
        self.last_id = None
        self.errors = []
        self.away = False         # offline for a whole kill cycle: resumes with a backlog

    def path(self, since_param):
        params = {}
        if since_param and self.last_id:
            params["since"] = self.last_id
        return events_path(self.topics, **params)

    def connect(self, port):
        use_param = self.rng.random() < 0.3
        self.stream = LiveStream(port, self.path(use_param), token=self.token,
                                 last_event_id=None if use_param else self.last_id, timeout=5)
        self.sessions += 1
        if self.stream.status != 200:
            self.errors.append(f"{self.name}: stream answered {self.stream.status} {self.stream.body[:120]!r}")
            self.stream = None
            return False
        return True

    def harvest(self):
        """Takes the closed stream's events into the concatenation."""
        if self.stream is None:
            return
        self.stream.close()
        for e in self.stream.snapshot():
            if e.kind == "reset":
                self.resets += 1
            self.events.append(e)
            if e.id:
                self.last_id = e.id
        self.stream = None


class Ledger:
    def __init__(self):
        self.lock = threading.Lock()
        self.acked = []           # (collection, _id, _updatedAt) of every acknowledged write
        self.docs = {}            # NOTES _id -> creator (alive as far as we know)
        self.tried = 0
        self.refused = 0
        self.no_answer = 0


def writer(port_box, user, token, users, ledger, stop, rng, pause):
    client = None
    n = 0
    while not stop.is_set():
        if pause.is_set():
            time.sleep(0.02)
            continue
        if client is None or client.port != port_box[0]:
            client = Client(port_box[0], timeout=5, token=token)
        r = rng.random()
        with ledger.lock:
            mine = [i for i, c in ledger.docs.items() if c == user]
            anyone = list(ledger.docs)
        try:
            with ledger.lock:
                ledger.tried += 1
            if r < 0.25 or not mine:
                n += 1
                doc_id = f"{user}:{n}"
                reply = client.request("PUT", f"/{NOTES}/{urllib.parse.quote(doc_id)}",
                                       {"n": n, "hot": rng.random() < 0.5, "pad": "p" * rng.randint(0, 2000),
                                        "_acl": {"read": rng.sample(users, rng.randint(0, 2)), "write": []}})
                if reply.status in (200, 201):
                    with ledger.lock:
                        ledger.docs[doc_id] = user
            elif r < 0.45:
                target = rng.choice(anyone)   # may be someone else's: allowed when _acl.write names us
                reply = client.request("PATCH", f"/{NOTES}/{urllib.parse.quote(target)}",
                                       {"n": rng.randint(0, 10**6), "hot": rng.random() < 0.5,
                                        "pad": "q" * rng.randint(0, 2000)})
            elif r < 0.7:
                target = rng.choice(mine)
                acl = {"read": rng.sample(users, rng.randint(0, 3)), "write": rng.sample(users, rng.randint(0, 1))}
                reply = client.request("PATCH", f"/{NOTES}/{urllib.parse.quote(target)}", {"_acl": acl})
            elif r < 0.8:
                target = rng.choice(mine)
                reply = client.request("DELETE", f"/{NOTES}/{urllib.parse.quote(target)}")
                if reply.status == 200:
                    with ledger.lock:
                        ledger.docs.pop(target, None)
                        ledger.acked.append((NOTES, target, None))
                    continue
            else:
                others = [u for u in users if u != user]
                reply = client.request("POST", "/messages", {"recipientId": rng.choice(others), "text": f"hi {n}"})
            if reply.status in (200, 201):
                body = reply.json()
                coll = "messages" if "threadId" in body else NOTES
                with ledger.lock:
                    ledger.acked.append((coll, body["_id"], body.get("_updatedAt")))
            else:
                with ledger.lock:
                    ledger.refused += 1
        except Exception:  # noqa: BLE001 - the daemon was killed: no answer, outcome unknown
            with ledger.lock:
                ledger.no_answer += 1
            if client is not None:
                client.close()
            time.sleep(0.05)
        time.sleep(rng.uniform(0, 0.01))
