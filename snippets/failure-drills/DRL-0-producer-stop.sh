# On the client, after the drill: stop the verifiable producer. SIGTERM closes it cleanly: it
# waits for the records still in flight, then prints what it sent and what was acknowledged.
: "${OUT:=/tmp/drill-producer.jsonl}"
pid=$(cat "$OUT.pid")
kill -TERM "$pid"
while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
grep -c producer_send_success "$OUT"
grep -F '"name":"tool_data"' "$OUT"
