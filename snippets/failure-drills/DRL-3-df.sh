# On the NFS broker, once Kafka has stopped: the volume as the client sees it.
: "${MOUNTPOINT:=/mnt/data}"
df -h "$MOUNTPOINT"
