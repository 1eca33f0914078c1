# On the DAS spare, whose disk is new and empty: format it with the cluster's id, then start
# Kafka with broker 1's configuration (CONFIG: node.id, address, log.dirs of broker 1).
set -e
: "${BOOTSTRAP:=198.18.3.2:9092}" "${CONFIG:=config/drill-takeover.properties}"
CLUSTER_ID=$(bin/kafka-metadata-quorum.sh --bootstrap-server "$BOOTSTRAP" describe --status \
  | awk '$1 == "ClusterId:" {print $2}')
bin/kafka-storage.sh format --cluster-id "$CLUSTER_ID" --config "$CONFIG"
bin/kafka-server-start.sh -daemon "$CONFIG"
