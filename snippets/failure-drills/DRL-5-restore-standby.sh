# After the drill, on the standby: stop its Kafka if it runs (a clean shutdown) and give back
# what it took over: the volume on NFS (its mount, dead if the standby was the last to fail);
# on DAS its disk is emptied again. The copy of broker 1's configuration goes too.
: "${MOUNTPOINT:=}" "${LOG_DIR:=/mnt/data-2}"
bin/kafka-server-stop.sh
while pgrep -f 'kafka\.Kafka' > /dev/null; do sleep 0.5; done
if [ -n "$MOUNTPOINT" ]; then
  umount "$MOUNTPOINT" 2>/dev/null || umount -l "$MOUNTPOINT"
else
  rm -rf "$LOG_DIR" && mkdir -p "$LOG_DIR"
fi
rm -f config/drill-takeover.properties
