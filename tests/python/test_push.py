"""Direct push to APNs and FCM from the push outbox, against local HTTP/2
stand-ins over TLS (push_support.py) that verify provider tokens, headers
and payload limits and answer each error case: message alerts, provider
token reuse and refresh, connection reuse, token hygiene, back-off,
outage and recovery across kill -9."""

import tempfile
import time
from pathlib import Path

import pytest

from push_support import Provider, config, env, message, metrics, register, user
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
    return {d["token"]: d for d in resp.body}


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
    text = metrics(roost)
    assert 'roost_push_deliveries_total{outcome="delivered",provider="apns"} 21' in text \
        or 'roost_push_deliveries_total{provider="apns",outcome="delivered"} 21' in text, text
    # the console's data: deliveries per device
    d = devices(roost)
    assert d["phone-bob"]["deliveries"] == 21 and d["pixel-bob"]["deliveries"] == 21 and d["phone-carol"]["deliveries"] == 0
    rows = roost.call("GET", "/admin/push/deliveries?status=delivered&limit=1000", token=ADMIN).body
    assert len(rows) == 42 and all(r["attempts"] == 1 for r in rows)
    # not for users or anonymous callers
    assert roost.call("GET", "/admin/push/devices", token=bob_token).status == 403
    assert roost.call("GET", "/admin/push/deliveries").status == 401
    # the credentials never reach the log
    log = roost.log_text()
    assert "PRIVATE KEY" not in log and provider.jwts[0][1] not in log and "ya29." not in log
