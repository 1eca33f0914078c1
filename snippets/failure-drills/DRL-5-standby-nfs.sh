# On the NFS standby: mount the failed broker's volume where broker 1 had it (its log dir is
# there, as it was) and start Kafka with broker 1's configuration (CONFIG).
set -e
: "${VOLUME:=198.18.10.11:/kafka_nfs_b1}" "${MOUNTPOINT:=/mnt/data}" "${OPTIONS:=vers=4.1}"
: "${CONFIG:=config/drill-takeover.properties}"
mkdir -p "$MOUNTPOINT"
mount -t nfs -o "$OPTIONS" "$VOLUME" "$MOUNTPOINT"
bin/kafka-server-start.sh -daemon "$CONFIG"
