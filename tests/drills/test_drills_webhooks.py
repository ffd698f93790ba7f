"""The webhook drills (this directory) at CI size (about 20 s): the receiver
outage drill (40 messages, receiver down 3 s) and the crash drill with only
its messages hook (3 kill -9 cycles). `make drills` runs the same code at
full size (300 messages and a 10 s outage; 20 cycles with every write kind)
and records the summary lines in RELIABILITY.md."""

from drills import crash, outage


def test_receiver_outage_delivers_every_committed_message(tmp_path):
    result = outage.run(messages=40, load_seconds=6, outage_seconds=3, drain_timeout=30, workdir=tmp_path,
                        log=lambda *_: None)
    print(result["line"])
    assert result["failures"] == [], (result["failures"][:10], result["log_tail"])
    assert result["lost"] == [], result["lost"][:10]
    assert result["acked"] == 40
    assert result["during_outage"] > 0  # the outage really fell in the middle of the load
    assert result["stats"]["events"] == 40 and result["stats"]["invalid"] == 0


def test_crash_drill_delivers_every_committed_message_after_kill9(tmp_path):
    hook = crash.WebhookDeliveryHooks(drain_timeout=30)
    result = crash.run(cycles=3, workdir=tmp_path, max_load=1.0, hooks=[hook], log=lambda *_: None)
    print(result["line"])
    assert result["failures"] == [], (result["failures"][:10], result["log_tail"])
    assert result["lost"] == [], result["lost"][:10]
    assert result["info"]["kills"] == 3
    tried, acked = hook.counts()["messages"]
    assert acked > 0 and hook.final_stats is not None
    assert hook.final_stats["events"] >= acked and hook.final_stats["invalid"] == 0
