"""Direct push to APNs and FCM from the push outbox, against local HTTP/2
stand-ins over TLS (push_support.py) that verify provider tokens, headers
and payload limits and answer each error case: message alerts, provider
token reuse and refresh, connection reuse, token hygiene, back-off,
outage and recovery across kill -9."""

import tempfile
import time
from pathlib import Path

import pytest

from push_support import REGISTERED, Provider, config, device_name, env, message, metrics, recorded_delivered, register, unmask, user
from roost_harness import ADMIN_TOKEN as ADMIN, Roostd


@pytest.fixture
def world():
    with tempfile.TemporaryDirectory() as tmp:
        provider = Provider(Path(tmp)).start()
        daemons = []

        def start(extra="", push_extra="", **kw):
            data = Path(tmp) / f"roost{len(daemons)}"
            data.mkdir()
            roost = Roostd(str(data), config(provider, extra=extra, push_extra=push_extra, **kw), env=env(provider)).start()
            daemons.append(roost)
            return roost

        try:
            yield provider, start
        finally:
            for d in daemons:
                d.stop(strict=False)
            provider.stop()


def devices(roost):
    resp = roost.call("GET", "/admin/push/devices", token=ADMIN)
    assert resp.status == 200, resp.body
    # the admin API shows a token's first 6 characters and an opaque id, never the token (unmask checks)
    return unmask(resp.body, *REGISTERED, "a1b2")


def test_message_alerts_reach_apns_and_fcm_over_one_reused_connection(world):
    provider, start = world
    roost = start()
    alice, alice_token = user(roost, "alice")
    bob, bob_token = user(roost, "bob")
    carol, carol_token = user(roost, "carol")
    register(roost, bob_token, "phone-bob")
    register(roost, bob_token, "pixel-bob", platform="android")
    register(roost, bob_token, "web-bob", platform="web")
    register(roost, carol_token, "phone-carol")
    sent = message(roost, alice_token, bob, "hello bob")
    assert provider.wait_for(lambda p: len(p.delivered()) == 2), roost.log_text()
    time.sleep(0.3)
    assert not provider.errors, provider.errors
    apns = provider.delivered("apns")[0]
    assert apns["token"] == "phone-bob" and apns["env"] == "production" and apns["http_version"] == "2"
    h = apns["headers"]
    assert h["apns-push-type"] == "alert" and h["apns-priority"] == "10" and int(h["apns-expiration"]) > time.time()
    aps = apns["payload"]["aps"]
    assert aps["alert"] == {"title": "Alice", "body": "hello bob"}
    assert aps["thread-id"] == sent["threadId"] and aps["mutable-content"] == 1 and "badge" not in aps
    assert apns["payload"]["messageId"] == sent["_id"] and apns["payload"]["senderId"] == alice
    fcm = provider.delivered("fcm")[0]
    assert fcm["token"] == "pixel-bob"
    assert fcm["payload"]["notification"] == {"title": "Alice", "body": "hello bob"}
    assert fcm["payload"]["data"]["messageId"] == sent["_id"] and fcm["payload"]["android"]["priority"] == "HIGH"
    # carol got nothing: not a recipient; the web token is not APNs's or FCM's
    assert {r["token"] for r in provider.requests} == {"phone-bob", "pixel-bob"}

    # more messages: one provider token, one access token, one connection per host
    for i in range(20):
        message(roost, alice_token if i % 2 else carol_token, bob, f"n{i}")
    assert provider.wait_for(lambda p: len(p.delivered()) == 42), roost.log_text()
    assert len(provider.jwts) == 1 and len(provider.access_tokens) == 1
    assert len({r["conn"] for r in provider.requests if r["service"] == "apns"}) == 1
    assert len({r["conn"] for r in provider.requests if r["service"] == "fcm"}) == 1
    assert not provider.errors, provider.errors
    rows = recorded_delivered(roost, 42)
    text = metrics(roost)
    assert 'roost_push_deliveries_total{outcome="delivered",provider="apns"} 21' in text \
        or 'roost_push_deliveries_total{provider="apns",outcome="delivered"} 21' in text, text
    # the console's data: deliveries per device
    d = devices(roost)
    assert d["phone-bob"]["deliveries"] == 21 and d["pixel-bob"]["deliveries"] == 21 and d["phone-carol"]["deliveries"] == 0
    assert len(rows) == 42 and all(r["attempts"] == 1 for r in rows)
    # not for users or anonymous callers
    assert roost.call("GET", "/admin/push/devices", token=bob_token).status == 403
    assert roost.call("GET", "/admin/push/deliveries").status == 401
    # the credentials never reach the log
    log = roost.log_text()
    assert "PRIVATE KEY" not in log and provider.jwts[0][1] not in log and "ya29." not in log


