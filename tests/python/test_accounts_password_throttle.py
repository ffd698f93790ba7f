"""Guessing the password of a signed-in account through `oldPassword` (a
stolen session token) is throttled exactly like log-in: the same counters
(per username and address, per address, per account from unknown addresses),
the same 429 `TooManyAttempts` with `Retry-After`, and the right password
works again once the block is over.

The test client plays a trusted proxy (127.0.0.1) and names the client
address in X-Forwarded-For, so one daemon serves many addresses."""

import concurrent.futures
import itertools
import time

import pytest

from roost_harness import ADMIN_TOKEN, FAST_HASHING, assert_error, running_roostd

PROXIED = FAST_HASHING + f'admin_token: {ADMIN_TOKEN}\ntrusted_proxies: ["127.0.0.1"]\n'
RIGHT = "the right password"
HOME = "198.51.100.20"  # every account signs up from here: an address it knows
_addresses = (f"203.0.{b}.{c}" for b in range(113, 120) for c in range(1, 255))
_names = (f"user{i}" for i in itertools.count())


# A block ends at a whole second of the daemon's clock, and Retry-After counts from the whole
# second the refused attempt was made in: waiting Retry-After seconds after its answer always
# reaches the end (LoginRule.wait). SLACK covers sleeping's own jitter.
SLACK = 0.2


def via(address):
    return {"X-Forwarded-For": address}


@pytest.fixture(scope="module")
def d():
    with running_roostd(PROXIED) as daemon:
        yield daemon


class Account:
    """A fresh account on the module's daemon, signed up from HOME, with its password and session."""

    def __init__(self, d):
        self.d, self.name, self.password = d, next(_names), RIGHT
        r = d.call("POST", "/users", {"username": self.name, "password": RIGHT}, headers=via(HOME))
        assert r.status == 201, r
        self.id, self.token = r.body["user"]["_id"], r.body["token"]

    def change(self, old, new="a brand new password", address=HOME, **extra):
        """PATCH a new password with `old` as oldPassword (None: left out), from `address`."""
        body = {"password": new, **extra}
        if old is not None:
            body["oldPassword"] = old
        r = self.d.call("PATCH", f"/users/{self.id}", body, token=self.token, headers=via(address))
        if r.status == 200:
            self.password = new
        return r

    def log_in(self, password, address=HOME):
        return self.d.call("POST", "/login", {"username": self.name, "password": password}, headers=via(address))


def wrong(i):
    return f"wrong guess {i}"


def assert_refused(r, longest=900):
    assert_error(r, 429, "TooManyAttempts")
    wait = int(r.header("Retry-After"))
    assert 1 <= wait <= longest, r
    return wait


def guesses(account, count, address, parallel):
    """`count` wrong oldPasswords from `address`, one after another or all at once: their statuses."""
    if not parallel:
        return [account.change(wrong(i), address=address).status for i in range(count)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(lambda i: account.change(wrong(i), address=address).status, range(count)))


# (address the guesses come from, parallel): from the account's own address only
# the username+address counter applies; from a new one the address and account
# counters count too, and the username+address one still stops the burst first.
BURSTS = [(HOME, False), (HOME, True), ("new", False), ("new", True)]


def burst(victim, address, elsewhere, parallel):
    """One burst of wrong oldPasswords from `address` and what follows it, asserted as it goes."""
    if parallel:
        statuses = guesses(victim, 12, address, parallel)
        # Each 403 is a checked password: five, however they arrive.
        assert statuses.count(403) == 5 and statuses.count(429) == 7, statuses
        first = 2
    else:
        assert guesses(victim, 4, address, parallel) == [403] * 4
        fifth = time.monotonic()
        assert_error(victim.change(wrong(4), address=address), 403, "Forbidden")
        # The fifth blocked the pair for 2 s: in whole seconds, at least until 1 s after it was sent.
        rest = [(time.monotonic(), victim.change(wrong(i), address=address)) for i in range(5, 12)]
        sent, right = time.monotonic(), victim.change(RIGHT, address=address)
        assert sent < fifth + 1, "too slow to tell (the block may be over)"
        first = [assert_refused(r) for _, r in rest][0]
        # The right one, next: refused, and the password is not changed.
        assert_refused(right)
    # Once the block is over, one more wrong guess blocks for longer...
    time.sleep(first + SLACK)
    assert_error(victim.change(wrong(99), address=address), 403, "Forbidden")
    # ...and the right one is refused, as is the right log-in from there (the same counters)...
    wait = assert_refused(victim.change(RIGHT, address=address))
    assert wait > 1
    assert_refused(victim.log_in(RIGHT, address=address))
    # ...but not a log-in from another address (a guesser never locks the owner out).
    assert victim.log_in(RIGHT, address=elsewhere).status == 200
    time.sleep(wait + SLACK)
    r = victim.change(RIGHT, address=address)
    assert r.status == 200, r
    assert victim.log_in(RIGHT).status == 401
    assert victim.log_in(victim.password).status == 200


@pytest.fixture(scope="module")
def bursts(d):
    """The four bursts run at once, each on its own account and addresses (they mostly wait
    out blocks): each case's outcome, None or the exception its assertions raised."""
    cases = {(origin, parallel): (Account(d), next(_addresses) if origin == "new" else origin, next(_addresses))
             for origin, parallel in BURSTS}
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(cases)) as pool:
        running = {case: pool.submit(burst, *args, case[1]) for case, args in cases.items()}
        return {case: future.exception() for case, future in running.items()}


