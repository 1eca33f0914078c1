# On the NFS standby, when Kafka stopped at once because it could not lock its log directory:
# wait until the lock the failed broker held on the .lock file is released (ONTAP keeps it
# for the dead client until its NFSv4 lease runs out), print when, and start Kafka again.
: "${LOCK:=/mnt/data/kafka/.lock}" "${CONFIG:=config/drill-takeover.properties}"
until flock -n "$LOCK" true; do sleep 0.2; done
echo "lock free at $(date +%s.%N)"
bin/kafka-server-start.sh -daemon "$CONFIG"
