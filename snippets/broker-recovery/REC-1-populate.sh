# On a client: the same test topic on both clusters, replicated to all three brokers (so every
# broker holds all of it), filled with 1 KB records until each broker holds about 110 GB.
# A consumer group then reads part of it, so the group has committed offsets to look for later.
: "${DAS:=198.18.3.1:9092,198.18.3.2:9092,198.18.3.3:9092}"
: "${NFS:=198.18.4.1:9092,198.18.4.2:9092,198.18.4.3:9092}"
: "${NUM_RECORDS:=107421875}"     # 110 GB / 1024 bytes
: "${READ_RECORDS:=1000000}"
: "${SEGMENT_BYTES:=1073741824}"  # Kafka's default segment size, 1 GiB
for bootstrap in "$DAS" "$NFS"; do
  bin/kafka-topics.sh --bootstrap-server "$bootstrap" --create --topic rec-test \
    --partitions 100 --replication-factor 3 --config segment.bytes="$SEGMENT_BYTES"
  bin/kafka-producer-perf-test.sh --topic rec-test --throughput -1 --num-records "$NUM_RECORDS" \
    --record-size 1024 --producer-props acks=all bootstrap.servers="$bootstrap" \
    batch.size=1048576 linger.ms=10
  bin/kafka-console-consumer.sh --bootstrap-server "$bootstrap" --topic rec-test \
    --group rec-test-readers --from-beginning --max-messages "$READ_RECORDS" > /dev/null
done
