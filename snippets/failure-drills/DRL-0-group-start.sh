# On a client, before a drill's load: a consumer group of MEMBERS verifiable consumers reads
# the drills topic while the drill runs, as an application would (a new group, from the end of
# the topic, so it reads only this load). Each member prints a JSON line for every record it
# receives (when it received it, partition, value) and for every rebalance to OUT.<i>. The
# step returns once every member has its share of partitions; the producer starts after it.
: "${BOOTSTRAP:=198.18.4.1:9092,198.18.4.2:9092,198.18.4.3:9092}"
: "${MEMBERS:=2}" "${GROUP:=drill-live}" "${OUT:=/tmp/drill-group.jsonl}" "${PARTITIONS:=6}"
for i in $(seq 1 "$MEMBERS"); do
  KAFKA_HEAP_OPTS="-Xmx256m" nohup bin/kafka-verifiable-consumer.sh \
    --bootstrap-server "$BOOTSTRAP" --topic drills --group-id "$GROUP" \
    --reset-policy latest --verbose > "$OUT.$i" 2> "$OUT.$i.err" < /dev/null &
  echo $! > "$OUT.$i.pid"
done
# Settled: every member's last rebalance event gave it partitions, and together they hold
# every partition (a member that joins later takes partitions from the others).
settled() {
  for i in $(seq 1 "$MEMBERS"); do
    grep -E '"partitions_(assigned|revoked)"' "$OUT.$i" | tail -n 1 \
      | grep -F '"partitions_assigned"' | grep -qF '"partition":' || return 1
  done
  [ "$(held)" -ge "$PARTITIONS" ]
}
held() {
  for i in $(seq 1 "$MEMBERS"); do
    grep -F '"partitions_assigned"' "$OUT.$i" | tail -n 1 | grep -o '"partition":[0-9]*'
  done | sort -u | wc -l
}
for _ in $(seq 1 480); do
  settled && break
  sleep 0.25
done
settled || { echo "group $GROUP did not settle"; tail -n 5 "$OUT".*.err; exit 1; }
echo "group $GROUP: $MEMBERS members hold $(held) partitions"
