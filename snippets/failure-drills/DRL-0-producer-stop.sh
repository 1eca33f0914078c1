# On the client, after the drill: stop the PRODUCERS verifiable producers. SIGTERM closes each
# cleanly: it waits for the records still in flight, then prints what it sent and what was
# acknowledged.
: "${PRODUCERS:=1}" "${OUT:=/tmp/drill-producer.jsonl}"
for j in $(seq 1 "$PRODUCERS"); do kill -TERM "$(cat "$OUT.$j.pid")" 2>/dev/null; done
for j in $(seq 1 "$PRODUCERS"); do
  pid=$(cat "$OUT.$j.pid")
  while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  echo "producer $j: $(grep -c producer_send_success "$OUT.$j") acknowledged"
  grep -F '"name":"tool_data"' "$OUT.$j"
done
