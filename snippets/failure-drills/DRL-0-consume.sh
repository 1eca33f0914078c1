# On the client: read the drills topic back with Kafka's verifiable consumer (a new consumer
# group, from the earliest offset: this load's first record, DRL-0-topic-trim.sh) and keep the
# values this load's producers wrote (VALUE_PREFIXj.n), one per line, in OUT. Every
# acknowledged value must be among them.
: "${BOOTSTRAP:=198.18.4.1:9092,198.18.4.2:9092,198.18.4.3:9092}"
: "${VALUE_PREFIX:=12}" "${OUT:=/tmp/drill-consumed.txt}"
offsets() { bin/kafka-get-offsets.sh --bootstrap-server "$BOOTSTRAP" --topic drills --time "$1"; }
total=$(( $(offsets -1 | awk -F: '{ n += $3 } END { print n }') \
          - $(offsets -2 | awk -F: '{ n += $3 } END { print n }') ))
timeout 300 bin/kafka-verifiable-consumer.sh --bootstrap-server "$BOOTSTRAP" --topic drills \
  --group-id "drill-check-$VALUE_PREFIX-$(date +%s)" --reset-policy earliest \
  --max-messages "$total" --verbose \
  | grep -F '"name":"record_data"' | grep -o "\"value\":\"${VALUE_PREFIX}[0-9]\.[0-9]*\"" \
  | cut -d'"' -f4 > "$OUT"
echo "records in the topic: $total; written by this load: $(wc -l < "$OUT")"
