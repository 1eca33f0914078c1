# What producers reach on the same cluster at replication factor 3 (unthrottled, acks=all),
# to set beside the ceiling the formula gives for its storage.
: "${BOOTSTRAP:=198.18.4.1:9092,198.18.4.2:9092,198.18.4.3:9092}"
: "${NUM_RECORDS:=3000000}"
bin/kafka-topics.sh --bootstrap-server "$BOOTSTRAP" --create --if-not-exists --topic siz-1 \
  --partitions 12 --replication-factor 3
bin/kafka-producer-perf-test.sh --topic siz-1 --throughput -1 --num-records "$NUM_RECORDS" \
  --record-size 1024 --producer-props acks=all bootstrap.servers="$BOOTSTRAP" \
  batch.size=1048576 linger.ms=1
