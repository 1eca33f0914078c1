# Start the broker again with its own configuration: at start-up Kafka finds the leftover
# "-delete" directory and deletes it, then the broker rejoins and catches up.
: "${CLUSTER2:=198.18.2.1:9092,198.18.2.2:9092,198.18.2.3:9092,198.18.2.4:9092}"
: "${BROKER_ID:=$(sed -n 's/^\(broker\|node\)\.id=//p' config/server.properties)}"
# A broker that stopped abruptly stays registered until its session expires (ZooKeeper:
# zookeeper.session.timeout.ms, 18 s by default; KRaft: broker.session.timeout.ms, 9 s). On
# ZooKeeper-era Kafka a start before that fails with NodeExistsException, so wait until the
# cluster no longer lists it.
for _ in $(seq 1 30); do
  bin/kafka-broker-api-versions.sh --bootstrap-server "$CLUSTER2" 2>/dev/null \
    | grep -q "(id: $BROKER_ID rack" || break
  sleep 2
done
bin/kafka-server-start.sh -daemon config/server.properties
