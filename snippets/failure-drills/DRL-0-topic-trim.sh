# On a client, before a drill's load: the records earlier loads left in the drills topic are
# deleted (each partition's log now starts at its end), so that the check after this load
# reads back only this load's records, however many drills ran before.
: "${BOOTSTRAP:=198.18.4.1:9092,198.18.4.2:9092,198.18.4.3:9092}" "${OUT:=/tmp/drill-trim.json}"
bin/kafka-get-offsets.sh --bootstrap-server "$BOOTSTRAP" --topic drills --time -1 \
  | awk -F: 'BEGIN { printf "{\"version\":1,\"partitions\":[" }
             { printf "%s{\"topic\":\"%s\",\"partition\":%s,\"offset\":%s}", NR > 1 ? "," : "", $1, $2, $3 }
             END { print "]}" }' > "$OUT"
bin/kafka-delete-records.sh --bootstrap-server "$BOOTSTRAP" --offset-json-file "$OUT"
rm -f "$OUT"
