"""OMB's stock driver-kafka/kafka-group-all.yaml (the TR's CPU-2 driver) sets group.id; OMB
overrides it per subscription, so the runner must accept it and not apply it."""
from tr4947.omb.driver import consumer_config, parse_driver

DRIVER = {
    "name": "Kafka", "driverClass": "io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver",
    "replicationFactor": 3, "reset": True, "topicConfig": "min.insync.replicas=2\n",
    "commonConfig": "bootstrap.servers=127.0.0.1:9092\nrequest.timeout.ms=120000\n",
    "producerConfig": "acks=all\nlinger.ms=10\nbatch.size=1048576\n",
    "consumerConfig": "group.id=benchGroup\nauto.offset.reset=earliest\n"
                      "enable.auto.commit=false\nmax.partition.fetch.bytes=10485760\n",
}


def test_group_id_accepted_and_not_applied():
    cc = consumer_config(parse_driver(DRIVER))
    assert "group.id" not in cc.config          # the runner sets one per subscription
    assert any(n.startswith("consumer: group.id=benchGroup not applied") for n in cc.notes)
    assert cc.config["auto.offset.reset"] == "earliest"