def test_privacy_text_and_the_4kb_apns_limit(world):
    provider, start = world
    roost = start(push_extra="  alert_text: generic\n  generic_text: You have a new message\n")
    _, alice_token = user(roost, "alice")
    bob, bob_token = user(roost, "bob")
    register(roost, bob_token, "phone-bob")
    register(roost, bob_token, "pixel-bob", platform="android")
    message(roost, alice_token, bob, "the secret plan " + "é\"x" * 3000)
    assert provider.wait_for(lambda p: len(p.delivered()) == 2), roost.log_text()
    apns = provider.delivered("apns")[0]["payload"]
    assert apns["aps"]["alert"] == {"body": "You have a new message"}
    fcm = provider.delivered("fcm")[0]["payload"]
    assert fcm["notification"] == {"body": "You have a new message"}
    assert "secret" not in str(apns) and "secret" not in str(fcm) and "Alice" not in str(apns)
    assert not provider.errors, provider.errors


def test_alerts_do_not_show_a_private_name(world):
    """users.private_fields hides the sender's name from alerts too: the
    username (public) is shown instead, and a private username as well gives
    the generic text."""
    provider, start = world
    for private, shown in (("[name]", "alice"), ("[name, username]", "New message"), ("[email]", "Alice")):
        provider.requests.clear()
        roost = start(extra=f"users:\n  private_fields: {private}\n", push_extra="  generic_text: New message\n")
        _, alice_token = user(roost, "alice")
        bob, bob_token = user(roost, "bob")
        register(roost, bob_token, "phone-bob")
        message(roost, alice_token, bob, "hi")
        assert provider.wait_for(lambda p: len(p.delivered()) == 1), roost.log_text()
        assert provider.delivered("apns")[0]["payload"]["aps"]["alert"] == {"title": shown, "body": "hi"}, private


def test_a_long_text_is_shortened_to_fit_4kb(world):
    provider, start = world
    roost = start()
    _, alice_token = user(roost, "alice")
    bob, bob_token = user(roost, "bob")
    register(roost, bob_token, "phone-bob")
    text = "ünïcödé \"quoted\" \\ " * 600  # ~12 KB, escaping makes it larger
    message(roost, alice_token, bob, text)
    assert provider.wait_for(lambda p: len(p.delivered()) == 1), roost.log_text()
    assert not provider.errors, provider.errors  # the stand-in refuses > 4096 bytes
    body = provider.delivered("apns")[0]["payload"]["aps"]["alert"]["body"]
    assert body.endswith("…") and text.startswith(body[:-1]) and len(body) > 1000


