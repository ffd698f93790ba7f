"""`Cluster`: several roostd nodes sharing one PostgreSQL database and one S3
bucket (issue #17), each on its own port with its own data directory, as a
load balancer would see them. The database is a fresh one on a
`ThrowawayPostgres` (roost_harness.postgres), the bucket a `MotoS3`
(roost_harness.s3); both are the caller's, so several clusters can share them.

    with Cluster(tmp, postgres_cluster.database(), s3, extra_yaml) as nodes:
        a, b, c = nodes
        a.call("POST", "/notes", {...}); b.call("GET", ...)

Every node gets the same configuration file text (the database, the bucket,
`extra_yaml`), so what one node knows, every node knows; only the port and
the data directory (its lock, logs, staging copies) are the node's own."""

import pathlib
import time

from .daemon import Roostd, RoostdError


class Cluster:
    """`count` nodes named a, b, c, ... under `workdir`; started together, so
    they race through the migrations (one at a time, under an advisory lock)."""

    def __init__(self, workdir, database_url, s3, extra_yaml="", count=3, prefix="files", env=None):
        self.workdir = pathlib.Path(workdir)
        self.database_url, self.s3 = database_url, s3
        self.config = f"database_url: {database_url}\n" + s3.config(prefix=prefix) + extra_yaml
        names = "abcdefghij"[:count]
        self.nodes = [Roostd(self.workdir / name, self.config, env={**s3.env(), **(env or {})}) for name in names]
        for name, node in zip(names, self.nodes):
            node.name = name

    def start(self, timeout=60):
        """Starts every node at once, then waits for each to answer /healthz."""
        for node in self.nodes:
            node.start(wait=False)
        for node in self.nodes:
            node.wait_ready(timeout)
        return self

    def stop(self):
        errors = []
        for node in self.nodes:
            try:
                node.stop(timeout=20, strict=False)
            except RoostdError as error:  # stop the others anyway
                errors.append(error)
            node.close()
        if errors:
            raise errors[0]

    def __iter__(self):
        return iter(self.nodes)

    def __getitem__(self, index):
        return self.nodes[index]

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def logs(self):
        """Every node's log, each under its name: for assertion messages."""
        return "\n".join(f"--- node {n.name}\n{n.log_tail(30)}" for n in self.nodes)


def wait_until(predicate, timeout=30, interval=0.1):
    """Calls `predicate` until it returns something true (returned) or `timeout` passes (None)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)
