# Lab only, on an NFS broker, before the drills (and again after them without it), and on
# broker 1 around DRL-7 (soft, then hard again): Kafka stops, the broker's volume is mounted
# again over NFSv4.1 with OPTIONS as well, Kafka starts. x-lab-nopassthrough makes the lab's
# NFS client layer serve every read and write itself: with FUSE passthrough, data would
# bypass the stall of DRL-1 and DRL-7 and the size limit of DRL-3.
set -e
: "${VOLUME:=198.18.10.11:/kafka_nfs_b1}" "${MOUNTPOINT:=/mnt/data}"
: "${OPTIONS=x-lab-nopassthrough}"
bin/kafka-server-stop.sh
while pgrep -f 'kafka\.Kafka' > /dev/null; do sleep 0.5; done
umount "$MOUNTPOINT"
mount -t nfs -o "vers=4.1${OPTIONS:+,$OPTIONS}" "$VOLUME" "$MOUNTPOINT"
nfsstat -m
bin/kafka-server-start.sh -daemon config/server.properties
