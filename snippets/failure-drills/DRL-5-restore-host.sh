# After the drill, on the repaired host, once its address is back: its dead NFS mount is
# removed and the volume mounted again (NFS), and Kafka starts as broker 1.
set -e
: "${VOLUME:=}" "${MOUNTPOINT:=/mnt/data}" "${OPTIONS:=vers=4.1}"
if [ -n "$VOLUME" ]; then
  umount -l "$MOUNTPOINT" 2>/dev/null || true
  mount -t nfs -o "$OPTIONS" "$VOLUME" "$MOUNTPOINT"
fi
bin/kafka-server-start.sh -daemon config/server.properties
