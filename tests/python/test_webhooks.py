"""Outgoing webhooks from the durable outbox: signed (verified with the
official standardwebhooks library), retried with stable ids, never lost
across kill -9, dead-lettered and re-queued through the admin API."""

import tempfile
import time

from roost_harness import ADMIN_TOKEN as ADMIN, Roostd
from webhook_support import Receiver, config, recorded_delivery, user


def message(roost, token, to, text):
    resp = roost.call("POST", "/messages", {"recipientId": to, "text": text}, token)
    status, body = resp.status, resp.body
    assert status == 201, body
    return body


def test_message_webhook_is_signed_and_carries_profile_and_tokens():
    receiver = Receiver().start()
    with tempfile.TemporaryDirectory() as tmp:
        roost = Roostd(tmp, config(receiver.url)).start()
        try:
            alice, alice_token = user(roost, "alice")
            bob, bob_token = user(roost, "bob")
            assert roost.call("POST", "/push/devices", {"platform": "ios", "token": "b0b0b0b0"}, bob_token).status == 201
            # a refused message (sent as someone else) commits nothing and fires nothing
            assert roost.call("POST", "/messages", {"recipientId": bob, "senderId": bob, "text": "x"}, alice_token).status == 403
            sent = message(roost, alice_token, bob, "hello bob")
            assert receiver.wait_for(lambda r: len(r.accepted()) == 1), roost.log_text()
            rows = recorded_delivery(roost)
            time.sleep(0.3)
            assert len(receiver.requests) == 1
            webhook_id, payload = receiver.accepted()[0]
            assert webhook_id.startswith("msg_evt_")
            assert payload["type"] == "message.created"
            data = payload["data"]
            assert data["message"]["_id"] == sent["_id"] and data["message"]["text"] == "hello bob"
            assert data["sender"]["_id"] == alice and data["sender"]["name"] == "Alice"
            assert "email" not in data["sender"] and "_acl" not in data["sender"]
            assert data["recipients"] == [{"_id": bob, "devices": [{"platform": "ios", "token": "b0b0b0b0"}]}]
            # the metrics counter counts it
            resp = roost.call("GET", "/healthz")
            status, _ = resp.status, resp.body
            text = __import__("urllib.request").request.urlopen(roost.base + "/metrics").read().decode()
            assert 'roost_webhook_deliveries_total{outcome="delivered"} 1' in text
            # the admin API shows it delivered
            assert rows[0]["status"] == "delivered" and rows[0]["webhookId"] == webhook_id
        finally:
            roost.stop()
            receiver.stop()


def test_retries_after_receiver_errors_with_the_same_id():
    receiver = Receiver(plan=[500, 503, 429]).start()
    with tempfile.TemporaryDirectory() as tmp:
        roost = Roostd(tmp, config(receiver.url)).start()
        try:
            _, alice_token = user(roost, "alice")
            bob, _ = user(roost, "bob")
            message(roost, alice_token, bob, "are you there?")
            assert receiver.wait_for(lambda r: len(r.accepted()) == 1, timeout=30), roost.log_text()
            ids = {h["webhook-id"] for h, _, _, _ in receiver.requests}
            assert len(receiver.requests) == 4 and len(ids) == 1
            statuses = [s for _, _, s, _ in receiver.requests]
            assert statuses == [500, 503, 429, 200]
            rows = recorded_delivery(roost)
            detail = roost.call("GET", f"/admin/webhooks/deliveries/{rows[0]['id']}", token=ADMIN).body
            assert [a["status"] for a in detail["attemptLog"]] == [500, 503, 429, 200]
        finally:
            roost.stop()
            receiver.stop()


def test_receiver_down_then_back_gets_every_message_and_survives_kill9():
    receiver = Receiver()  # not started: connection refused
    with tempfile.TemporaryDirectory() as tmp:
        roost = Roostd(tmp, config(receiver.url, schedule="[0.2, 0.2, 0.5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]")).start()
        try:
            _, alice_token = user(roost, "alice")
            bob, _ = user(roost, "bob")
            sent = [message(roost, alice_token, bob, f"message {i}")["_id"] for i in range(5)]
            # the 201 means committed: kill -9 at once, before any delivery could succeed
            roost.kill9()
            receiver.start()
            roost.start()
            assert receiver.wait_for(lambda r: {p["data"]["message"]["_id"] for _, p in r.accepted()} == set(sent), timeout=30), roost.log_text()
            by_message = {}
            for webhook_id, payload in receiver.accepted():
                by_message.setdefault(payload["data"]["message"]["_id"], set()).add(webhook_id)
            assert all(len(ids) == 1 for ids in by_message.values())  # stable ids
            assert len({i for ids in by_message.values() for i in ids}) == 5
        finally:
            roost.stop()
            receiver.stop()