def test_token_hygiene_removes_only_dead_tokens(world):
    provider, start = world
    roost = start()
    _, alice_token = user(roost, "alice")
    bob, bob_token = user(roost, "bob")
    future = int((time.time() + 3600) * 1000)
    past = int((time.time() - 3600) * 1000)
    register(roost, bob_token, f"gone-{future}")       # unregistered after it was registered: removed
    register(roost, bob_token, f"gone-{past}")         # registered again since: kept
    register(roost, bob_token, "bad-token")            # BadDeviceToken in both environments: removed
    register(roost, bob_token, "sandbox-dev")          # a debug build's token: works in sandbox, kept
    register(roost, bob_token, "sandbox-known", environment="sandbox")
    register(roost, bob_token, "fcm-gone", platform="android")      # UNREGISTERED: removed
    register(roost, bob_token, "fcm-invalid", platform="android")   # INVALID_ARGUMENT naming the token: removed
    register(roost, bob_token, "fcm-payload", platform="android")   # INVALID_ARGUMENT about the payload: kept
    register(roost, bob_token, "phone-ok")
    message(roost, alice_token, bob, "one")
    assert provider.wait_for(lambda p: len(devices(roost)) == 5, timeout=20), (devices(roost), roost.log_text())

    def settled(d):  # each kept device's outcome recorded (the provider answers before roostd writes it)
        return d if d["sandbox-dev"]["deliveries"] + d["fcm-payload"]["failures"] + d[f"gone-{past}"]["failures"] == 3 else None

    provider.wait_for(lambda p: settled(devices(roost)), timeout=10)
    d = devices(roost)
    assert set(d) == {f"gone-{past}", "sandbox-dev", "sandbox-known", "fcm-payload", "phone-ok"}, d
    # BadDeviceToken was tried in both environments before the removal; the debug token moved to sandbox
    tried = [(r["env"], r["status"]) for r in provider.requests if r["token"] == "bad-token"]
    assert sorted(tried) == [("production", 400), ("sandbox", 400)]
    assert [(r["env"], r["status"]) for r in provider.requests if r["token"] == "sandbox-dev"] == [("production", 400), ("sandbox", 200)]
    assert [r["env"] for r in provider.requests if r["token"] == "sandbox-known"] == ["sandbox"]
    assert d["sandbox-dev"]["environment"] == "sandbox" and d["sandbox-dev"]["deliveries"] == 1
    assert d["fcm-payload"]["failures"] == 1 and "INVALID_ARGUMENT" in d["fcm-payload"]["lastError"]
    assert d[f"gone-{past}"]["failures"] == 1 and "410" in d[f"gone-{past}"]["lastError"]
    # the next message goes straight to the sandbox for the debug token, and not to removed tokens
    before = len(provider.requests)
    message(roost, alice_token, bob, "two")
    assert provider.wait_for(lambda p: len(p.requests) >= before + 5), roost.log_text()
    time.sleep(0.5)
    later = provider.requests[before:]
    assert sorted(r["token"] for r in later) == sorted([f"gone-{past}", "sandbox-dev", "sandbox-known", "fcm-payload", "phone-ok"])
    assert [r["env"] for r in later if r["token"] == "sandbox-dev"] == ["sandbox"]
    # every removal counted by reason and logged
    text = metrics(roost)
    for reason, n in (("Unregistered", 1), ("BadDeviceToken", 1), ("UNREGISTERED", 1), ("INVALID_ARGUMENT", 1)):
        assert f'roost_push_tokens_removed_total{{reason="{reason}"}} {n}' in text, (reason, text)
    assert roost.log_text().count("push device removed") == 4
    assert not provider.errors, provider.errors


def test_back_off_honours_retry_after_and_5xx_retries(world):
    provider, start = world
    roost = start()
    _, alice_token = user(roost, "alice")
    bob, bob_token = user(roost, "bob")
    register(roost, bob_token, "busy-1")    # 429 Retry-After: 1, twice
    register(roost, bob_token, "flaky-1")   # 500 once
    message(roost, alice_token, bob, "eventually")
    assert provider.wait_for(lambda p: len(p.delivered()) == 2, timeout=30), roost.log_text()
    busy = [r for r in provider.requests if r["token"] == "busy-1"]
    assert [r["status"] for r in busy] == [429, 429, 200]
    # the schedule alone waits ~0.2 s then ~0.3 s; Retry-After: 1 holds each retry back a second
    assert busy[1]["at"] - busy[0]["at"] >= 0.95 and busy[2]["at"] - busy[1]["at"] >= 0.95
    flaky = [r["status"] for r in provider.requests if r["token"] == "flaky-1"]
    assert flaky == [500, 200]
    def rows():
        return unmask(roost.call("GET", "/admin/push/deliveries", token=ADMIN).body, *REGISTERED)
    # the stand-in answers before roostd commits what it heard
    assert provider.wait_for(lambda p: all(r["status"] == "delivered" for r in rows().values()))
    rows = rows()
    assert rows["busy-1"]["attempts"] == 3 and rows["busy-1"]["status"] == "delivered"
    assert rows["flaky-1"]["attempts"] == 2
    # every attempt is recorded with the provider's answer
    log = roost.call("GET", f"/admin/push/deliveries/{rows['busy-1']['id']}", token=ADMIN).body["attemptLog"]
    assert [a["status"] for a in log] == [429, 429, 200] and "429" in log[0]["error"] and log[2]["error"] is None
    assert roost.call("GET", "/admin/push/deliveries/999999", token=ADMIN).status == 404
    assert roost.call("GET", f"/admin/push/deliveries/{rows['busy-1']['id']}", token=bob_token).status == 403
    d = devices(roost)
    assert d["busy-1"]["failures"] == 2 and d["busy-1"]["deliveries"] == 1 and "429" in d["busy-1"]["lastError"]




