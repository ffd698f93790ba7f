"""Request paths of the live endpoints (`/events`, `/:collection/_live`) and
one metric read from /metrics, for the live drill and tests."""

import json
import urllib.parse

from roost_harness import Client


def events_path(subscriptions, **params):
    q = {"subscribe": json.dumps(subscriptions), **params}
    return "/events?" + urllib.parse.urlencode(q)


def live_path(collection, query=None, **params):
    q = dict(params)
    if query is not None:
        q["query"] = json.dumps(query)
    return f"/{collection}/_live" + ("?" + urllib.parse.urlencode(q) if q else "")


def metric(port, name):
    """The value of one unlabelled metric on /metrics (0.0 when absent)."""
    c = Client(port, timeout=10)
    try:
        text = c.request("GET", "/metrics").raw.decode()
    finally:
        c.close()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0
