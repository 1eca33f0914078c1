: "${BOOTSTRAP:=198.18.1.1:9092,198.18.1.2:9092,198.18.1.3:9092,198.18.1.4:9092}"
bin/kafka-reassign-partitions.sh --bootstrap-server="$BOOTSTRAP" \
  --reassignment-json-file /tmp/reassignment-file.json --execute
