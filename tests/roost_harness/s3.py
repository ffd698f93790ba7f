"""`MotoS3`: a throwaway S3 stand-in (moto_server from tests/python/requirements.txt)
on a loopback port that checks SigV4 signatures, with one bucket, the
credentials roostd needs, and a boto3 client to look inside the bucket.

moto checks signatures only in its IAM mode: the first three requests (no
signature needed) make an IAM user, its access key and an allow-s3 policy;
every later request, roostd's and ours, must be signed with that key."""

import json
import pathlib
import socket
import subprocess
import sys
import time

from .paths import clean_env, free_port
from .processes import terminate

_UNSIGNED_SETUP_REQUESTS = 3


class MotoS3:
    def __init__(self, workdir, bucket="roost-files", versioning=False):
        self.workdir = pathlib.Path(workdir)
        self.bucket, self.versioning = bucket, versioning
        self.proc, self.port = None, None
        self.key_id = self.secret = None

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        self.port = self.port or free_port()
        self._launch()
        import boto3  # moto brings boto3; imported here so local-only runs need nothing
        setup = dict(endpoint_url=self.endpoint, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
        iam = boto3.client("iam", **setup)
        iam.create_user(UserName="roostd")
        key = iam.create_access_key(UserName="roostd")["AccessKey"]
        iam.put_user_policy(UserName="roostd", PolicyName="s3", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        self.key_id, self.secret = key["AccessKeyId"], key["SecretAccessKey"]
        self.client = boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                                   aws_access_key_id=self.key_id, aws_secret_access_key=self.secret)
        self.client.create_bucket(Bucket=self.bucket)
        if self.versioning:
            self.client.put_bucket_versioning(Bucket=self.bucket, VersioningConfiguration={"Status": "Enabled"})
        return self

    def _launch(self):
        moto = pathlib.Path(sys.executable).parent / "moto_server"
        env = clean_env(INITIAL_NO_AUTH_ACTION_COUNT=_UNSIGNED_SETUP_REQUESTS)
        self.log = open(self.workdir / f"moto-{time.monotonic_ns()}.log", "wb")
        self.proc = subprocess.Popen([str(moto), "-H", "127.0.0.1", "-p", str(self.port)], stdout=self.log,
                                     stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.1)
        raise AssertionError(f"moto_server did not start on port {self.port}")

    def stop(self):
        """Stops moto (its data goes with it)."""
        terminate(self.proc)
        self.proc = None
        if getattr(self, "log", None):
            self.log.close()

    def pause(self):
        """SIGSTOP: the port still accepts connections but nothing answers."""
        self.proc.send_signal(19)

    def resume(self):
        self.proc.send_signal(18)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ---------------------------------------------------------------- roostd
    def config(self, prefix="files", threshold_mib=None):
        """The roostd YAML lines for this bucket."""
        lines = ["files_store: s3", "s3:", f"  endpoint: {self.endpoint}", f"  bucket: {self.bucket}", "  region: us-east-1",
                 f"  prefix: {prefix}"]
        if threshold_mib:
            lines.append(f"  multipart_threshold_mib: {threshold_mib}")
        return "\n".join(lines) + "\n"

    def env(self):
        return {"ROOST_S3_ACCESS_KEY_ID": self.key_id, "ROOST_S3_SECRET_ACCESS_KEY": self.secret}

    # ---------------------------------------------------------------- looking
    def keys(self, prefix=""):
        """Every key under `prefix`, with its ETag."""
        out, token = {}, None
        while True:
            args = dict(Bucket=self.bucket, Prefix=prefix)
            if token:
                args["ContinuationToken"] = token
            page = self.client.list_objects_v2(**args)
            out.update({o["Key"]: o["ETag"] for o in page.get("Contents", [])})
            if not page.get("IsTruncated"):
                return out
            token = page["NextContinuationToken"]

    def versions(self, key):
        """How many versions of `key` were written (bucket versioning on)."""
        page = self.client.list_object_versions(Bucket=self.bucket, Prefix=key)
        return len([v for v in page.get("Versions", []) if v["Key"] == key])

    def get(self, key):
        return self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()

    def delete(self, key):
        self.client.delete_object(Bucket=self.bucket, Key=key)
