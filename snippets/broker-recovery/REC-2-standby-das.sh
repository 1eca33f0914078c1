# On the standby broker, after it has taken over broker 1's IP address (DAS cluster).
# Its server.properties is broker 1's: node.id=1, same listeners, log.dirs=/mnt/data-2.
# KRaft will not start a broker on an unformatted, empty disk: format it with the cluster's id,
# which any running broker reports.
set -e          # a step that fails stops the replacement here
: "${BOOTSTRAP:=198.18.3.2:9092}"
CLUSTER_ID=$(bin/kafka-metadata-quorum.sh --bootstrap-server "$BOOTSTRAP" describe --status \
  | awk '$1 == "ClusterId:" {print $2}')
bin/kafka-storage.sh format --cluster-id "$CLUSTER_ID" --config config/server.properties
bin/kafka-server-start.sh -daemon config/server.properties
