from tr4947.measure import kafka_config

LOG = """\
[2026-01-01 10:00:00,000] INFO KafkaConfig values: 
\tmessage.max.bytes = 1048588
\tnum.network.threads = 3
[2026-01-01 10:00:00,001] INFO next line (x)
[2026-01-01 11:00:00,000] INFO KafkaConfig values: 
\tmessage.max.bytes = 10485760
\tnum.network.threads = 8
\treplica.fetch.max.bytes = 1048576
[2026-01-01 11:00:01,000] WARN The configuration 'fetch.purgatory.purge.interval.requests' was supplied but isn't a known config. (org.apache.kafka.clients.admin.AdminClientConfig)
"""


def test_latest_block_and_comparison():
    eff = kafka_config.effective(LOG)
    assert eff["num.network.threads"] == "8" and len(eff) == 3
    s = {x.key: x for x in kafka_config.compare(
        {"num.network.threads": "8", "message.max.bytes": "1048588", "x.unknown": "1"}, LOG)}
    assert s["num.network.threads"].applied
    assert not s["message.max.bytes"].applied and s["message.max.bytes"].effective == "10485760"
    assert s["x.unknown"].effective is None and not s["x.unknown"].applied
    assert kafka_config.unknown_keys(LOG) == {"fetch.purgatory.purge.interval.requests"}


def test_no_block_is_an_error():
    import pytest
    with pytest.raises(ValueError, match="has the broker started"):
        kafka_config.effective("[2026-01-01 10:00:00,000] INFO starting\n")
