# On a client, before a drill: PRODUCERS of Kafka's verifiable producers write to the drills
# topic in the background, each at RATE records a second. Producer j writes increasing
# integers with its own prefix (VALUE_PREFIXj.0, VALUE_PREFIXj.1, ...) and prints a JSON line
# to OUT.j for every record the cluster acknowledges (or refuses). The records carry the keys
# 0 to KEYS-1 in turn, so every partition gets its share all the time (records without a key
# go to one partition after another, and a partition that gets none for a while would look
# stalled). The step returns once every producer has had a record acknowledged.
: "${BOOTSTRAP:=198.18.4.1:9092,198.18.4.2:9092,198.18.4.3:9092}"
: "${PRODUCERS:=1}" "${RATE:=300}" "${KEYS:=60}" "${VALUE_PREFIX:=12}"
: "${OUT:=/tmp/drill-producer.jsonl}"
for j in $(seq 1 "$PRODUCERS"); do
  KAFKA_HEAP_OPTS="-Xmx256m" nohup bin/kafka-verifiable-producer.sh \
    --bootstrap-server "$BOOTSTRAP" --topic drills --throughput "$RATE" \
    --repeating-keys "$KEYS" --value-prefix "$VALUE_PREFIX$j" \
    --producer.config /tmp/DRL-0-producer.properties > "$OUT.$j" 2> "$OUT.$j.err" < /dev/null &
  echo $! > "$OUT.$j.pid"
done
for j in $(seq 1 "$PRODUCERS"); do
  for _ in $(seq 1 240); do
    grep -q producer_send_success "$OUT.$j" && break
    kill -0 "$(cat "$OUT.$j.pid")" 2>/dev/null || break
    sleep 0.25
  done
  grep -m1 producer_send_success "$OUT.$j" || { tail -n 20 "$OUT.$j.err"; exit 1; }
done