def test_dead_letter_and_requeue_and_410_disables():
    receiver = Receiver(plan=[500, 500]).start()
    with tempfile.TemporaryDirectory() as tmp:
        roost = Roostd(tmp, config(receiver.url, events=("notes.created", "notes.deleted"), schedule="[0.2]")).start()
        try:
            _, token = user(roost, "alice")
            resp = roost.call("POST", "/notes", {"text": "x"}, token)
            status, note = resp.status, resp.body
            assert status == 201
            def dead():
                rows = roost.call("GET", "/admin/webhooks/deliveries?status=dead", token=ADMIN).body
                return rows
            deadline = time.monotonic() + 10
            while not dead() and time.monotonic() < deadline:
                time.sleep(0.1)
            rows = dead()
            assert len(rows) == 1 and rows[0]["attempts"] == 2 and rows[0]["lastStatus"] == 500
            assert roost.call("POST", f"/admin/webhooks/deliveries/{rows[0]['id']}/retry", token=ADMIN).status == 200
            assert receiver.wait_for(lambda r: len(r.accepted()) == 1), roost.log_text()
            assert receiver.accepted()[0][1]["type"] == "notes.created"
            assert receiver.accepted()[0][1]["data"]["_id"] == note["_id"]
            # users may not use the admin API
            assert roost.call("GET", "/admin/webhooks/deliveries", token=token).status == 403
            # 410 Gone disables the endpoint
            receiver.plan = [410]
            assert roost.call("DELETE", f"/notes/{note['_id']}", token=token).status == 200
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                endpoints = roost.call("GET", "/admin/webhooks/endpoints", token=ADMIN).body
                if not endpoints[0]["enabled"]:
                    break
                time.sleep(0.1)
            assert endpoints[0]["enabled"] is False and endpoints[0]["disabledReason"] == "410 Gone"
            assert endpoints[0]["secret"] == "whsec_…"
        finally:
            roost.stop()
            receiver.stop()


def test_gorush_payload_and_admin_endpoints():
    receiver = Receiver().start()
    with tempfile.TemporaryDirectory() as tmp:
        roost = Roostd(tmp, config("http://127.0.0.1:9/unused", events=("notes.created",))).start()
        try:
            resp = roost.call("POST", "/admin/webhooks/endpoints",
                                         {"name": "gorush", "url": receiver.url, "events": ["message.created"], "format": "gorush"}, ADMIN)
            status, created = resp.status, resp.body
            assert status == 201 and created["secret"].startswith("whsec_")
            receiver.verifier = __import__("standardwebhooks.webhooks", fromlist=["Webhook"]).Webhook(created["secret"])
            _, alice_token = user(roost, "alice")
            bob, bob_token = user(roost, "bob")
            roost.call("POST", "/push/devices", {"platform": "android", "token": "bob-android"}, bob_token)
            roost.call("POST", "/push/devices", {"platform": "ios", "token": "b0b1b0b1"}, bob_token)
            roost.call("POST", "/push/devices", {"platform": "web", "token": "bob-web"}, bob_token)
            message(roost, alice_token, bob, "ping")
            assert receiver.wait_for(lambda r: len(r.accepted()) == 1), roost.log_text()
            body = receiver.accepted()[0][1]
            notes = {n["platform"]: n for n in body["notifications"]}
            assert notes[1]["tokens"] == ["b0b1b0b1"] and notes[2]["tokens"] == ["bob-android"]
            assert notes[1]["message"] == "ping" and notes[1]["title"] == "Alice"
            assert roost.call("DELETE", "/admin/webhooks/endpoints/gorush", token=ADMIN).status == 200
        finally:
            roost.stop()
            receiver.stop()


def test_hooks_subcommand_lists_hooks_in_run_order():
    import subprocess
    from roost_harness import binary
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/roost.yaml"
        open(path, "w").write("messaging:\n  threads: convos\n  messages: notes\n")
        out = subprocess.run([str(binary()), "hooks", "--config", path], capture_output=True, text=True, check=True).stdout
        lines = out.splitlines()
        ids = [line.split()[4] for line in lines if line.startswith("beforeCreate notes")]
        assert ids == ["messaging.sender", "messaging.acl", "messaging.thread", "messaging.push"]
        assert any("webhooks.outbox" in line and line.startswith("beforeDelete *") for line in lines)
