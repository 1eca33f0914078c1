# The consumer group's committed offsets after the recovery, as the cluster reports them.
: "${BOOTSTRAP:=198.18.3.2:9092}"
bin/kafka-consumer-groups.sh --bootstrap-server "$BOOTSTRAP" --describe --group rec-test-readers
