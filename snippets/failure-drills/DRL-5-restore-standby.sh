# After the drill, on the standby: stop Kafka cleanly and give back what it took over (the
# volume on NFS; on DAS its disk is emptied again, a new disk for the next takeover).
: "${MOUNTPOINT:=}" "${LOG_DIR:=/mnt/data-2}"
bin/kafka-server-stop.sh
while pgrep -f 'kafka\.Kafka' > /dev/null; do sleep 0.5; done
if [ -n "$MOUNTPOINT" ]; then umount "$MOUNTPOINT"; else rm -rf "$LOG_DIR" && mkdir -p "$LOG_DIR"; fi
rm -f config/drill-takeover.properties
