"""Issue 33, rate limits per caller (`rate_limits`): writes, written bytes,
batches, uploads, sign-ups and live stream opens each have a token bucket per
caller — a signed-in caller's account, else its client address (behind
`trusted_proxies`, the forwarded one). Past it: 429 `RateLimited` with
`Retry-After`, counted in `roost_rate_limited_total{class}`; other callers
and the daemon go on as before.

The test client plays a trusted proxy (127.0.0.1) and names each caller's
address in X-Forwarded-For, so every case has fresh addresses and users."""

import http.client
import itertools
import json
import re
import signal
import subprocess
import time
import uuid

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, assert_error, binary, clean_env, png, running_roostd

BURST = 3

LIMITS = {
    "writes": f"{{per_second: 1, burst: {BURST}}}",
    "write_bytes": "{per_second: 4000, burst: 12000}",
    "batches": f"{{per_second: 1, burst: {BURST}}}",
    # Uploads and sign-ups take longer (hashing, fsync): a slower refill keeps the bucket empty meanwhile.
    "uploads": f"{{per_minute: 15, burst: {BURST}}}",
    "signups": f"{{per_minute: 15, burst: {BURST}}}",
    "live_streams": f"{{per_second: 1, burst: {BURST}}}",
}


def config(limits=LIMITS):
    lines = "".join(f"  {name}: {value}\n" for name, value in limits.items())
    return (FAST_HASHING + f"admin_token: {ADMIN_TOKEN}\ndefault_permission: public\nfiles_permission: public\n"
            'trusted_proxies: ["127.0.0.1"]\nlive_heartbeat: 1\nrate_limits:\n' + lines)


_addresses = (f"198.51.{n // 250}.{n % 250 + 1}" for n in itertools.count(1))


def fresh_address():
    return next(_addresses)


def via(address, token=None):
    headers = {"X-Forwarded-For": address}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def new_user(d):
    """A user signed up from an address of its own, its token verified once
    (a read), so the loop charges its requests to its account."""
    address = fresh_address()
    r = d.call("POST", "/users", {"username": "u" + uuid.uuid4().hex[:12], "password": "a fine password"}, headers=via(address))
    assert r.status == 201, r
    body = r.json()
    token = body["token"]
    assert d.call("GET", "/users/me", headers=via(address, token)).status == 200
    return body["user"]["_id"], token


def open_live(d, headers, path="/notes/_live"):
    """Opens a live stream and closes it at once: its status (and the JSON of a refusal)."""
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=10)
    try:
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        body = r.read() if r.status != 200 else b""
        return Answer(r.status, {k.lower(): v for k, v in r.getheaders()}, body)
    finally:
        conn.close()


class Answer:
    def __init__(self, status, headers, raw):
        self.status, self.headers, self.raw = status, headers, raw

    def header(self, name):
        return self.headers.get(name.lower())

    def json(self):
        return json.loads(self.raw)

    def __repr__(self):
        return f"<{self.status} {self.raw[:200]!r}>"


_serial = itertools.count()


# One request of each class: (d, headers) -> response; the status it gets while allowed.
def write(d, headers):
    return d.call("POST", "/notes", {"n": next(_serial)}, headers=headers)


def write_put(d, headers):
    return d.call("PUT", f"/notes/put-{next(_serial)}", {"n": 1}, headers=headers)


def write_bytes(d, headers):
    # 5,000 bytes: the third spends past the 12,000-byte burst.
    return d.call("POST", "/notes", {"pad": "x" * 4990}, headers=headers)


def batch(d, headers):
    op = {"method": "POST", "path": "/notes", "body": {"in": "batch"}}
    return d.call("POST", "/_batch", {"operations": [op]}, headers=headers)


def upload(d, headers):
    return d.call("POST", "/files", raw_body=png(8, 8, next(_serial)), headers={**headers, "Content-Type": "image/png"})


def signup(d, headers):
    return d.call("POST", "/users", {"username": "s" + uuid.uuid4().hex[:12], "password": "a fine password"}, headers=headers)


def live(d, headers):
    return open_live(d, headers)


# (class, request, allowed status, requests allowed from a full bucket)
CLASSES = [
    ("writes", write, 201, BURST),
    ("writes", write_put, 201, BURST),
    ("write_bytes", write_bytes, 201, 2),
    ("batches", batch, 200, BURST),
    ("uploads", upload, 201, BURST),
    ("signups", signup, 201, BURST),
    ("live_streams", live, 200, BURST),
]
IDS = [f"{c}-{f.__name__}" for c, f, _, _ in CLASSES]


@pytest.fixture(scope="module")
def roost():
    with running_roostd(config()) as d:
        yield d


def limited_total(d, kind):
    text = d.call("GET", "/metrics", token=ADMIN_TOKEN).raw.decode()
    m = re.search(r'^roost_rate_limited_total\{class="' + kind + r'"\} (\S+)$', text, re.M)
    return float(m.group(1)) if m else 0.0