def test_expired_provider_token_is_refreshed_once(world):
    provider, start = world
    roost = start()
    _, alice_token = user(roost, "alice")
    bob, bob_token = user(roost, "bob")
    register(roost, bob_token, "phone-bob")
    message(roost, alice_token, bob, "first")
    assert provider.wait_for(lambda p: len(p.delivered()) == 1)
    provider.expire_next = True
    message(roost, alice_token, bob, "second")
    assert provider.wait_for(lambda p: len(p.delivered()) == 2), roost.log_text()
    statuses = [r["status"] for r in provider.requests]
    assert statuses == [200, 403, 200]
    assert len(provider.jwts) == 2  # signed again once, then reused
    message(roost, alice_token, bob, "third")
    assert provider.wait_for(lambda p: len(p.delivered()) == 3)
    assert len(provider.jwts) == 2 and not provider.errors, provider.errors


def test_outage_then_recovery_loses_nothing_across_kill9(world):
    provider, start = world
    roost = start(schedule="[0.2, 0.2, 0.5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]")
    _, alice_token = user(roost, "alice")
    bob, bob_token = user(roost, "bob")
    register(roost, bob_token, "phone-bob")
    register(roost, bob_token, "pixel-bob", platform="android")
    provider.down = True
    sent = [message(roost, alice_token, bob, f"during outage {i}")["_id"] for i in range(10)]
    assert provider.wait_for(lambda p: len(p.requests) >= 20)
    roost.kill9()
    roost.start()
    provider.down = False
    assert provider.wait_for(lambda p: len(p.delivered()) >= 20, timeout=40), roost.log_text()
    apns_ids = {r["payload"]["messageId"] for r in provider.delivered("apns")}
    fcm_ids = {r["payload"]["data"]["messageId"] for r in provider.delivered("fcm")}
    assert apns_ids == set(sent) and fcm_ids == set(sent)
    assert provider.wait_for(lambda p: roost.call("GET", "/admin/push/deliveries?status=pending", token=ADMIN).body == [])


def test_tokens_not_registered_again_expire(world):
    provider, start = world
    roost = start(push_extra="  token_max_age_days: 0.00003\n")  # about 2.6 s
    _, alice_token = user(roost, "alice")
    bob, bob_token = user(roost, "bob")
    register(roost, bob_token, "phone-stale")
    register(roost, bob_token, "phone-fresh")
    deadline = time.time() + 8
    while time.time() < deadline:   # the app registers this one again at every launch
        register(roost, bob_token, "phone-fresh")
        time.sleep(0.5)
    assert set(devices(roost)) == {"phone-fresh"}
    assert 'roost_push_tokens_removed_total{reason="stale"} 1' in metrics(roost)
    assert "push device removed" in roost.log_text()
    message(roost, alice_token, bob, "only fresh")
    assert provider.wait_for(lambda p: len(p.delivered()) == 1)
    time.sleep(0.3)
    assert [r["token"] for r in provider.requests] == ["phone-fresh"]


# The admin lists' `limit`: 1 to 1000 as the spec says; anything else is 400, never clamped
# (limit=5000 once answered a page of 1000, limit=x one of 100).
LIMITS = [("1", 200), ("1000", 200), ("0", 400), ("1001", 400), ("-5", 400), ("x", 400), ("", 400), ("2.5", 400)]


def test_admin_lists_check_their_limit(world):
    _, start = world
    roost = start()
    for path in ("/admin/push/devices", "/admin/push/deliveries"):
        for limit, status in LIMITS:
            resp = roost.call("GET", f"{path}?limit={limit}", token=ADMIN)
            assert resp.status == status, (path, limit, resp.body)
            if status == 400:
                assert resp.body["error"] == "InvalidQuery" and "1 to 1000" in resp.body["description"]
        # The caller is checked first: an anonymous bad limit is 401.
        assert roost.call("GET", f"{path}?limit=0").status == 401


