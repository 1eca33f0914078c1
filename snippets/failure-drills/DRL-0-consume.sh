# On the client: read the whole drills topic back with Kafka's verifiable consumer (a new
# consumer group, from the earliest offset) and keep the values this drill wrote
# (VALUE_PREFIX.n), one per line, in OUT. Every acknowledged value must be among them.
: "${BOOTSTRAP:=198.18.4.1:9092,198.18.4.2:9092,198.18.4.3:9092}"
: "${VALUE_PREFIX:=12}" "${OUT:=/tmp/drill-consumed.txt}"
total=$(bin/kafka-get-offsets.sh --bootstrap-server "$BOOTSTRAP" --topic drills --time -1 \
  | awk -F: '{ n += $3 } END { print n }')
timeout 300 bin/kafka-verifiable-consumer.sh --bootstrap-server "$BOOTSTRAP" --topic drills \
  --group-id "drill-check-$VALUE_PREFIX-$(date +%s)" --reset-policy earliest \
  --max-messages "$total" --verbose \
  | grep -F '"name":"record_data"' | grep -o "\"value\":\"$VALUE_PREFIX\.[0-9]*\"" \
  | cut -d'"' -f4 > "$OUT"
echo "records in the topic: $total; written by this drill: $(wc -l < "$OUT")"