def spend(d, send, headers, allowed, count):
    """Spends a full bucket: `count` requests allowed, then a 429."""
    for i in range(count):
        r = send(d, headers)
        assert r.status == allowed, (i, r)
    r = send(d, headers)
    return r


def assert_limited(r, kind):
    assert_error(r, 429, "RateLimited")
    body = r.json()
    assert f"(rate_limits.{kind})" in body["description"], body
    wait = r.header("Retry-After")
    assert wait is not None and wait.isdigit() and 1 <= int(wait) <= 5, wait
    assert f"in {wait} s" in body["description"], body
    return int(wait)


@pytest.mark.parametrize("kind,send,allowed,count", CLASSES, ids=IDS)
def test_anonymous_address_is_limited_and_others_are_not(roost, kind, send, allowed, count):
    before = limited_total(roost, kind)
    address = fresh_address()
    wait = assert_limited(spend(roost, send, via(address), allowed, count), kind)
    assert limited_total(roost, kind) == before + 1
    # Another address, and a signed-in user at the same address, still get through.
    assert send(roost, via(fresh_address())).status == allowed
    if kind != "signups":
        _, token = new_user(roost)
        assert send(roost, via(address, token)).status == allowed
    # Reads are never limited, and the daemon serves everyone.
    assert roost.call("GET", "/notes?limit=1", headers=via(address)).status == 200
    # Retry-After is honoured: after it, the address is allowed again.
    time.sleep(wait + 0.2)
    assert send(roost, via(address)).status == allowed


@pytest.mark.parametrize("kind,send,allowed,count", [c for c in CLASSES if c[0] != "signups"],
                         ids=[i for i, c in zip(IDS, CLASSES) if c[0] != "signups"])
def test_signed_in_user_is_limited_per_account(roost, kind, send, allowed, count):
    _, token = new_user(roost)
    _, other = new_user(roost)
    address = fresh_address()
    wait = assert_limited(spend(roost, send, via(address, token), allowed, count), kind)
    # The account is limited wherever it comes from; another user at the same address is not.
    assert_limited(send(roost, via(fresh_address(), token)), kind)
    assert send(roost, via(address, other)).status == allowed
    # Nor is the address itself without the token.
    assert send(roost, via(address)).status == allowed
    time.sleep(wait + 0.2)
    assert send(roost, via(address, token)).status == allowed


@pytest.mark.parametrize("kind,send,allowed,count", [c for c in CLASSES if c[0] in ("writes", "live_streams")][:2],
                         ids=["writes", "live_streams"])
def test_made_up_tokens_are_charged_to_their_address(roost, kind, send, allowed, count):
    """A token no session has is never an account: rotating them gets 401s, then 429s."""
    address = fresh_address()
    statuses = [send(roost, via(address, uuid.uuid4().hex + uuid.uuid4().hex)).status for _ in range(count + 2)]
    assert statuses == [401] * count + [429] * 2, statuses
    # That address is spent for anonymous requests too; another is not.
    assert send(roost, via(address)).status == 429
    assert send(roost, via(fresh_address())).status == allowed


def test_a_live_token_in_the_query_is_the_same_account(roost):
    """Browsers' EventSource sends ?access_token=: it pays from the same account as the header."""
    _, token = new_user(roost)
    assert_limited(spend(roost, live, via(fresh_address(), token), 200, BURST), "live_streams")
    r = open_live(roost, via(fresh_address()), path=f"/events?subscribe=%5B%7B%22collection%22%3A%22notes%22%7D%5D&access_token={token}")
    assert_limited(r, "live_streams")
    # Another user's query token, from the same address, is not limited.
    _, other = new_user(roost)
    assert open_live(roost, via(fresh_address()), path=f"/notes/_live?access_token={other}").status == 200


def test_an_ipv6_slash_64_is_one_address(roost):
    """Addresses count as the log-in throttle counts them: one IPv6 /64 is one caller."""
    statuses = [write(roost, via(f"2001:db8:33:44::{i + 1:x}")).status for i in range(BURST + 1)]
    assert statuses == [201] * BURST + [429], statuses
    assert write(roost, via("2001:db8:33:45::1")).status == 201


def test_profile_updates_and_file_deletes_are_writes(roost):
    uid, token = new_user(roost)
    address = fresh_address()
    upload_ids = [upload(roost, via(address, token)).json()["_id"] for _ in range(2)]
    statuses = [roost.call("PATCH", f"/users/{uid}", {"bio": str(i)}, headers=via(address, token)).status for i in range(BURST)]
    assert statuses == [200] * BURST, statuses
    assert_limited(roost.call("DELETE", f"/files/{upload_ids[0]}", headers=via(address, token)), "writes")
    time.sleep(1.2)
    assert roost.call("DELETE", f"/files/{upload_ids[0]}", headers=via(address, token)).status in (200, 204)
    assert_limited(roost.call("PATCH", f"/users/{uid}", {"bio": "again"}, headers=via(address, token)), "writes")


