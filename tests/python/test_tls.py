"""HTTPS in the daemon, against real TLS peers: curl, Python's ssl and
openssl s_client. The test makes its own CA and server certificates with the
openssl command; everything talks to 127.0.0.1."""

import http.client
import signal
import socket
import ssl
import subprocess
import time
import warnings

import pytest

from roost_harness import Roostd, free_port


class TLSDaemon:
    """roostd with a plain listener (for readiness) and a TLS one; the
    certificate and key live at fixed paths that a test can overwrite."""

    def __init__(self, tmp, pki, extra_config=""):
        self.tmp, self.pki = tmp, pki
        self.cert, self.key = tmp / "server.pem", tmp / "server.key"
        self.install("first")
        self.tls_port = free_port()
        config = f"tls:\n  certificate: {self.cert}\n  key: {self.key}\n{extra_config}"
        self.daemon = Roostd(tmp, config=config, args=("--listen", f"https://127.0.0.1:{self.tls_port}")).start()

    def install(self, name):
        self.cert.write_bytes((self.pki / f"{name}.pem").read_bytes())
        self.key.write_bytes((self.pki / f"{name}.key").read_bytes())

    def context(self):
        return ssl.create_default_context(cafile=str(self.pki / "ca.pem"))

    def connection(self, context=None):
        return http.client.HTTPSConnection("localhost", self.tls_port, context=context or self.context(), timeout=10)

    def reload(self):
        before = self.daemon.log_text().count("configuration reloaded")
        self.daemon.signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while self.daemon.log_text().count("configuration reloaded") == before:
            assert time.monotonic() < deadline, self.daemon.log_text()
            time.sleep(0.05)


@pytest.fixture
def tls_daemon(tmp_path, pki):
    d = TLSDaemon(tmp_path, pki)
    yield d
    assert d.daemon.stop() == 0


def peer_name(conn):
    return dict(x[0] for x in conn.sock.getpeercert()["subject"])["commonName"]


def get(conn, path="/healthz"):
    conn.request("GET", path)
    r = conn.getresponse()
    return r.status, dict(r.getheaders()), r.read()


def test_curl_over_tls_and_plain_side_by_side(tls_daemon):
    ca = str(tls_daemon.pki / "ca.pem")
    for extra in ([], ["--tlsv1.2", "--tls-max", "1.2"], ["--tlsv1.3"]):
        out = subprocess.run(["curl", "-sS", "-i", "--cacert", ca, *extra, f"https://localhost:{tls_daemon.tls_port}/healthz"],
                             capture_output=True, text=True, timeout=20)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("HTTP/1.1 200"), out.stdout
        assert "strict-transport-security: max-age=31536000" in out.stdout.lower(), out.stdout
    # The plain listener of the same daemon: no HSTS (it means nothing over HTTP).
    status, headers, _ = tls_daemon.daemon.request("GET", "/healthz")
    assert status == 200 and "Strict-Transport-Security" not in headers


def test_python_ssl_handshake_defaults(tls_daemon):
    ctx = tls_daemon.context()
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    with socket.create_connection(("127.0.0.1", tls_daemon.tls_port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            assert s.version() in ("TLSv1.2", "TLSv1.3")
            assert s.selected_alpn_protocol() == "http/1.1"
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := s.recv(4096):
                data += chunk
    assert data.startswith(b"HTTP/1.1 200") and b'{"status":"ok"}' in data, data
    # TLS 1.2 offers only forward-secret AEAD suites.
    ctx12 = tls_daemon.context()
    ctx12.maximum_version = ssl.TLSVersion.TLSv1_2
    conn = tls_daemon.connection(ctx12)
    assert get(conn)[0] == 200
    name, version, _ = conn.sock.cipher()
    assert version == "TLSv1.2" and name.startswith("ECDHE-") and ("GCM" in name or "CHACHA20" in name), name
    conn.close()
    # An untrusted certificate is refused by a verifying client.
    with pytest.raises(ssl.SSLCertVerificationError):
        get(tls_daemon.connection(ssl.create_default_context()))


@pytest.mark.parametrize("version", ["-tls1", "-tls1_1"])
def test_old_tls_versions_are_refused(tls_daemon, version):
    out = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{tls_daemon.tls_port}", version,
                          "-cipher", "DEFAULT:@SECLEVEL=0"], input="", capture_output=True, text=True, timeout=20)
    text = out.stdout + out.stderr
    assert out.returncode != 0, text
    assert "alert protocol version" in text, text
    # Python's ssl, pinned to TLS 1.0, fails the handshake the same way.
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TLS 1.0 is deprecated: that is the point
        ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1
    with socket.create_connection(("127.0.0.1", tls_daemon.tls_port), timeout=10) as raw:
        with pytest.raises(ssl.SSLError):
            ctx.wrap_socket(raw, server_hostname="localhost")
    # The daemon is unharmed.
    assert get(tls_daemon.connection())[0] == 200


def test_sighup_reloads_the_certificate_under_an_open_keep_alive_connection(tls_daemon):
    kept = tls_daemon.connection()
    assert get(kept)[0] == 200 and peer_name(kept) == "first"
    sock = kept.sock
    tls_daemon.install("second")
    tls_daemon.reload()
    # The open connection carries on, on the same socket, with its certificate.
    status, _, body = get(kept)
    assert status == 200 and body == b'{"status":"ok"}' and kept.sock is sock and peer_name(kept) == "first"
    # New connections get the new certificate.
    fresh = tls_daemon.connection()
    assert get(fresh)[0] == 200 and peer_name(fresh) == "second"
    # A broken pair (key of another certificate) keeps the running one and says why.
    tls_daemon.key.write_bytes((tls_daemon.pki / "first.key").read_bytes())
    tls_daemon.reload()
    assert "TLS certificate reload failed" in tls_daemon.daemon.log_text()
    assert "loading the private key" in tls_daemon.daemon.log_text()
    newest = tls_daemon.connection()
    assert get(newest)[0] == 200 and peer_name(newest) == "second"
    assert get(kept)[0] == 200 and get(fresh)[0] == 200
    for c in (kept, fresh, newest):
        c.close()


def test_hsts_is_configurable(tmp_path, pki):
    d = TLSDaemon(tmp_path, pki, extra_config='  hsts: "max-age=63072000; includeSubDomains"\n')
    try:
        assert get(d.connection())[1]["Strict-Transport-Security"] == "max-age=63072000; includeSubDomains"
    finally:
        d.daemon.stop()


@pytest.mark.parametrize("config, message", [
    ("", "needs tls.certificate and tls.key"),
    ("tls: {certificate: /nonexistent/cert.pem, key: /nonexistent/key.pem}\n", "/nonexistent/cert.pem"),
])
def test_tls_listener_without_a_usable_pair_does_not_start(tmp_path, config, message):
    d = Roostd(tmp_path, config=config, args=("--listen", f"https://127.0.0.1:{free_port()}")).start(wait=False)
    assert d.proc.wait(timeout=20) == 1
    assert message in d.log_text(), d.log_text()
    d.stop()
