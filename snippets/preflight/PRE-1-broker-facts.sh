# On each broker host (read-only): what the preflight audit checks, one "key: value" per line.
home="${KAFKA_HOME:-/opt/kafka}"
echo "kernel: $(uname -r)"
( . /etc/os-release 2>/dev/null; echo "os: ${ID:-unknown} ${VERSION_ID:-?} ${PRETTY_NAME:+(${PRETTY_NAME})}" )
echo "kafka: $(grep -m1 -o 'Kafka version: [0-9][^ ]*' "$home/logs/server.log" 2>/dev/null | awk '{print $3}')"
echo "log.dirs: $(sed -n 's/^log\.dirs=//p' "$home/config/server.properties")"
echo "session_slots: $(cat /sys/module/nfs/parameters/max_session_slots 2>/dev/null || echo -)"
mount | sed 's/^/mount: /'
awk '!/^[ \t]*(#|$)/ { print "fstab: " $0 }' /etc/fstab
