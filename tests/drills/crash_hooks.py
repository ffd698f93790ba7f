"""Extensions of the crash drill (crash.py): `CrashDrillHooks` and the webhook and
messaging load they add, with their checks after every kill."""

import threading

from .common import ADMIN_TOKEN
from .outage import stored_messages
from .webhook_receiver import Receiver, deliveries, sign_up, webhooks_config


class CrashDrillHooks:
    """HOOK POINT for more write kinds and checks (messages, webhook delivery).

    The messaging work adds a subclass, e.g. `WebhookDeliveryHooks`, that
    starts a `standardwebhooks` receiver in `begin`, returns the endpoint in
    `config`, posts messages in `write`, and in `verify(final=True)` checks
    that every message that got a 2xx had its webhook delivered (each
    `webhook-id` at least once, valid signature) after the restarts. Add it
    to `DEFAULT_HOOKS` below and every crash drill run (make drills and the
    quick CI test) includes it.
    """

    name = "hook"

    def config(self):
        """Extra YAML appended to the drill's roost.yaml."""
        return ""

    def begin(self, workdir):
        """Once, before the first start (start receivers here)."""

    def after_start(self, daemon, cycle):
        """After every (re)start, before the load."""

    def write(self, client, rng, worker):
        """One write under load on `client` (a keep-alive `Client`); return a
        short kind name when a write was made, None to let the drill pick its
        own kinds. Network errors must propagate (the daemon was killed)."""
        return None

    def verify(self, daemon, final):
        """After a restart (and with final=True once at the end): returns
        (checked, failures, lost), failures and lost being lists of strings."""
        return 0, [], []

    def counts(self):
        """Writes this hook made: {kind: [tried, acknowledged]}, shown in the summary line."""
        return {}

    def summary(self):
        """A short phrase for the summary line ("" for none)."""
        return ""

    def end(self):
        """Once, at the very end, also after an error: stop what `begin` started."""


class WebhookDeliveryHooks(CrashDrillHooks):
    """Messages under the kills, and their webhooks across the restarts.

    A `standardwebhooks` receiver (webhook_receiver.Receiver) runs for the
    whole drill; roostd has one `message.created` endpoint pointing at it with
    a short retry schedule. Once alice and bob are signed up, about a fifth of
    the writes are messages between them (POST /messages). After every
    restart: every acknowledged message is stored and a refused one is not.
    At the end (bounded wait): every message that got a 201, and every other
    message found stored (committed without its answer, at a kill), has its
    event delivered at least once with a valid signature, under one
    webhook-id; nothing is dead-lettered; no delivery failed verification.
    """

    name = "messages"
    SCHEDULE = "[0.2, 0.5, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]"

    def __init__(self, drain_timeout=60.0):
        self.drain_timeout = drain_timeout
        self.receiver = Receiver()
        self.final_stats = None
        self.tried, self.acked = 0, {}

    def config(self):
        return webhooks_config(self.receiver.url, self.SCHEDULE, admin_token=ADMIN_TOKEN)

    def begin(self, workdir):
        self.lock = threading.Lock()
        self.users = None            # [(id, token), (id, token)]
        self.seq = 0
        self.tried = 0
        self.acked = {}              # message _id -> text (got a 201)
        self.unverified = set()      # acknowledged since the last restart check
        self.refused = []            # texts refused with an answer
        self.unknown = set()         # texts in flight at a kill
        self.server_errors = []
        self.committed_unacked = 0
        self.final_stats = None
        self.receiver.start()
        self.self_test_failures = self.receiver.self_test()

    def after_start(self, daemon, cycle):
        if self.users is None:
            self.users = [sign_up(daemon.port, "alice"), sign_up(daemon.port, "bob")]

    def write(self, client, rng, worker):
        if self.users is None:
            return None
        (me, token), (peer, _) = self.users[worker % 2], self.users[1 - worker % 2]
        with self.lock:
            self.seq += 1
            self.tried += 1
            text = f"message {self.seq} from worker {worker}"
            self.unknown.add(text)
        reply = client.request("POST", "/messages", {"recipientId": peer, "text": text},
                               {"Authorization": f"Bearer {token}"})
        with self.lock:
            self.unknown.discard(text)
            if reply.status == 201:
                mid = reply.json()["_id"]
                self.acked[mid] = text
                self.unverified.add(mid)
            else:
                self.refused.append(text)
                if reply.status >= 500 and reply.status != 503:
                    self.server_errors.append(f"POST /messages -> {reply.status} {reply.raw[:120]!r}")
        return "message"

    def _stored(self, daemon):
        return stored_messages(daemon.port, self.users[0][1])

    def verify(self, daemon, final):
        if self.users is None:
            return 0, list(self.self_test_failures if final else []), []
        failures, lost, checked = [], [], 0
        stored = self._stored(daemon)
        with self.lock:
            to_check = set(self.acked) if final else set(self.unverified)
            self.unverified.clear()
            refused = set(self.refused)
            acked = dict(self.acked)
        for mid in sorted(to_check):
            checked += 1
            if mid not in stored:
                lost.append(f"message {mid} ({acked[mid]!r}) got a 201 but is not stored")
            elif stored[mid] != acked[mid]:
                failures.append(f"message {mid}: stored text {stored[mid]!r}, sent {acked[mid]!r}")
        for mid, text in stored.items():
            if text in refused:
                failures.append(f"message {mid} ({text!r}) was refused with an answer but is stored")
        if not final:
            return checked, failures, lost
        # Every committed message: acknowledged, or stored although its answer was lost at a kill.
        committed = dict(acked)
        for mid, text in stored.items():
            committed.setdefault(mid, text)
        self.committed_unacked = len(committed) - len(acked)
        missing = self.receiver.wait_for(committed, self.drain_timeout)
        c, f, l = self.receiver.check(acked, refused)
        checked += c
        failures += f
        lost += l
        for mid in sorted(missing - set(acked)):
            failures.append(f"message {mid} was committed (stored, its answer lost at a kill) but its webhook never arrived")
        checked += 2
        for status in ("dead", "pending"):
            rows = deliveries(daemon.port, ADMIN_TOKEN, status)
            if rows:
                failures.append(f"{len(rows)} webhook deliveries {status} after the drain: {rows[:2]}")
        failures += self.self_test_failures
        failures += [f"server error under load: {e}" for e in self.server_errors[:20]]
        self.final_stats = dict(self.receiver.stats(), committed=len(committed))
        return checked, failures, lost

    def counts(self):
        return {"messages": [self.tried, len(self.acked)]}

    def summary(self):
        s = self.final_stats
        if not s:
            return "webhooks not checked"
        return (f"webhooks: {s['events']} events arrived for {s['committed']} committed messages "
                f"({self.committed_unacked} committed without their answer), {s['requests']} deliveries, "
                f"{s['duplicates']} repeats of a webhook-id, {s['invalid']} bad signatures")

    def end(self):
        self.receiver.stop()


# Hook classes (instantiated afresh for every run) or instances.
DEFAULT_HOOKS = [WebhookDeliveryHooks]
