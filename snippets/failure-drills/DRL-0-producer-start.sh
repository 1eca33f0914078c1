# On a client, before a drill: Kafka's verifiable producer writes increasing integers
# (VALUE_PREFIX.0, VALUE_PREFIX.1, ...) to the drills topic at RATE records a second, in the
# background, and prints a JSON line to OUT for every record the cluster acknowledges (or
# refuses). The records carry the keys 0 to KEYS-1 in turn, so every partition gets its share
# all the time (records without a key go to one partition after another, and a partition
# that gets none for a while would look stalled). The step returns once the first record is
# acknowledged.
: "${BOOTSTRAP:=198.18.4.1:9092,198.18.4.2:9092,198.18.4.3:9092}"
: "${RATE:=300}" "${KEYS:=60}" "${VALUE_PREFIX:=12}" "${OUT:=/tmp/drill-producer.jsonl}"
nohup bin/kafka-verifiable-producer.sh --bootstrap-server "$BOOTSTRAP" --topic drills \
  --throughput "$RATE" --repeating-keys "$KEYS" --value-prefix "$VALUE_PREFIX" \
  --producer.config /tmp/DRL-0-producer.properties > "$OUT" 2> "$OUT.err" < /dev/null &
echo $! > "$OUT.pid"
for i in $(seq 1 240); do
  grep -q producer_send_success "$OUT" && break
  kill -0 "$(cat "$OUT.pid")" 2>/dev/null || break
  sleep 0.25
done
grep -m1 producer_send_success "$OUT" || { tail -n 20 "$OUT.err"; exit 1; }
