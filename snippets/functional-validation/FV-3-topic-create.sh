# Same topic on both clusters: 4 partitions, 2 replicas each.
: "${CLUSTER1:=198.18.1.1:9092,198.18.1.2:9092,198.18.1.3:9092,198.18.1.4:9092}"
: "${CLUSTER2:=198.18.2.1:9092,198.18.2.2:9092,198.18.2.3:9092,198.18.2.4:9092}"
for bootstrap in "$CLUSTER1" "$CLUSTER2"; do
  bin/kafka-topics.sh --bootstrap-server "$bootstrap" --create --topic __a_demo_topic \
    --partitions 4 --replication-factor 2
done
