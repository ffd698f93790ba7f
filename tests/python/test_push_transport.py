"""The push client's transport (CCurlShim/roost_h2_direct.c): its own HTTP/2
over nghttp2 and OpenSSL to every provider that offers h2, libcurl for a server
that does not and behind an egress proxy, the server's certificate and name
checked, a server's stream limit kept, idle connections checked or opened again
without a failed attempt, and an unreachable provider that holds up no other."""

import tempfile
import time
from pathlib import Path

import pytest

from push_support import Provider, config, env, message, recorded_delivered, register, user
from roost_harness import ADMIN_TOKEN as ADMIN, Roostd
from roost_harness.paths import free_port
from roost_harness.pki import make_pki


@pytest.fixture
def world():
    """start(provider_options, config_changes, roost_env) -> (provider, roost); both stopped afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        started = []

        def start(provider_options=None, config_changes=None, roost_env=None):
            provider = Provider(Path(tmp), **(provider_options or {})).start()
            started.append(provider)
            text = config(provider)
            for old, new in (config_changes(provider) if callable(config_changes) else config_changes or {}).items():
                text = text.replace(old, new)
            data = Path(tmp) / "roost"
            data.mkdir()
            roost = Roostd(str(data), text, env=dict(env(provider), **(roost_env or {}))).start()
            started.append(roost)
            return provider, roost

        start.tmp = Path(tmp)
        try:
            yield start
        finally:
            for thing in reversed(started):
                thing.stop(strict=False) if isinstance(thing, Roostd) else thing.stop()


def alice_and_bob(roost, *devices):
    """Alice's token and Bob's id, Bob with `devices` ((name, platform) pairs)."""
    alice_token = user(roost, "alice")[1]
    bob, bob_token = user(roost, "bob")
    for name, platform in devices:
        register(roost, bob_token, name, platform=platform)
    return alice_token, bob


PHONE, PIXEL = ("phone-bob", "ios"), ("pixel-bob", "android")


def send(roost, alice_token, bob, count, prefix="m"):
    for i in range(count):
        message(roost, alice_token, bob, f"{prefix}{i}")


def libraries(roost):
    """The shared objects roostd has mapped now."""
    maps = Path(f"/proc/{roost.proc.pid}/maps").read_text()
    return {line.split()[-1].rsplit("/", 1)[-1] for line in maps.splitlines() if ".so" in line}


def loaded(roost, name):
    return any(lib.startswith(name) for lib in libraries(roost))


def deliveries(roost, status):
    resp = roost.call("GET", f"/admin/push/deliveries?status={status}&limit=1000", token=ADMIN)
    assert resp.status == 200, resp.body
    return resp.body


def test_apns_and_fcm_go_over_the_own_transport_without_libcurl(world):
    provider, roost = world()
    send(roost, *alice_and_bob(roost, PHONE, PIXEL), 5)
    assert provider.wait_for(lambda p: len(p.delivered()) == 10), roost.log_text()
    assert not provider.errors, provider.errors
    assert {r["http_version"] for r in provider.delivered()} == {"2"}
    # one connection per provider host, the user agent named
    assert len({r["conn"] for r in provider.requests if r["service"] == "apns"}) == 1
    assert {r["headers"].get("user-agent") for r in provider.delivered()} == {"roostd-push"}
    assert loaded(roost, "libnghttp2"), libraries(roost)
    assert not loaded(roost, "libcurl"), "libcurl was loaded although every provider speaks HTTP/2"


def test_a_server_without_http2_is_reached_through_libcurl(world):
    # FCM's HTTP v1 API answers HTTP/1.1 too; a server (or a proxy in front of it)
    # that offers no h2 gets the same requests through libcurl.
    provider, roost = world({"fcm_alpn": ("http/1.1",)})
    send(roost, *alice_and_bob(roost, PHONE, PIXEL), 3)
    assert provider.wait_for(lambda p: len(p.delivered()) == 6), roost.log_text()
    assert not provider.errors, provider.errors
    assert {r["http_version"] for r in provider.delivered("fcm")} == {"1.1"}
    assert {r["http_version"] for r in provider.delivered("apns")} == {"2"}
    assert loaded(roost, "libcurl")
    assert all(r["attempts"] == 1 for r in recorded_delivered(roost, 6))


def test_a_connection_closed_while_idle_is_opened_again_without_a_failed_attempt(world):
    provider, roost = world({"idle_timeout": 1})
    alice_token, bob = alice_and_bob(roost, PHONE, PIXEL)
    sent = 0
    for round in range(3):
        send(roost, alice_token, bob, 4, prefix=f"r{round} m")
        sent += 8
        assert provider.wait_for(lambda p: len(p.delivered()) == sent), roost.log_text()
        time.sleep(2.5)  # the servers close the idle connections meanwhile
    assert not provider.errors, provider.errors
    # a new connection for each round, and no push needed a second attempt
    assert len({r["conn"] for r in provider.requests if r["service"] == "apns"}) == 3
    assert len(provider.requests) == sent
    rows = recorded_delivered(roost, sent)
    assert all(r["attempts"] == 1 for r in rows)


def other_ca(provider):
    other = provider.tmp / "other-pki"
    other.mkdir()
    make_pki(other)
    return {f"ca_file: {provider.tmp / 'ca.pem'}": f"ca_file: {other / 'ca.pem'}"}


@pytest.mark.parametrize("changes, why", [
    (other_ca, "certificate"),
    # the certificates name localhost and 127.0.0.1; "127.1" reaches 127.0.0.1 by another name
    ({"url: https://127.0.0.1": "url: https://127.1"}, "certificate"),
], ids=["other CA", "wrong name"])
def test_a_server_that_cannot_prove_its_name_gets_nothing(world, changes, why):
    provider, roost = world(None, changes)
    send(roost, *alice_and_bob(roost, PHONE), 1, prefix="secret")

    def failed():
        rows = deliveries(roost, "pending")
        return rows and rows[0]["attempts"] >= 1 and rows[0]["lastError"]
    deadline = time.monotonic() + 20
    while not failed() and time.monotonic() < deadline:
        time.sleep(0.1)
    row = deliveries(roost, "pending")[0]
    assert row["attempts"] >= 1 and why in row["lastError"].lower(), row
    assert provider.requests == [], "a request reached a server whose certificate was not trusted"
    # the device stays: a TLS failure says nothing about the token
    devices = roost.call("GET", "/admin/push/devices", token=ADMIN).body
    assert len(devices) == 1, devices


class ConnectProxy:
    """An HTTP CONNECT proxy on loopback (an egress proxy as companies run
    them): it tunnels each connection to the host it names and counts them."""

    def __init__(self):
        import asyncio
        import threading
        self.tunnels = []
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        async def pipe(reader, writer):
            try:
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                writer.close()

        async def handle(reader, writer):
            head = await reader.readuntil(b"\r\n\r\n")
            method, target = head.split(b" ")[:2]
            if method != b"CONNECT":
                writer.write(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
                writer.close()
                return
            host, port = target.decode().rsplit(":", 1)
            self.tunnels.append(target.decode())
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

        async def serve():
            self.stopping = asyncio.Event()
            self.server = await asyncio.start_server(handle, "127.0.0.1", 0)
            self.port = self.server.sockets[0].getsockname()[1]
            ready.set()
            await self.stopping.wait()
            self.server.close()
            tunnels = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tunnels:
                t.cancel()
            await asyncio.gather(*tunnels, return_exceptions=True)

        self.thread = threading.Thread(target=lambda: self.loop.run_until_complete(serve()), daemon=True)
        self.thread.start()
        ready.wait(10)

    def stop(self):
        self.loop.call_soon_threadsafe(self.stopping.set)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture
def proxy():
    p = ConnectProxy()
    yield p
    p.stop()  # after the daemon (the `world` fixture, set up later, is torn down first)


def test_behind_an_egress_proxy_pushes_go_through_it(proxy, world):
    provider, roost = world(roost_env={"https_proxy": f"http://127.0.0.1:{proxy.port}"})
    send(roost, *alice_and_bob(roost, PHONE, PIXEL), 3)
    assert provider.wait_for(lambda p: len(p.delivered()) == 6), roost.log_text()
    assert not provider.errors, provider.errors
    # every connection went through the proxy, still HTTP/2 end to end
    ports = {f"127.0.0.1:{provider.ports[name]}" for name in ("production", "fcm")}
    assert ports <= set(proxy.tunnels), (proxy.tunnels, ports)
    assert {r["http_version"] for r in provider.delivered()} == {"2"}
    assert loaded(roost, "libcurl")


def test_a_server_allowing_few_streams_gets_no_more_at_once(world):
    # APNs lowers its limit (to 1 after a refusal); a client that sends more streams
    # than the server's SETTINGS allow before reading them gets them refused.
    provider, roost = world({"max_streams": 3})
    alice_token, bob = alice_and_bob(roost, *[(f"phone-{i:02d}", "ios") for i in range(20)])
    ops = [{"method": "POST", "path": "/messages", "body": {"recipientId": bob, "text": f"m{i}"}} for i in range(5)]
    assert roost.call("POST", "/_batch", {"operations": ops}, alice_token).status == 200
    assert provider.wait_for(lambda p: len(p.delivered()) == 100), roost.log_text()
    assert not provider.errors, provider.errors
    # one connection, every push answered at its first attempt
    assert len({r["conn"] for r in provider.requests if r["service"] == "apns"}) == 1
    assert len(provider.requests) == 100
    assert all(r["attempts"] == 1 for r in recorded_delivered(roost, 100))


def test_a_connection_idle_past_the_check_answers_a_ping_and_is_kept(world):
    provider, roost = world()
    alice_token, bob = alice_and_bob(roost, PHONE)
    message(roost, alice_token, bob, "before")
    assert provider.wait_for(lambda p: len(p.delivered()) == 1), roost.log_text()
    time.sleep(16)  # past the 15 s after which a kept connection must answer a PING first
    message(roost, alice_token, bob, "after")
    assert provider.wait_for(lambda p: len(p.delivered()) == 2), roost.log_text()
    assert len({r["conn"] for r in provider.requests}) == 1, "the connection that answered the PING was not kept"
    assert all(r["attempts"] == 1 for r in recorded_delivered(roost, 2))


def test_an_unreachable_provider_does_not_hold_up_the_other(world):
    closed = free_port()  # nothing listens there: FCM's server is down
    provider, roost = world(None, lambda p: {p.url("fcm"): f"https://127.0.0.1:{closed}"})
    send(roost, *alice_and_bob(roost, PHONE, PIXEL), 5)
    # APNs gets its pushes; FCM's wait with the reason, for the outbox's next attempt
    assert provider.wait_for(lambda p: len(p.delivered("apns")) == 5, timeout=10), roost.log_text()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        pending = deliveries(roost, "pending")
        if len(pending) == 5 and all(r["lastError"] for r in pending):
            break
        time.sleep(0.1)
    assert len(pending) == 5 and all(r["platform"] == "android" for r in pending), pending
    assert all("connect" in r["lastError"] for r in pending), pending
    assert provider.delivered("fcm") == []
