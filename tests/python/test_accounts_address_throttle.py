"""Log-in throttling per client address, on a daemon of its own."""

from roost_harness import FAST_HASHING, assert_error, running_roostd


def test_address_throttle():
    """50 failures from one address block it for usernames it does not know,
    but not for an account that has logged in (or signed up) from there."""
    with running_roostd(FAST_HASHING) as d:
        d.sign_up("eve", password="eve's real password")
        blocked_at = None
        for i in range(60):
            r = d.log_in(f"ghost{i}", "wrong password")
            if r.status == 429:
                blocked_at = i
                break
            assert_error(r, 401, "InvalidCredentials")
        assert blocked_at == 50, blocked_at
        r = d.log_in("ghost-new", "wrong password")
        assert_error(r, 429, "TooManyAttempts")
        assert int(r.header("Retry-After")) >= 1
        # eve signed up from this address: its failures for other names do not lock her out.
        assert d.log_in("eve", "eve's real password").status == 200