@pytest.mark.parametrize("body,who,status", [
    ({"platform": "ios", "token": "a1b2", "environment": "staging"}, "user", 400),
    ({"platform": "android", "token": "a1b2", "environment": "sandbox"}, "user", 400),
    ({"platform": "ios", "token": "a1b2", "sync": "yes"}, "user", 400),
    ({"platform": "ios", "token": "a/b"}, "user", 400),
    # APNs tokens are hex: an even number of hex digits, nothing else
    ({"platform": "ios", "token": "phone-1"}, "user", 400),
    ({"platform": "ios", "token": "a1b"}, "user", 400),
    ({"platform": "ios", "token": "a1b2 "}, "user", 400),
    ({"platform": "ios", "token": "0x12"}, "user", 400),
    ({"platform": "ios", "token": "a1b2", "sync": True}, "anonymous", 401),
    ({"platform": "ios", "token": "zz", "sync": True}, "anonymous", 401),
    ({"platform": "ios", "token": "a1b2", "sync": True}, "admin", 403),
    ({"platform": "ios", "token": "a1b2", "environment": "production", "sync": True}, "user", 201),
    ({"platform": "ios", "token": "A1B2", "environment": "production", "sync": True}, "user", 201),
    ({"platform": "android", "token": "a1b2", "sync": True}, "user", 201),
])
def test_device_registration_checks_its_fields(world, body, who, status):
    provider, start = world
    roost = start()
    _, token = user(roost, "alice")
    resp = roost.call("POST", "/push/devices", body, {"user": token, "anonymous": None, "admin": ADMIN}[who])
    assert resp.status == status, resp.body
    if status >= 400:
        assert "error" in resp.body
        if body["token"] in ("phone-1", "a1b", "a1b2 ", "0x12") and who == "user":
            assert "hex" in resp.body["description"]
        assert devices(roost) == {}
    else:
        rows = unmask(roost.call("GET", "/admin/push/devices", token=ADMIN).body, body["token"])
        d = rows[body["token"]]
        assert d["platform"] == body["platform"] and d["sync"] is True and d["deliveries"] == 0
        assert d["environment"] == ("production" if body["platform"] == "ios" else None), d


@pytest.mark.parametrize("change,why", [
    (("key_file: apns.p8", "key_file: missing.p8"), "cannot read"),
    (("key_file: apns.p8", "key_file: fcm.json"), "the APNs key (.p8) cannot be used"),
])
def test_unusable_credentials_stop_the_start(world, change, why):
    provider, _ = world
    with tempfile.TemporaryDirectory() as data:
        roost = Roostd(data, config(provider).replace(*change), env=env(provider))
        roost.start(wait=False)
        deadline = time.time() + 20
        while roost.proc.poll() is None and time.time() < deadline:
            time.sleep(0.1)
        assert roost.proc.returncode not in (None, 0)
        log = roost.log_text()
        assert why in log and "PRIVATE KEY" not in log


def test_a_user_keeps_at_most_20_devices(world):
    """Registering a 21st device evicts the least recently registered one
    (re-registering renews a device); other users' devices are untouched."""
    _, start = world
    roost = start()
    _, alice_token = user(roost, "alice")
    _, bob_token = user(roost, "bob")
    register(roost, bob_token, "bob-phone")
    for i in range(20):
        register(roost, alice_token, f"dev-{i:02d}", platform="android" if i % 2 else "ios")
        time.sleep(0.002)
    register(roost, alice_token, "dev-00")  # renewed: now the newest
    time.sleep(0.002)
    register(roost, alice_token, "dev-20")
    time.sleep(0.002)
    register(roost, alice_token, "dev-21")
    mine = {device_name(d["token"]) for d in roost.call("GET", "/push/devices", token=alice_token).body}
    assert len(mine) == 20 and "dev-00" in mine and "dev-21" in mine
    assert "dev-01" not in mine and "dev-02" not in mine, sorted(mine)
    assert {device_name(d["token"]) for d in roost.call("GET", "/push/devices", token=bob_token).body} == {"bob-phone"}


def phones(roost, token, owner, n=20):
    """Registers `n` iOS devices for the user of `token`, named `<owner>-NN`."""
    for i in range(n):
        register(roost, token, f"{owner}-{i:02d}")


