"""The backlog run's phases, in OMB's order, driven by counters: pause -> build until the
requested size -> resume -> drain down to the drain ratio -> mixed for the test duration."""
import pytest

from tr4947.omb.phases import DONE, DRAIN, MIXED, PRODUCER_ONLY, BacklogPhases


def machine(**kw):
    logged = []
    args = dict(requested_bytes=10 * 1024 * 1024, message_size=1024, subscriptions_per_topic=1,
                drain_ratio=1.0, mixed_seconds=30.0, log=logged.append)
    args.update(kw)
    return BacklogPhases(**args), logged


def test_phases_in_omb_order_with_omb_log_lines():
    p, logged = machine()
    assert p.start(100.0) == ["pause"]
    assert p.state == PRODUCER_ONLY and p.poll_interval == 1.0 and p.need_wait
    # warm-up traffic was consumed (sent == received): no backlog yet
    assert p.update(101.0, sent=50_000, received=50_000) == []
    # 10 MiB = 10,240 messages of 1 KiB not yet received: the build is complete
    assert p.update(102.0, sent=60_239, received=50_000) == []
    assert p.update(103.0, sent=60_240, received=50_000) == ["resume"]
    assert p.state == DRAIN and p.poll_interval == 0.1
    # draining: still more than 1,000 messages behind
    assert p.update(104.0, sent=70_000, received=68_000) == []
    assert p.update(105.0, sent=72_000, received=71_000) == []     # 1,000 left: drained
    assert p.state == MIXED and p.label == MIXED and p.need_wait
    # the mixed phase runs its full length before the run may end
    p.update(134.9)
    assert p.need_wait
    p.update(135.0)
    assert p.state == DONE and not p.need_wait and p.label == MIXED
    assert [h[0] for h in p.history] == [PRODUCER_ONLY, DRAIN, MIXED]
    assert [h[1] for h in p.history] == [100.0, 103.0, 105.0]
    assert logged == ["Stopping all consumers to build backlog",
                      "--- Completed backlog build in 3 s ---",
                      "--- Start draining backlog ---",
                      "--- Completed backlog draining in 2 s ---"]


def test_resume_is_asked_for_exactly_once():
    p, _ = machine()
    p.start(0.0)
    actions = []
    for t in range(1, 20):
        actions += p.update(float(t), sent=20_000 * t, received=0)
    assert actions == ["resume"]


def test_backlog_counts_every_subscription():
    # two subscriptions: each message sent must be received twice
    p, _ = machine(subscriptions_per_topic=2, requested_bytes=2048 * 1024)
    p.start(0.0)
    assert p.backlog_messages(sent=1000, received=1000) == 1000
    assert p.update(1.0, sent=2048, received=2048) == ["resume"]   # 2,048 KiB behind


@pytest.mark.parametrize("ratio,expected", [(1.0, 1000), (0.9, 1023), (0.0, 10_240)])
def test_drain_target_follows_backlog_drain_ratio(ratio, expected):
    # OMB: max(1000, (long) ((1 - backlogDrainRatio) x requested / messageSize)); Java's
    # double arithmetic gives 1023.99... for 0.9, truncated to 1023, as here
    p, _ = machine(drain_ratio=ratio)
    assert p.min_backlog == expected
