# On the client, after the drill's load: once the group has read every record the producer
# got acknowledged (ACKED, values VALUE_PREFIXj.n of its producers j), or after WAIT seconds,
# stop its members.
# SIGTERM lets each leave the group cleanly.
: "${MEMBERS:=2}" "${OUT:=/tmp/drill-group.jsonl}" "${VALUE_PREFIX:=12}" "${ACKED:=0}"
: "${WAIT:=120}"
read_so_far() {
  cat "$OUT".[0-9]* 2>/dev/null | grep -F '"record_data"' \
    | grep -o "\"value\":\"${VALUE_PREFIX}[0-9]\.[0-9]*\"" | sort -u | wc -l
}
end=$(( $(date +%s) + WAIT ))
while [ "$(read_so_far)" -lt "$ACKED" ] && [ "$(date +%s)" -lt "$end" ]; do sleep 1; done
for i in $(seq 1 "$MEMBERS"); do kill -TERM "$(cat "$OUT.$i.pid")" 2>/dev/null; done
for i in $(seq 1 "$MEMBERS"); do
  pid=$(cat "$OUT.$i.pid")
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$pid" 2>/dev/null || true
done
echo "the group read $(read_so_far) of the $ACKED acknowledged records"