def test_signups_are_per_address_even_with_a_token(roost):
    _, token = new_user(roost)
    address = fresh_address()
    assert_limited(spend(roost, signup, via(address), 201, BURST), "signups")
    assert_limited(signup(roost, via(address, token)), "signups")


def test_a_body_past_the_byte_burst_waits_for_a_full_bucket(roost):
    """One body larger than write_bytes' burst is not refused forever: it needs a full bucket."""
    address = fresh_address()
    big = {"pad": "y" * 20000}
    assert roost.call("POST", "/notes", big, headers=via(address)).status == 201
    r = roost.call("POST", "/notes", big, headers=via(address))
    wait = assert_limited(r, "write_bytes")
    time.sleep(wait + 0.2)
    assert roost.call("POST", "/notes", big, headers=via(address)).status == 201


def test_a_refused_byte_budget_does_not_spend_the_write_budget(roost):
    address = fresh_address()
    assert [write_bytes(roost, via(address)).status for _ in range(3)] == [201, 201, 429]
    # The refused third gave its write back: BURST - 2 small writes pass, then 429 (writes).
    assert [write(roost, via(address)).status for _ in range(BURST - 2)] == [201] * (BURST - 2)
    assert_limited(write(roost, via(address)), "writes")


def test_admin_token_is_not_limited(roost):
    address = fresh_address()
    assert roost.call("GET", "/notes?limit=1", token=ADMIN_TOKEN, headers=via(address)).status == 200
    statuses = [write(roost, via(address, ADMIN_TOKEN)).status for _ in range(BURST * 3)]
    assert statuses == [201] * (BURST * 3), statuses


def test_metrics_list_every_class_from_the_start():
    with running_roostd(config()) as d:
        for kind in ["writes", "write_bytes", "batches", "uploads", "signups", "live_streams"]:
            assert limited_total(d, kind) == 0.0
            assert f'roost_rate_limited_total{{class="{kind}"}} 0' in d.call("GET", "/metrics", token=ADMIN_TOKEN).raw.decode()


def test_check_config_shows_the_limits(tmp_path):
    path = tmp_path / "roost.yaml"
    for yaml, expected in [("", "rate_limits: writes 50/s burst 1000, write_bytes 298262/s burst 268435456"),
                           ("rate_limits: off", "rate_limits: writes off, write_bytes off, batches off, uploads off, signups off, live_streams off"),
                           ("rate_limits: {batches: {per_minute: 120, burst: 7}}", "batches 2/s burst 7")]:
        path.write_text(yaml + "\n")
        out = subprocess.run([str(binary()), "check-config", "--config", str(path)], capture_output=True, text=True, env=clean_env())
        assert out.returncode == 0, out.stderr
        assert expected in out.stdout, out.stdout


def test_zero_turns_a_class_off_and_sighup_applies_new_limits():
    off = {**LIMITS, "writes": "{per_second: 0}"}
    with running_roostd(config(off)) as d:
        address = fresh_address()
        assert [write(d, via(address)).status for _ in range(BURST * 4)] == [201] * (BURST * 4)
        # Batches are still limited.
        assert_limited(spend(d, batch, via(address), 200, BURST), "batches")
        d.config_path.write_text(config({**LIMITS, "writes": "{per_minute: 1, burst: 2}", "batches": "{per_hour: 0}"}))
        d.signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while "rate_limits.writes" not in d.log_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "rate_limits.writes" in d.log_text()
        other = fresh_address()
        assert [write(d, via(other)).status for _ in range(3)] == [201, 201, 429]
        r = write(d, via(other))
        assert_error(r, 429, "RateLimited")
        assert 20 <= int(r.header("Retry-After")) <= 60
        # Batches are off now.
        assert [batch(d, via(address)).status for _ in range(BURST * 2)] == [200] * (BURST * 2)


@pytest.mark.parametrize("yaml,message", [
    ("rate_limits: {writes: {per_second: 1, per_minute: 5}}", "one of per_second"),
    ("rate_limits: {writes: {burst: 5}}", "one of per_second"),
    ("rate_limits: {writes: {per_second: -1}}", "must be a number"),
    ("rate_limits: {writes: {per_second: 1, burst: 0.5}}", "burst must be at least 1"),
    ("rate_limits: {reads: {per_second: 1}}", "unknown class"),
    ("rate_limits: {writes: {per_second: 1, every: 2}}", "unknown setting"),
    ("rate_limits: {callers: 10}", "rate_limits.callers"),
    ("rate_limits: 5", "must be off or a mapping"),
])
def test_bad_settings_are_refused(tmp_path, yaml, message):
    path = tmp_path / "roost.yaml"
    path.write_text(FAST_HASHING + yaml + "\n")
    out = subprocess.run([str(binary()), "check-config", "--config", str(path)], capture_output=True, text=True, env=clean_env())
    assert out.returncode != 0, out.stdout
    assert message in out.stderr, out.stderr
