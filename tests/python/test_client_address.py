"""The client address behind a proxy, and a log-in throttle that cannot lock
everyone out. The test client plays the proxy: it connects from 127.0.0.1,
which the config trusts, and names the client in X-Forwarded-For."""

import concurrent.futures
import re
import time

import pytest

from roost_harness import FAST_HASHING, assert_error, running_roostd

PROXIED = FAST_HASHING + 'trusted_proxies: ["127.0.0.1", "10.0.0.0/8"]\n'


def access_line(d, request_id):
    """The access-log line of one request."""
    for _ in range(50):
        lines = [l for l in d.log_text().splitlines() if f"request_id={request_id} " in l]
        if lines:
            return lines[0]
        time.sleep(0.05)
    raise AssertionError(f"no access-log line for {request_id}")


def remote_of(d, request_id):
    return re.search(r" remote=(\S+)$", access_line(d, request_id)).group(1)


def via(address, **extra):
    return {"X-Forwarded-For": address, **extra}


# (config, headers, expected remote in the access log)
ADDRESS_CASES = [
    # No trusted proxies: whatever the client claims is ignored.
    (FAST_HASHING, {"X-Forwarded-For": "6.6.6.6"}, "127.0.0.1"),
    (FAST_HASHING, {"Forwarded": "for=6.6.6.6"}, "127.0.0.1"),
    # Trusted: the right-most address that is not a trusted proxy.
    (PROXIED, {"X-Forwarded-For": "203.0.113.7"}, "203.0.113.7"),
    (PROXIED, {"X-Forwarded-For": "6.6.6.6, 203.0.113.7"}, "203.0.113.7"),
    (PROXIED, {"X-Forwarded-For": "6.6.6.6, 198.51.100.1, 10.1.2.3"}, "198.51.100.1"),
    (PROXIED, {"X-Forwarded-For": "2001:db8::1"}, "2001:db8::1"),
    # Garbage ends the walk at the nearest trusted hop.
    (PROXIED, {"X-Forwarded-For": "6.6.6.6, not-an-address"}, "127.0.0.1"),
    (PROXIED, {}, "127.0.0.1"),
    # Only the configured header counts: a pass-through Forwarded is not read.
    (PROXIED, {"Forwarded": "for=6.6.6.6"}, "127.0.0.1"),
    (PROXIED + "forwarded_header: Forwarded\n", {"Forwarded": 'for=6.6.6.6, for="[2001:db8::17]:4711"'}, "2001:db8::17"),
]


@pytest.mark.parametrize("config", sorted({c for c, _, _ in ADDRESS_CASES}))
def test_access_log_names_the_client(config):
    with running_roostd(config) as d:
        for i, (c, headers, expected) in enumerate(ADDRESS_CASES):
            if c != config:
                continue
            rid = f"addr-case-{i}"
            assert d.call("GET", "/healthz", headers={**headers, "X-Request-Id": rid}).status == 200
            assert remote_of(d, rid) == expected, (headers, access_line(d, rid))


def test_spoofed_forwarded_for_does_not_escape_the_throttle():
    """From an untrusted peer, a new X-Forwarded-For per attempt changes nothing."""
    with running_roostd(FAST_HASHING) as d:
        statuses = [d.call("POST", "/login", {"username": "target", "password": f"guess {i}"},
                           headers=via(f"192.0.2.{i}")).status for i in range(8)]
        assert statuses[:5] == [401] * 5 and statuses[5:] == [429] * 3, statuses


def test_made_up_usernames_from_many_addresses_lock_nobody_out():
    """The issue's scenario: 50 wrong log-ins for made-up usernames, each with a
    different X-Forwarded-For, then the right password for a real account."""
    with running_roostd(PROXIED) as d:
        d.call("POST", "/users", {"username": "realuser", "password": "the real password"}, headers=via("198.51.100.20"))
        for i in range(50):
            r = d.call("POST", "/login", {"username": f"ghost{i}", "password": "wrong"}, headers=via(f"203.0.113.{i}"))
            assert_error(r, 401, "InvalidCredentials")
        # From its own address, and from one it never used.
        for address in ("198.51.100.20", "198.51.100.99"):
            r = d.call("POST", "/login", {"username": "realuser", "password": "the real password"}, headers=via(address))
            assert r.status == 200, (address, r)


def test_one_attackers_failures_never_refuse_another_address():
    with running_roostd(PROXIED) as d:
        d.call("POST", "/users", {"username": "victim", "password": "the real password"}, headers=via("198.51.100.20"))
        attacker = via("203.0.113.66")
        # Made-up usernames until the attacker's address is blocked...
        statuses = [d.call("POST", "/login", {"username": f"ghost{i}", "password": "x"}, headers=attacker).status for i in range(52)]
        assert statuses.count(401) == 50 and statuses[-1] == 429, statuses
        # ...and the victim's account, as hard as it lets one address try.
        r = d.call("POST", "/login", {"username": "victim", "password": "guess"}, headers=attacker)
        assert_error(r, 429, "TooManyAttempts")
        # The victim, from an address the account has never used, is not refused.
        r = d.call("POST", "/login", {"username": "victim", "password": "the real password"}, headers=via("198.51.100.77"))
        assert r.status == 200, r


def test_guessing_one_account_from_many_addresses_only_slows_new_addresses():
    with running_roostd(PROXIED) as d:
        d.call("POST", "/users", {"username": "popular", "password": "the real password"}, headers=via("198.51.100.20"))
        statuses = []
        for i in range(24):  # 4 guesses each from 6 addresses: 20 free, then one per 15 s
            r = d.call("POST", "/login", {"username": "popular", "password": f"guess {i}"}, headers=via(f"203.0.113.{i // 4}"))
            statuses.append(r.status)
            if r.status == 429:
                assert 1 <= int(r.header("Retry-After")) <= 15, r
        assert statuses[:21] == [401] * 21 and set(statuses[21:]) == {429}, statuses
        # Slowed, not locked: the account's own address logs in at once.
        r = d.call("POST", "/login", {"username": "popular", "password": "the real password"}, headers=via("198.51.100.20"))
        assert r.status == 200, r
        # A new address waits its turn (at most 15 s), then gets in.
        r = d.call("POST", "/login", {"username": "popular", "password": "the real password"}, headers=via("198.51.100.21"))
        assert_error(r, 429, "TooManyAttempts")
        time.sleep(int(r.header("Retry-After")) + 0.2)  # Retry-After reaches the end (LoginRule.wait)
        r = d.call("POST", "/login", {"username": "popular", "password": "the real password"}, headers=via("198.51.100.21"))
        assert r.status == 200, r


def _parallel_log_ins(d, bodies, headers=None):
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        return list(pool.map(lambda b: d.call("POST", "/login", b, headers=headers).status, bodies))


def test_parallel_wrong_log_ins_check_no_more_passwords_than_allowed():
    """Each 401 is a checked password; 30 at once may check 5, no more."""
    with running_roostd(FAST_HASHING) as d:
        d.sign_up("racer", password="the real password")
        statuses = _parallel_log_ins(d, [{"username": "racer", "password": f"guess {i}"} for i in range(30)])
        assert statuses.count(401) == 5, statuses
        assert set(statuses) <= {401, 429}, statuses
        # The address bucket: 80 made-up names at once from one address check at most 50.
        statuses = _parallel_log_ins(d, [{"username": f"ghost{i}", "password": "x"} for i in range(80)])
        assert statuses.count(401) <= 50, statuses
        assert set(statuses) <= {401, 429, 503}, statuses
