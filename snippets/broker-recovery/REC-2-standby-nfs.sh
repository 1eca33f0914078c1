# On the standby broker, after it has taken over broker 1's IP address (NFS cluster).
# Mount broker 1's volume where broker 1 had it; its log dir (and meta.properties) is there.
set -e          # a step that fails stops the replacement here
: "${VOLUME:=198.18.10.11:/kafka_nfs_b1}"
mkdir -p /mnt/data
mount -t nfs -o vers=4.1 "$VOLUME" /mnt/data
bin/kafka-server-start.sh -daemon config/server.properties
