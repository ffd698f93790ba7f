"""A test certificate authority and server certificates, made with the
openssl command (the TLS and proxy tests' real peers trust them)."""

import subprocess


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def issue(tmp, name, ca="ca"):
    """A P-256 server certificate for localhost/127.0.0.1 signed by the test CA."""
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", f"{name}.key",
            "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=tmp)
    (tmp / "ext.cnf").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                                 "extendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key", "-CAcreateserial",
            "-out", f"{name}.pem", "-days", "2", "-extfile", "ext.cnf", cwd=tmp)
    return tmp / f"{name}.pem", tmp / f"{name}.key"


def make_pki(tmp):
    """`tmp` with ca.pem/ca.key and two server certificates, first and second."""
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "2", "-subj", "/CN=Roost Test CA", cwd=tmp)
    issue(tmp, "first")
    issue(tmp, "second")
    return tmp
