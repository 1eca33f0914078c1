# 3,000,000 records of 1024 bytes, unthrottled, acks=all - once per cluster.
: "${CLUSTER1:=198.18.1.1:9092,198.18.1.2:9092,198.18.1.3:9092,198.18.1.4:9092}"
: "${CLUSTER2:=198.18.2.1:9092,198.18.2.2:9092,198.18.2.3:9092,198.18.2.4:9092}"
: "${NUM_RECORDS:=3000000}"
for bootstrap in "$CLUSTER1" "$CLUSTER2"; do
  bin/kafka-producer-perf-test.sh --topic __a_demo_topic --throughput -1 \
    --num-records "$NUM_RECORDS" --record-size 1024 \
    --producer-props acks=all bootstrap.servers="$bootstrap"
done
