# On the NFS spare: mount the failed broker's volume where broker 1 had it (its log dir is
# there, as it was) and start Kafka with broker 1's configuration (CONFIG). A spare that was
# broker 1 itself before it failed still has its dead mount there: that goes first.
set -e
: "${VOLUME:=198.18.10.11:/kafka_nfs_b1}" "${MOUNTPOINT:=/mnt/data}" "${OPTIONS=}"
: "${CONFIG:=config/drill-takeover.properties}"
if grep -q " $MOUNTPOINT " /proc/mounts; then umount -l "$MOUNTPOINT"; fi
mkdir -p "$MOUNTPOINT"
mount -t nfs -o "vers=4.1${OPTIONS:+,$OPTIONS}" "$VOLUME" "$MOUNTPOINT"
bin/kafka-server-start.sh -daemon "$CONFIG"
