# On a client: the topic every drill writes to, on one cluster. Three replicas; a write
# acknowledged with acks=all is on at least two of them (min.insync.replicas=2), which is what
# Kafka promises survives the loss of any one broker.
: "${BOOTSTRAP:=198.18.4.1:9092,198.18.4.2:9092,198.18.4.3:9092}"
bin/kafka-topics.sh --bootstrap-server "$BOOTSTRAP" --create --if-not-exists --topic drills \
  --partitions 6 --replication-factor 3 --config min.insync.replicas=2
bin/kafka-topics.sh --bootstrap-server "$BOOTSTRAP" --describe --topic drills