@pytest.mark.parametrize("origin,parallel", BURSTS)
def test_a_burst_of_wrong_old_passwords_is_throttled_before_the_right_one(bursts, origin, parallel):
    if bursts[(origin, parallel)] is not None:
        raise bursts[(origin, parallel)]


def test_old_password_and_log_in_share_one_budget(d):
    """Three wrong log-ins and two wrong oldPasswords are five failures for the pair;
    after the block, one more of either kind blocks both for longer."""
    victim = Account(d)
    address = next(_addresses)
    for i in range(3):
        assert_error(victim.log_in(wrong(i), address=address), 401, "InvalidCredentials")
    for i in range(2):
        assert_error(victim.change(wrong(i), address=address), 403, "Forbidden")
    time.sleep(assert_refused(victim.log_in(RIGHT, address=address)) + SLACK)
    assert_error(victim.log_in(wrong(5), address=address), 401, "InvalidCredentials")
    assert_refused(victim.change(RIGHT, address=address))
    assert_refused(victim.log_in(RIGHT, address=address))
    # The admin resets a password without one: nothing to guess, never refused.
    r = d.call("PATCH", f"/users/{victim.id}", {"password": "reset by the admin"}, token=ADMIN_TOKEN, headers=via(address))
    assert r.status == 200, r


def test_guessing_from_many_addresses_slows_new_addresses_only(d):
    """The account counter: 4 guesses from each of 6 new addresses check 21 passwords,
    then new addresses wait (at most 15 s); the account's own address never does."""
    victim = Account(d)
    statuses = []
    for i in range(24):
        r = victim.change(wrong(i), address=f"192.0.2.{i // 4 + 10}")
        statuses.append(r.status)
        if r.status == 429:
            assert_refused(r, longest=15)
    assert statuses[:21] == [403] * 21 and set(statuses[21:]) == {429}, statuses
    # A right oldPassword from yet another address waits its turn...
    assert_refused(victim.change(RIGHT, address="192.0.2.99"), longest=15)
    # ...while the owner, from the address the account knows, changes it at once.
    r = victim.change(RIGHT)
    assert r.status == 200, r


def test_wrong_old_passwords_count_against_the_address(d):
    """The address counter: 5 wrong oldPasswords and 45 wrong log-ins for made-up
    names from one address are its 50; its next attempt, of either kind, is refused."""
    victim, other = Account(d), Account(d)
    address = next(_addresses)
    assert guesses(victim, 5, address, parallel=False) == [403] * 5
    for i in range(45):
        assert_error(d.call("POST", "/login", {"username": f"ghost{i}", "password": "x"}, headers=via(address)), 401)
    assert_refused(d.call("POST", "/login", {"username": "ghost-next", "password": "x"}, headers=via(address)))
    # Another account's oldPassword from that address: refused before it is checked.
    assert_refused(other.change(RIGHT, address=address))
    # From the account's own address it goes through.
    assert other.change(RIGHT).status == 200


# Requests that guess nothing: refused before any count or hash.
NOT_GUESSES = [
    ("no oldPassword", {"old": None}, 403),
    ("oldPassword not a string", {"old": 12345678}, 403),
    ("oldPassword null", {"old": None, "oldPassword": None}, 403),
    ("new password too short", {"old": "wrong but never checked", "new": "short"}, 400),
    ("new password not a string", {"old": "wrong but never checked", "new": ["x" * 8]}, 400),
]


def test_requests_that_guess_nothing_are_not_counted(d):
    victim, stranger = Account(d), Account(d)
    address = next(_addresses)
    for _ in range(3):
        for name, case, status in NOT_GUESSES:
            case = dict(case)
            r = victim.change(case.pop("old"), address=address, **case)
            assert r.status == status, (name, r)
        # Another user's token on the victim's account, with the right password: 403, not a guess.
        r = d.call("PATCH", f"/users/{victim.id}", {"password": "taken over!", "oldPassword": RIGHT},
                   token=stranger.token, headers=via(address))
        assert_error(r, 403, "Forbidden")
    # Fifteen refusals later, the pair's five failures are all still there.
    assert guesses(victim, 6, address, parallel=False) == [403] * 5 + [429]


def test_a_right_old_password_gives_its_count_back(d):
    """Four wrong guesses and the right one: the pair starts afresh (as after a log-in)."""
    victim = Account(d)
    address = next(_addresses)
    assert guesses(victim, 4, address, parallel=False) == [403] * 4
    assert victim.change(RIGHT, new="second password", address=address).status == 200
    assert guesses(victim, 4, address, parallel=False) == [403] * 4
    assert victim.change("second password", new="third password", address=address).status == 200
    assert victim.log_in("third password", address=address).status == 200


def test_a_signed_out_token_guesses_nothing(d):
    victim = Account(d)
    address = next(_addresses)
    assert d.call("POST", "/logout", token=victim.token).status == 200
    for i in range(8):
        assert_error(victim.change(wrong(i), address=address), 401, "InvalidToken")
    assert victim.log_in(RIGHT, address=address).status == 200
