"""A real SMTP server on loopback (aiosmtpd) that keeps what it receives,
for the account mail tests: each message parsed, with its code and link."""

import email
import email.policy
import re
import threading
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from roost_harness.paths import free_port


class Mail:
    def __init__(self, envelope_from, rcpt, raw):
        self.envelope_from, self.rcpt, self.raw = envelope_from, rcpt, raw
        self.message = email.message_from_bytes(raw, policy=email.policy.default)
        self.subject = str(self.message["Subject"])
        self.text = self.message.get_body(("plain",)).get_content()
        self.html = self.message.get_body(("html",)).get_content()

    @property
    def code(self):
        m = re.search(r"\b(\d{6})\b", self.text)
        return m.group(1) if m else None

    @property
    def link(self):
        m = re.search(r"(https?://\S+\?token=[A-Za-z0-9_-]+)", self.text)
        return m.group(1) if m else None

    @property
    def token(self):
        return self.link.rsplit("token=", 1)[1] if self.link else None


class MailBox:
    """aiosmtpd on 127.0.0.1:`port` (a free one unless given); `start`/`stop` may repeat."""

    def __init__(self, port=None, credentials=None):
        self.port = port or free_port()
        self.mails = []
        self.auth_users = []
        self.peers = []  # the client address of each mail's connection
        self.credentials = credentials
        self.lock = threading.Lock()
        self.controller = None

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.mails.append(Mail(envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content or envelope.content))
            self.peers.append(session.peer)
        return "250 OK"

    def _authenticate(self, server, session, envelope, mechanism, auth_data):
        if isinstance(auth_data, LoginPassword) and self.credentials == (auth_data.login.decode(), auth_data.password.decode()):
            self.auth_users.append(auth_data.login.decode())
            return AuthResult(success=True)
        return AuthResult(success=False, handled=False)

    def start(self):
        kwargs = {}
        if self.credentials:
            kwargs = dict(authenticator=self._authenticate, auth_required=True, auth_require_tls=False)
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port, **kwargs)
        self.controller.start()
        return self

    def stop(self):
        if self.controller:
            self.controller.stop()
            self.controller = None

    @property
    def url(self):
        return f"smtp://127.0.0.1:{self.port}"

    def to(self, address):
        with self.lock:
            return [m for m in self.mails if address.lower() in [r.lower() for r in m.rcpt]]

    def wait_for(self, address, count=1, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.to(address)
            if len(got) >= count:
                return got
            time.sleep(0.05)
        raise AssertionError(f"{address}: {len(self.to(address))} mails after {timeout} s, wanted {count}")


def config(smtp_url, **extra):
    lines = {"default_permission": "public", "password_cost": "owasp", "hash_concurrency": 2,
             "smtp_url": smtp_url, "smtp_tls": "off", "smtp_from": "noreply@roost.test", "app_name": "Watercooler",
             "admin_token": "roost-test-admin-token-0123456789abcdef"}
    lines.update(extra)
    return "".join(f"{k}: {v if v != '' else chr(34) * 2}\n" for k, v in lines.items())
