# After the drill, on broker 1's own host once broker 1's address is back on it: its dead NFS
# mount is removed and the volume mounted again (NFS), and Kafka starts as broker 1.
set -e
: "${VOLUME:=}" "${MOUNTPOINT:=/mnt/data}" "${OPTIONS=}"
if [ -n "$VOLUME" ]; then
  if grep -q " $MOUNTPOINT " /proc/mounts; then umount -l "$MOUNTPOINT"; fi
  mount -t nfs -o "vers=4.1${OPTIONS:+,$OPTIONS}" "$VOLUME" "$MOUNTPOINT"
fi
bin/kafka-server-start.sh -daemon config/server.properties