@pytest.mark.parametrize("max_rate,pushes", [(100, 300), (0, 300)])
def test_max_rate_paces_a_flood(world, max_rate, pushes):
    """`push.max_rate` holds a flood of pushes to that many a second (in chunks of
    100 ms worth), so a broadcast does not take the CPU from the requests in one burst;
    0 sends them as fast as the providers answer. Nothing is dropped either way."""
    provider, start = world
    roost = start(push_extra=f"  max_rate: {max_rate}\n")
    _, alice_token = user(roost, "alice")
    bob, bob_token = user(roost, "bob")
    phones(roost, bob_token, "bob")
    batch = [{"method": "POST", "path": "/messages", "body": {"recipientId": bob, "text": f"m{i}"}} for i in range(pushes // 20)]
    assert roost.call("POST", "/_batch", {"operations": batch}, alice_token).status == 200
    assert provider.wait_for(lambda p: len(p.delivered()) == pushes, timeout=30), len(provider.delivered())
    at = sorted(r["at"] for r in provider.requests)
    span = at[-1] - at[0]
    if max_rate:
        # 300 at 100/s: about 3 s (the bucket starts with one chunk of 10); never more than the
        # rate and the bucket's two chunks in any second
        assert span >= (pushes - 10) / max_rate * 0.9, span
        assert max(sum(1 for t in at if s <= t < s + 1) for s in at) <= max_rate + 20
    else:
        assert span < 2, span
    assert not provider.errors, provider.errors
    recorded_delivered(roost, pushes)


def test_max_rate_is_checked():
    with tempfile.TemporaryDirectory() as data:
        for bad in ("-1", "fast", "2000000"):
            roost = Roostd(data, f"push:\n  max_rate: {bad}\n")
            roost.start(wait=False)
            deadline = time.time() + 20
            while roost.proc.poll() is None and time.time() < deadline:
                time.sleep(0.1)
            assert roost.proc.returncode not in (None, 0)
            assert "push.max_rate must be a number from 0" in roost.log_text(), roost.log_text()


def test_one_caller_cannot_flood_the_push_outbox(world):
    """`rate_limits.push_recipients`: the recipients a caller's messages notify by push are
    paid from its budget before anything is written; past it the message is refused with 429
    and nothing of it stays (no message, no push). Another caller's messages still go."""
    provider, start = world
    roost = start(extra="rate_limits:\n  push_recipients: {per_hour: 1, burst: 2}\n")
    _, alice_token = user(roost, "alice")
    bob, bob_token = user(roost, "bob")
    _, carol_token = user(roost, "carol")
    phones(roost, bob_token, "bob")
    message(roost, alice_token, bob, "one")
    message(roost, alice_token, bob, "two")  # one recipient each: the burst of two is spent
    refused = roost.call("POST", "/messages", {"recipientId": bob, "text": "three"}, alice_token)
    assert refused.status == 429 and refused.body["error"] == "RateLimited", (refused.status, refused.body)
    assert "rate_limits.push_recipients" in refused.body["description"] and "try again in" in refused.body["description"], refused.body
    assert int(refused.headers["retry-after"]) >= 1, refused.headers
    message(roost, carol_token, bob, "from carol")  # her own budget
    assert provider.wait_for(lambda p: len(p.delivered()) == 60), len(provider.delivered())
    time.sleep(0.5)
    texts = sorted(r["payload"]["aps"]["alert"]["body"] for r in provider.delivered("apns"))
    assert texts == sorted(["one"] * 20 + ["two"] * 20 + ["from carol"] * 20), texts
    listed = roost.call("GET", "/messages", token=bob_token).body
    assert sorted(m["text"] for m in listed) == ["from carol", "one", "two"], listed
    assert 'roost_rate_limited_total{class="push_recipients"} 1' in metrics(roost)


def test_the_push_budget_does_not_tell_how_many_devices_a_recipient_has(world):
    """The charge is one per recipient whatever devices it has (none, or twenty): a sender
    cannot count someone's devices by when its budget runs out."""
    provider, start = world
    roost = start(extra="rate_limits:\n  push_recipients: {per_hour: 1, burst: 3}\n")
    _, alice_token = user(roost, "alice")
    bob, bob_token = user(roost, "bob")
    dave, _ = user(roost, "dave")  # no device
    phones(roost, bob_token, "bob")
    message(roost, alice_token, dave, "to dave")
    message(roost, alice_token, bob, "to bob")
    both = roost.call("POST", "/messages", {"recipients": [dave, bob], "text": "to both"}, alice_token)
    assert both.status == 429, (both.status, both.body)  # two recipients, one left: refused whole
    message(roost, alice_token, dave, "dave again")  # the one left: nothing of the refusal was spent
    refused = roost.call("POST", "/messages", {"recipientId": dave, "text": "no more"}, alice_token)
    assert refused.status == 429, (refused.status, refused.body)
    assert provider.wait_for(lambda p: len(p.delivered()) == 20), len(provider.delivered())
    time.sleep(0.5)
    assert {r["payload"]["aps"]["alert"]["body"] for r in provider.delivered("apns")} == {"to bob"}
