# On a client: the rest of the volume fills with Kafka's own writes, 1 KB records at RATE a
# second to a second topic (three replicas, so broker 1 stores every record), in the
# background until stopped.
: "${BOOTSTRAP:=198.18.4.1:9092,198.18.4.2:9092,198.18.4.3:9092}" "${RATE:=4000}"
bin/kafka-topics.sh --bootstrap-server "$BOOTSTRAP" --create --if-not-exists \
  --topic drills-fill --partitions 3 --replication-factor 3 > /dev/null
nohup bin/kafka-producer-perf-test.sh --topic drills-fill --num-records 100000000 \
  --record-size 1024 --throughput "$RATE" \
  --producer-props bootstrap.servers="$BOOTSTRAP" acks=1 > /tmp/drill-fill.log 2>&1 < /dev/null &
echo $! > /tmp/drill-fill.pid
